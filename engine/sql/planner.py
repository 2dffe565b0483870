"""Statement -> the function that runs it and whether it writes. A table of cases, one small handler
module per family (``tesseradb.sql.statements``): a new statement is one entry here."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tesseradb.grammar import ast

from tesseradb.sql.statements import ddl, insert, load_data, query, rebuild, session, show_models
from tesseradb.sql.statements import chunk_listing, modify_column, update_delete
from tesseradb.sql.statements import set as set_statements
from tesseradb.sql.statements import show, views

Handler = Callable[..., Any]

# Statements that change the database run inside a transaction and a savepoint (the executor).
# OPTIMIZE only rebuilds the derived FAISS indexes: it commits first (like MySQL's implicit commit)
# and must see committed data only, so it runs outside the statement transaction.
READ_ONLY_COMMANDS = {"describe", "show_create", "show_index", "check", "optimize"}


@dataclass(frozen=True)
class Entry:
    handler: Handler
    writes: bool | Callable[[Any], bool] = False     # or a function of the statement


WRITES, READS = True, False

HANDLERS: dict[type, Entry] = {
    ast.CreateTable: Entry(ddl.create_table, WRITES),
    ast.DropTable: Entry(ddl.drop_table, WRITES),
    ast.CreateIndex: Entry(ddl.create_index, WRITES),
    ast.DropIndex: Entry(ddl.drop_index, WRITES),
    ast.AlterAddColumn: Entry(ddl.alter_add_column, WRITES),
    ast.AlterDropColumn: Entry(ddl.alter_drop_column, WRITES),
    ast.AlterRebuild: Entry(rebuild.alter_rebuild, rebuild.writes),
    ast.TableCommand: Entry(ddl.table_command, lambda stmt: stmt.verb not in READ_ONLY_COMMANDS),
    ast.ShowTables: Entry(ddl.show_tables, READS),
    ast.ShowWarnings: Entry(session.show_warnings, READS),
    ast.ShowModels: Entry(show_models.show_models, READS),
    ast.Transaction: Entry(session.transaction, READS),
    ast.LoadData: Entry(load_data.load_data, WRITES),
    ast.Explain: Entry(query.explain, READS),
    ast.ShowChunks: Entry(chunk_listing.show_chunks, READS),
    ast.CallChunks: Entry(chunk_listing.call_chunks, READS),
    ast.AlterModifyColumn: Entry(modify_column.alter_modify_column, WRITES),
    # MySQL session and introspection (issue 14)
    ast.SetStatement: Entry(set_statements.set_statement, READS),
    ast.UseDatabase: Entry(set_statements.use_database, READS),
    ast.ShowSession: Entry(show.show_session, READS),
    ast.ShowColumns: Entry(show.show_columns, READS),
    ast.CreateView: Entry(views.create_view, WRITES),
    ast.DropView: Entry(views.drop_view, WRITES),
    ast.LockTables: Entry(set_statements.lock_tables, READS),
}

# every query also goes through the SELECT/DML passes and the session's bookkeeping (executor.run)
QUERY_HANDLERS: dict[str, Entry] = {
    "select": Entry(query.select, READS),
    "insert": Entry(insert.insert, WRITES),
    "update": Entry(update_delete.update, WRITES),
    "delete": Entry(update_delete.delete, WRITES),
}


def entry_for(stmt: ast.Statement) -> Entry:
    if isinstance(stmt, ast.Query):
        return QUERY_HANDLERS[stmt.kind]
    return HANDLERS[type(stmt)]


def handler_for(stmt: ast.Statement) -> Handler:
    return entry_for(stmt).handler


def writes(stmt: ast.Statement) -> bool:
    flag = entry_for(stmt).writes
    return flag(stmt) if callable(flag) else flag
