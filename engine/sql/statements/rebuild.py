"""Manticore's ALTER TABLE t REBUILD KNN and ALTER TABLE t REBUILD EMBEDDINGS [column].

- REBUILD KNN builds every vector index of the table anew from the vectors SQLite holds (the FAISS
  files are derived caches). Like OPTIMIZE it commits an open transaction first and reads committed
  data only, so it runs outside the statement transaction.
- REBUILD EMBEDDINGS embeds every row again from its ``from`` columns with the column's saved model
  and chunk settings (every row: like Manticore, the origin of a stored vector is not remembered, so
  rows inserted with explicit vectors or ``()`` get computed ones). It is one write statement: one
  transaction and savepoint, progress through ``on_progress``, and an interrupt (or the statement
  timeout) stops it and rolls it back. Without a column: every model column of the table.
  Manticore refuses float_vector_array here ("not supported for it yet, use REPLACE"); we rebuild it.
"""
from __future__ import annotations

from tesseradb.catalog.tables import Table
from tesseradb import errors
from tesseradb.errors import NoSuchColumn, UserError
from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.sql.write import recompute_all
from tesseradb.storage.catalog import quote
from tesseradb.catalog.vector_columns import VectorSpec


def _model_columns(table: Table, column: str | None) -> list[VectorSpec]:
    """The model columns to embed again, with Manticore's errors for a column that has none."""
    if column is None:
        specs = table.model_columns()
        if not specs:
            raise UserError(f"no embeddings model specified for any attribute of table '{table.name}'",
                            errors.SqlSyntaxError)
        return specs
    col = table.column(column)
    if col is None:
        raise UserError(f"attribute '{column}' not found", NoSuchColumn)
    spec = table.vectors.get(col.name.lower())
    if spec is None:
        raise UserError(f"attribute '{col.name}' is not indexed float_vector", errors.SqlSyntaxError)
    if not spec.model_name:
        raise UserError(f"no embeddings model specified for attribute '{col.name}'", errors.SqlSyntaxError)
    return [spec]


def rebuild_embeddings(db: Database, table: Table, column: str | None) -> Result:
    specs = _model_columns(table, column)
    count = db.store.one(f"SELECT COUNT(*) FROM {quote(table.name)}")[0]
    recompute_all(db, table, specs)
    return Result(rowcount=int(count))


def rebuild_knn(db: Database, table: Table) -> Result:
    db.commit()         # implicit commit, as OPTIMIZE: the rebuilt index holds committed data only
    for layout in table.layouts():
        index = db.column_index(table, layout.column)
        index.rebuild()
        index.save()
    return Result(rowcount=0)


def alter_rebuild(db: Database, stmt: ast.AlterRebuild, params=None) -> Result:
    table = db.table(stmt.table)
    if stmt.target == "knn":
        if stmt.column is not None:
            raise UserError(f"syntax error near '{stmt.column}': REBUILD KNN takes no column", errors.SqlSyntaxError)
        return rebuild_knn(db, table)
    return rebuild_embeddings(db, table, stmt.column)


def writes(stmt: ast.AlterRebuild) -> bool:
    """REBUILD EMBEDDINGS writes rows (one transaction); REBUILD KNN only rebuilds derived indexes."""
    return stmt.target == "embeddings"
