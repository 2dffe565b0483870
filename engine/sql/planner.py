"""Statement -> the function that runs it and whether it writes. A table of cases, one small handler
module per family (``tesseradb.sql.statements``): a new statement is one entry here."""
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


WRITES, READS = True, False


def _table_command_writes(stmt: ast.TableCommand) -> bool:
    return stmt.verb not in READ_ONLY_COMMANDS


HANDLERS: dict[type, Entry] = {
    ast.CreateTable: Entry(_h("ddl.create_table"), WRITES, "CREATE TABLE"),
    ast.DropTable: Entry(_h("ddl.drop_table"), WRITES, "DROP TABLE"),
    ast.CreateIndex: Entry(_h("ddl.create_index"), WRITES, "CREATE INDEX"),
    ast.DropIndex: Entry(_h("ddl.drop_index"), WRITES, "DROP INDEX"),
    ast.AlterAddColumn: Entry(_h("ddl.alter_add_column"), WRITES, "ADD COLUMN"),
    ast.AlterDropColumn: Entry(_h("ddl.alter_drop_column"), WRITES, "DROP COLUMN"),
    ast.AlterRebuild: Entry(_h("rebuild.alter_rebuild"), _h("rebuild.writes"), "REBUILD EMBEDDINGS"),
    ast.TableCommand: Entry(_h("ddl.table_command"), _table_command_writes, "SHOW CREATE TABLE"),
    ast.ShowTables: Entry(_h("ddl.show_tables"), READS, "SHOW TABLES"),
    ast.ShowWarnings: Entry(_h("session.show_warnings"), READS, "SHOW WARNINGS"),
    ast.ShowModels: Entry(_h("show_models.show_models"), READS, "SHOW MODELS"),
    ast.Transaction: Entry(_h("session.transaction"), READS, "ROLLBACK"),
    ast.LoadData: Entry(_h("load_data.load_data"), WRITES, "LOAD DATA"),
    ast.Explain: Entry(_h("query.explain"), READS, "EXPLAIN"),
    ast.ShowChunks: Entry(_h("chunk_listing.show_chunks"), READS, "SHOW CHUNKS"),
    ast.CallChunks: Entry(_h("chunk_listing.call_chunks"), READS, "CALL CHUNKS"),
    ast.CallEvaluate: Entry(_h("evaluate.call_evaluate"), READS, "CALL EVALUATE"),
    ast.AlterModifyColumn: Entry(_h("modify_column.alter_modify_column"), WRITES, "MODIFY COLUMN"),
    # MySQL session and introspection (issue 14)
    ast.SetStatement: Entry(_h("set.set_statement"), READS, "SET NAMES"),
    ast.UseDatabase: Entry(_h("set.use_database"), READS, "USE main"),
    ast.ShowSession: Entry(_h("show.show_session"), READS, "SHOW TABLE STATUS"),
    ast.ShowColumns: Entry(_h("show.show_columns"), READS, "SHOW FULL COLUMNS"),
    ast.CreateView: Entry(_h("views.create_view"), WRITES, "CREATE OR REPLACE VIEW"),
    ast.CreateTableAs: Entry(_h("create_from.create_table_as"), WRITES, "CREATE TABLE ... AS SELECT"),    # issue 22
    ast.CreateTableLike: Entry(_h("create_from.create_table_like"), WRITES, "CREATE TABLE ... LIKE"),
    ast.DropView: Entry(_h("views.drop_view"), WRITES, "DROP VIEW"),
    ast.LockTables: Entry(_h("set.lock_tables"), READS, "LOCK TABLES"),
    # outside the statement transaction: it copies committed data, saving the indexes first
    ast.Backup: Entry(_h("backup.backup"), READS, "BACKUP TO"),
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
    return HANDLERS[type(stmt)]


def handler_for(stmt: ast.Statement) -> Handler:
    return entry_for(stmt).handler


# DDL commits the open transaction before it runs and commits itself when it ends (MySQL's implicit
# commit, issue 22): a ROLLBACK after CREATE TABLE keeps the table, and the rows inserted before it.
IMPLICIT_COMMIT = (ast.CreateTable, ast.CreateTableAs, ast.CreateTableLike, ast.DropTable, ast.CreateIndex,
                   ast.DropIndex, ast.AlterAddColumn, ast.AlterDropColumn, ast.AlterModifyColumn, ast.CreateView,
                   ast.DropView)


def commits(stmt: ast.Statement) -> bool:
    return isinstance(stmt, IMPLICIT_COMMIT) or (isinstance(stmt, ast.TableCommand) and stmt.verb == "truncate")


def writes(stmt: ast.Statement) -> bool:
    flag = entry_for(stmt).writes
    return flag(stmt) if callable(flag) else flag
