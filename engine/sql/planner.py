"""Statement -> the function that runs it. A table of cases, one small handler module per family."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tesseradb.grammar import ast

from tesseradb.sql import ddl, dml, load_data, models, query, rebuild, session
from tesseradb.sql import chunk_listing, create_from, modify_column
from tesseradb.sql import introspection, query_session, variables, views

Handler = Callable[..., Any]

HANDLERS: dict[type, Handler] = {
    ast.CreateTable: ddl.create_table,
    ast.DropTable: ddl.drop_table,
    ast.CreateIndex: ddl.create_index,
    ast.DropIndex: ddl.drop_index,
    ast.AlterAddColumn: ddl.alter_add_column,
    ast.AlterDropColumn: ddl.alter_drop_column,
    ast.AlterRebuild: rebuild.alter_rebuild,
    ast.TableCommand: ddl.table_command,
    ast.ShowTables: ddl.show_tables,
    ast.ShowWarnings: session.show_warnings,
    ast.ShowModels: models.show_models,
    ast.Transaction: session.transaction,
    ast.LoadData: load_data.load_data,
    ast.Explain: query.explain,
    ast.ShowChunks: chunk_listing.show_chunks,
    ast.CallChunks: chunk_listing.call_chunks,
    ast.AlterModifyColumn: modify_column.alter_modify_column,
    # MySQL session and introspection (issue 14)
    ast.SetStatement: variables.set_statement,
    ast.UseDatabase: variables.use_database,
    ast.ShowSession: introspection.show_session,
    ast.ShowColumns: introspection.show_columns,
    ast.CreateView: views.create_view,
    ast.CreateTableAs: create_from.create_table_as,          # issue 22
    ast.CreateTableLike: create_from.create_table_like,
    ast.DropView: views.drop_view,
    ast.LockTables: variables.lock_tables,
}

QUERY_HANDLERS: dict[str, Handler] = {
    "select": query.select,
    "insert": dml.insert,
    "update": dml.update,
    "delete": dml.delete,
}
# every query sees the session's @variables, information_schema, and sets ROW_COUNT() & co (issue 14)
QUERY_HANDLERS = {kind: query_session.with_session(h) for kind, h in QUERY_HANDLERS.items()}

# Statements that change the database: they run inside a transaction and a savepoint.
# OPTIMIZE only rebuilds the derived FAISS indexes: it commits first (like MySQL's implicit commit)
# and must see committed data only, so it runs outside the statement transaction.
READ_ONLY_COMMANDS = {"describe", "show_create", "show_index", "check", "optimize"}


def handler_for(stmt: ast.Statement) -> Handler:
    if isinstance(stmt, ast.Query):
        return QUERY_HANDLERS[stmt.kind]
    return HANDLERS[type(stmt)]


# DDL commits the open transaction before it runs and commits itself when it ends (MySQL's implicit
# commit, issue 22): a ROLLBACK after CREATE TABLE keeps the table, and the rows inserted before it.
IMPLICIT_COMMIT = (ast.CreateTable, ast.CreateTableAs, ast.CreateTableLike, ast.DropTable, ast.CreateIndex, ast.DropIndex, ast.AlterAddColumn,
                   ast.AlterDropColumn, ast.AlterModifyColumn, ast.CreateView, ast.DropView)


def commits(stmt: ast.Statement) -> bool:
    return isinstance(stmt, IMPLICIT_COMMIT) or (isinstance(stmt, ast.TableCommand) and stmt.verb == "truncate")


def writes(stmt: ast.Statement) -> bool:
    if isinstance(stmt, ast.Query):
        return stmt.kind != "select"
    if isinstance(stmt, ast.TableCommand):
        return stmt.verb not in READ_ONLY_COMMANDS
    if isinstance(stmt, ast.AlterRebuild):
        return rebuild.writes(stmt)
    return isinstance(stmt, (ast.CreateTable, ast.CreateTableAs, ast.CreateTableLike, ast.DropTable,
                             ast.CreateIndex, ast.DropIndex,
                             ast.AlterAddColumn, ast.AlterDropColumn, ast.AlterModifyColumn,
                             ast.LoadData, ast.CreateView, ast.DropView))
