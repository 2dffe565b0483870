"""Statement -> the function that runs it, whether it writes and whether it commits. A table of cases,
one small handler module per family (``tesseradb.sql.statements``): a new statement is one entry here.

``commits`` is MySQL's implicit commit (issue 22): the statement commits the open transaction before
it runs and commits itself when it ends (DDL, TRUNCATE, SET autocommit = 1), so a ROLLBACK after
CREATE TABLE keeps the table and the rows inserted before it. The executor's statement bracket and
the connection's autocommit read it here, nowhere else (docs/architecture.md#transactions)."""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tesseradb.grammar import ast

Handler = Callable[..., Any]


def _h(spec: str) -> Handler:
    """``module.function`` of tesseradb.sql.statements, loaded when first run with what it imports
    (pyarrow for LOAD DATA, the chunkers for DDL): start-up and plain SQL do not pay for it."""
    module, name = spec.split(".")
    found: list[Handler] = []

    def run(*args: Any) -> Any:
        if not found:
            found.append(getattr(importlib.import_module(f"tesseradb.sql.statements.{module}"), name))
        return found[0](*args)
    run.spec = spec         # type: ignore[attr-defined]   (tests/docs/test_sql_docs.py resolves each one)
    return run


# Statements that change the database run inside a transaction and a savepoint (the executor).
# OPTIMIZE only rebuilds the derived FAISS indexes: it commits first (like MySQL's implicit commit)
# and must see committed data only, so it runs outside the statement transaction.
READ_ONLY_COMMANDS = {"describe", "show_create", "show_index", "check", "optimize"}


@dataclass(frozen=True)
class Entry:
    handler: Handler
    writes: bool | Callable[[Any], bool] = False     # or a function of the statement
    doc: str = ""                                    # how docs/ spell it (the docs test looks for it)
    commits: bool | Callable[[Any], bool] = False    # MySQL's implicit commit (or a function of the statement)


WRITES, READS = True, False
COMMITS = True


def _table_command_writes(stmt: ast.TableCommand) -> bool:
    return stmt.verb not in READ_ONLY_COMMANDS


def _table_command_commits(stmt: ast.TableCommand) -> bool:
    return stmt.verb == "truncate"


