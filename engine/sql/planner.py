"""Statement -> the function that runs it and whether it writes. A table of cases, one small handler
module per family (``tesseradb.sql.statements``): a new statement is one entry here."""
from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tesseradb.grammar import ast

from tesseradb.sql.statements import backup, ddl, insert, query, rebuild, session, show_models
from tesseradb.sql.statements import chunk_listing, create_from, evaluate, modify_column, update_delete
from tesseradb.sql.statements import set as set_statements
from tesseradb.sql.statements import show, views

Handler = Callable[..., Any]


def _on_first_use(module: str, name: str) -> Handler:
    """A handler whose module (and what it imports: pyarrow for LOAD DATA) loads when first run,
    so that start-up and plain SQL do not pay for it."""
    def run(*args: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args)
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
    ast.CreateTable: Entry(ddl.create_table, WRITES, "CREATE TABLE"),
    ast.DropTable: Entry(ddl.drop_table, WRITES, "DROP TABLE"),
    ast.CreateIndex: Entry(ddl.create_index, WRITES, "CREATE INDEX"),
    ast.DropIndex: Entry(ddl.drop_index, WRITES, "DROP INDEX"),
    ast.AlterAddColumn: Entry(ddl.alter_add_column, WRITES, "ADD COLUMN"),
    ast.AlterDropColumn: Entry(ddl.alter_drop_column, WRITES, "DROP COLUMN"),
    ast.AlterRebuild: Entry(rebuild.alter_rebuild, rebuild.writes, "REBUILD EMBEDDINGS"),
    ast.TableCommand: Entry(ddl.table_command, _table_command_writes, "SHOW CREATE TABLE"),
    ast.ShowTables: Entry(ddl.show_tables, READS, "SHOW TABLES"),
    ast.ShowWarnings: Entry(session.show_warnings, READS, "SHOW WARNINGS"),
    ast.ShowModels: Entry(show_models.show_models, READS, "SHOW MODELS"),
    ast.Transaction: Entry(session.transaction, READS, "ROLLBACK"),
    ast.LoadData: Entry(_on_first_use("tesseradb.sql.statements.load_data", "load_data"), WRITES, "LOAD DATA"),
    ast.Explain: Entry(query.explain, READS, "EXPLAIN"),
    ast.ShowChunks: Entry(chunk_listing.show_chunks, READS, "SHOW CHUNKS"),
    ast.CallChunks: Entry(chunk_listing.call_chunks, READS, "CALL CHUNKS"),
    ast.CallEvaluate: Entry(evaluate.call_evaluate, READS, "CALL EVALUATE"),
    ast.AlterModifyColumn: Entry(modify_column.alter_modify_column, WRITES, "MODIFY COLUMN"),
    # MySQL session and introspection (issue 14)
    ast.SetStatement: Entry(set_statements.set_statement, READS, "SET NAMES"),
    ast.UseDatabase: Entry(set_statements.use_database, READS, "USE main"),
    ast.ShowSession: Entry(show.show_session, READS, "SHOW TABLE STATUS"),
    ast.ShowColumns: Entry(show.show_columns, READS, "SHOW FULL COLUMNS"),
    ast.CreateView: Entry(views.create_view, WRITES, "CREATE OR REPLACE VIEW"),
    ast.CreateTableAs: Entry(create_from.create_table_as, WRITES, "CREATE TABLE ... AS SELECT"),    # issue 22
    ast.CreateTableLike: Entry(create_from.create_table_like, WRITES, "CREATE TABLE ... LIKE"),
    ast.DropView: Entry(views.drop_view, WRITES, "DROP VIEW"),
    ast.LockTables: Entry(set_statements.lock_tables, READS, "LOCK TABLES"),
    # outside the statement transaction: it copies committed data, saving the indexes first
    ast.Backup: Entry(backup.backup, READS, "BACKUP TO"),
}

# every query also goes through the SELECT/DML passes and the session's bookkeeping (executor.run)
QUERY_HANDLERS: dict[str, Entry] = {
    "select": Entry(query.select, READS, "SELECT"),
    "insert": Entry(insert.insert, WRITES, "INSERT"),
    "update": Entry(update_delete.update, WRITES, "UPDATE"),
    "delete": Entry(update_delete.delete, WRITES, "DELETE"),
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
