"""ALTER TABLE t MODIFY [COLUMN] col <type> <options>: change a model column's chunking in place.

The new definition is checked exactly as CREATE TABLE checks it (the seven chunk rules and the
rest, ``tesseradb.catalog.vector_columns``). Then, in the statement's one transaction: the catalog takes
the new definition, every document is cut again and embedded through the write path, where chunk
reuse (``tesseradb.embed.reuse``) takes every chunk text the same model already embedded from the
stored vectors (the column's own old chunks included: they are still there when a document's new
chunks are looked up) and runs the model only on texts not seen before. The column's vector index
is rebuilt from the new chunks when the transaction commits. Progress is reported as for any
embedding; an interrupt (or the statement timeout) rolls everything back.

A new model re-embeds everything (chunk keys include the model's fingerprint). Rows whose vectors
were supplied explicitly are cut from their text like the others (as REBUILD EMBEDDINGS does).
"""
from __future__ import annotations

import json

from tesseradb.grammar import ast
from tesseradb.storage import catalog
from tesseradb.storage.catalog import quote
from tesseradb.storage.chunk_table import ensure_key_column

from tesseradb import errors
from tesseradb.catalog import fulltext
from tesseradb.catalog.tables import ID_COLUMN, Column, Table, column_from_def
from tesseradb.embed.reuse import chunk_key
from tesseradb.embed.rows import source_text
from tesseradb.errors import UserError
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.sql.statements.ddl import validate
from tesseradb.sql.write import recompute_all
from tesseradb.catalog.vector_columns import VectorSpec


def _new_spec(db: Database, table: Table, old: Column, new: Column) -> VectorSpec:
    columns = [new if c is old else c for c in table.columns if c is not ID_COLUMN]
    specs = validate(db, table.name, [(c.name, c.type, dict(c.options)) for c in columns])
    spec = {k.lower(): v for k, v in specs.items()}.get(new.name.lower())
    if new.type != old.type:
        raise UserError(f"MODIFY COLUMN cannot change the type of '{old.name}' ({old.type}); it changes a "
                        "model column's chunking and model options", errors.NotSupportedError)
    if spec is None or not spec.model_name or old.name.lower() not in table.vectors \
            or not table.vectors[old.name.lower()].model_name:
        raise UserError(f"MODIFY COLUMN re-chunks a model-backed KNN column (knn_type and model_name, before "
                        f"and after); '{old.name}' is not one. Use DROP COLUMN and ADD COLUMN",
                        errors.NotSupportedError)
    return spec


def _keys_for_old_rows(db: Database, table: Table, spec: VectorSpec) -> None:
    """Chunks written before chunk keys existed get theirs now, so that their vectors are reused."""
    layout = table.layout(spec.column)
    ensure_key_column(db.store, layout)
    chunks = quote(layout.chunks)
    if not db.store.one(f"SELECT 1 FROM {chunks} WHERE text_key IS NULL AND start IS NOT NULL LIMIT 1"):
        return
    counts = dict(db.store.execute(f"SELECT doc_id, COUNT(*) FROM {chunks} GROUP BY doc_id"))
    rows = list(db.store.execute(f"SELECT chunk_id, doc_id, start, \"end\" FROM {chunks} "
                                 "WHERE text_key IS NULL AND start IS NOT NULL"))
    names = list(dict.fromkeys(c.lower() for c in spec.from_columns))
    cols = ", ".join(quote(table.column(n).name) for n in names)
    docs = sorted({r[1] for r in rows})
    texts = {}
    for start in range(0, len(docs), 2000):
        part = json.dumps(docs[start:start + 2000])
        for row in db.store.execute(f"SELECT id, {cols} FROM {quote(table.name)} WHERE id IN "
                                    "(SELECT value FROM json_each(?))", (part,)):
            texts[row[0]] = source_text(spec, dict(zip(names, row[1:])))
    averaged = spec.chunk_strategy == "mean"        # a mean vector of several chunks is no text's embedding
    keys = [(chunk_key(spec.model_fingerprint, texts[doc][s:e]), chunk_id) for chunk_id, doc, s, e in rows
            if doc in texts and not (averaged and counts[doc] > 1)]
    db.store.executemany(f"UPDATE {chunks} SET text_key = ? WHERE chunk_id = ?", keys)


def alter_modify_column(db: Database, stmt: ast.AlterModifyColumn, params=None) -> Result:
    table = db.table(stmt.table)
    old = table.column(stmt.column.name)
    if old is None:
        raise errors.unknown_column(stmt.column.name, f"table {table.name}")
    if old is table.columns[0]:
        raise UserError("column 'id' is the implicit bigint primary key and cannot be modified", errors.SqlSyntaxError)
    new = column_from_def(stmt.column)
    new = Column(old.name, new.type, new.type_text, new.options)
    spec = _new_spec(db, table, old, new)
    key = old.name.lower()
    _keys_for_old_rows(db, table, table.vectors[key])
    table.columns[table.columns.index(old)] = new
    table.vectors[key] = spec
    catalog.save(db.store, table.name, table.to_json())
    idx = db.indexes.pop((table.name.lower(), key), None)
    if idx is not None:          # rebuilt from the new chunks at commit (a derived cache, see storage.chunks)
        idx.remove_file()
    count = db.store.one(f"SELECT COUNT(*) FROM {quote(table.name)}")[0]
    fulltext.recreate_chunk_index(db.store, table, key)     # its trigger cuts the (maybe new) from text
    recompute_all(db, table, [spec])
    return Result(rowcount=int(count))