# keyed by the node's class name (grammar/ast.py, grammar/nodes.py): naming a class here would load
# every statement node at start-up
HANDLERS: dict[str, Entry] = {
    "CreateTable": Entry(_h("ddl.create_table"), WRITES, "CREATE TABLE", commits=COMMITS),
    "DropTable": Entry(_h("ddl.drop_table"), WRITES, "DROP TABLE", commits=COMMITS),
    "CreateIndex": Entry(_h("ddl.create_index"), WRITES, "CREATE INDEX", commits=COMMITS),
    "DropIndex": Entry(_h("ddl.drop_index"), WRITES, "DROP INDEX", commits=COMMITS),
    "AlterAddColumn": Entry(_h("ddl.alter_add_column"), WRITES, "ADD COLUMN", commits=COMMITS),
    "AlterDropColumn": Entry(_h("ddl.alter_drop_column"), WRITES, "DROP COLUMN", commits=COMMITS),
    "AlterRebuild": Entry(_h("rebuild.alter_rebuild"), _h("rebuild.writes"), "REBUILD EMBEDDINGS"),
    "TableCommand": Entry(_h("ddl.table_command"), _table_command_writes, "SHOW CREATE TABLE",
                          commits=_table_command_commits),
    "ShowTables": Entry(_h("ddl.show_tables"), READS, "SHOW TABLES"),
    "ShowWarnings": Entry(_h("session.show_warnings"), READS, "SHOW WARNINGS"),
    "ShowModels": Entry(_h("show_models.show_models"), READS, "SHOW MODELS"),
    "Transaction": Entry(_h("session.transaction"), READS, "ROLLBACK"),
    "LoadData": Entry(_h("load_data.load_data"), WRITES, "LOAD DATA"),
    "Explain": Entry(_h("query.explain"), READS, "EXPLAIN"),
    "ShowChunks": Entry(_h("chunk_listing.show_chunks"), READS, "SHOW CHUNKS"),
    "CallChunks": Entry(_h("chunk_listing.call_chunks"), READS, "CALL CHUNKS"),
    "CallEvaluate": Entry(_h("evaluate.call_evaluate"), READS, "CALL EVALUATE"),
    "AlterModifyColumn": Entry(_h("modify_column.alter_modify_column"), WRITES, "MODIFY COLUMN", commits=COMMITS),
    # MySQL session and introspection (issue 14)
    "SetStatement": Entry(_h("set.set_statement"), READS, "SET NAMES", commits=_h("set.commits")),
    "UseDatabase": Entry(_h("set.use_database"), READS, "USE main"),
    "ShowSession": Entry(_h("show.show_session"), READS, "SHOW TABLE STATUS"),
    "ShowColumns": Entry(_h("show.show_columns"), READS, "SHOW FULL COLUMNS"),
    "CreateView": Entry(_h("views.create_view"), WRITES, "CREATE OR REPLACE VIEW", commits=COMMITS),
    "CreateTableAs": Entry(_h("create_from.create_table_as"), WRITES, "CREATE TABLE ... AS SELECT", commits=COMMITS),    # issue 22
    "CreateTableLike": Entry(_h("create_from.create_table_like"), WRITES, "CREATE TABLE ... LIKE", commits=COMMITS),
    "DropView": Entry(_h("views.drop_view"), WRITES, "DROP VIEW", commits=COMMITS),
    "LockTables": Entry(_h("set.lock_tables"), READS, "LOCK TABLES"),
    # outside the statement transaction: it copies committed data, saving the indexes first
    "Backup": Entry(_h("backup.backup"), READS, "BACKUP TO"),
    # Manticore's conversational search (docs/chat.md). CALL CHAT reads: the model runs with no write
    # lock held, and the conversation's messages are written after it, in a short transaction of their own
    "CreateChatModel": Entry(_h("chat_models.create_chat_model"), WRITES, "CREATE CHAT MODEL", commits=COMMITS),
    "ShowChatModels": Entry(_h("chat_models.show_chat_models"), READS, "SHOW CHAT MODELS"),
    "DescribeChatModel": Entry(_h("chat_models.describe_chat_model"), READS, "DESCRIBE CHAT MODEL"),
    "DropChatModel": Entry(_h("chat_models.drop_chat_model"), WRITES, "DROP CHAT MODEL", commits=COMMITS),
    "CallChat": Entry(_h("chat.call_chat"), READS, "CALL CHAT"),
}

# every query also goes through the SELECT/DML passes and the session's bookkeeping (executor.run)
QUERY_HANDLERS: dict[str, Entry] = {
    "select": Entry(_h("query.select"), READS, "SELECT"),
    "insert": Entry(_h("insert.insert"), WRITES, "INSERT"),
    "update": Entry(_h("update_delete.update"), WRITES, "UPDATE"),
    "delete": Entry(_h("update_delete.delete"), WRITES, "DELETE"),
}


def entry_for(stmt: ast.Statement) -> Entry:
    if isinstance(stmt, ast.Query):
        return QUERY_HANDLERS[stmt.kind]
    return HANDLERS[type(stmt).__name__]


def handler_for(stmt: ast.Statement) -> Handler:
    return entry_for(stmt).handler


def commits(stmt: ast.Statement) -> bool:
    """MySQL's implicit commit: the statement ends the open transaction before it runs and commits
    itself when it ends (its entry's ``commits``)."""
    flag = entry_for(stmt).commits
    return flag(stmt) if callable(flag) else flag


def writes(stmt: ast.Statement) -> bool:
    flag = entry_for(stmt).writes
    return flag(stmt) if callable(flag) else flag
