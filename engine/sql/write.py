"""The one write path: ids, vector values (supplied or embedded from their ``from`` columns), the
row itself and the chunk rows that index its vectors. INSERT, REPLACE, UPDATE, LOAD DATA, ALTER ADD
COLUMN and REPAIR all write through here."""
from __future__ import annotations

import json
import struct
from dataclasses import dataclass
from collections.abc import Collection
from typing import Any

import numpy as np

from tesseradb import errors
from tesseradb.catalog.tables import Column, Table
from tesseradb.catalog.types import VECTOR_TYPES, pack_array, pack_vector, unpack, write_value
from tesseradb.catalog.values import to_vectors
from tesseradb.catalog import fulltext as catalog_fulltext
from tesseradb.embed.rows import Embedded, embed_texts, location_row, separator, source_text, source_title
from tesseradb.errors import UserError
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.storage.catalog import quote
from tesseradb.storage import unit_table
from tesseradb.storage.chunk_table import delete_doc_chunks, write_chunks


def _check_width(rows: list[list[Any]], width: int, first_row: int = 1) -> None:
    for n, row in enumerate(rows, start=first_row):
        if len(row) != width:
            raise UserError(f"Column count doesn't match value count at row {n}", errors.ProgrammingError, row=n)


@dataclass(frozen=True)
class IdRule:
    """How ids are generated (sql/mysql/auto_value.py decides it for a table): Manticore's implicit id
    by default, 0 and NULL assigned after every explicit id."""
    zero_generates: bool = True
    in_row_order: bool = False          # MySQL's AUTO_INCREMENT counter, row by row
    declared: bool = False              # a key declared MySQL's way: a repeat is MySQL's 1062 for PRIMARY

    def duplicate(self, value: int) -> UserError:
        return errors.duplicate_id(value, "PRIMARY" if self.declared else None)


MANTICORE_IDS = IdRule()


def _generate_in_order(top: int, given: list[int | None]) -> list[int]:
    """MySQL's counter: one past the largest value so far, in row order (a generated value that a later
    row repeats is a duplicate key, as in MySQL)."""
    ids, next_id = [], top + 1
    for value in given:
        if value is None:
            value = next_id
        next_id = max(next_id, value + 1)
        ids.append(value)
    return ids


def _id_value(value: Any, row: int, zero_generates: bool = True) -> int | None:
    if value is None or (zero_generates and isinstance(value, (int, np.integer)) and not isinstance(value, bool)
                         and value == 0):
        return None
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return _id_value(int(value), row, zero_generates)
    raise UserError(f"Incorrect integer value: '{value}' for column 'id' at row {row}", errors.DataError,
                    row=row, column="id", value=value)


def explicit_id(value: Any, zero_generates: bool = True) -> int | None:
    """The id a row gives, as the write path reads it; None when it is generated (or not an id at all:
    the write path says so, with the row's number)."""
    try:
        return _id_value(value, 0, zero_generates)
    except UserError:
        return None


def _assign_ids(db: Database, table: Table, given: list[int | None], replace: bool,
                rule: IdRule = MANTICORE_IDS, floor: int = 0) -> list[int]:
    """``floor``: ids are generated above it too (a statement written in batches generates above its
    earlier batches' ids and its largest explicit id: sql/statements/insert_select.py)."""
    explicit = [i for i in given if i is not None]
    if not replace:
        seen: set[int] = set()
        for i in explicit:
            if i in seen:
                raise rule.duplicate(i)
            seen.add(i)
        for start in range(0, len(explicit), 500):
            part = explicit[start:start + 500]
            hit = db.store.one(f"SELECT id FROM {quote(table.name)} WHERE id IN ({','.join('?' * len(part))}) "
                               "LIMIT 1", part)
            if hit:
                raise rule.duplicate(hit[0])
    top = max(highest_id(db, table), floor)
    if rule.in_row_order:
        return _generate_in_order(top, given)
    next_id = max([top, *explicit]) + 1
    ids = []
    for i in given:
        if i is None:
            i, next_id = next_id, next_id + 1
        ids.append(i)
    return ids


def highest_id(db: Database, table: Table) -> int:
    return db.store.one(f"SELECT COALESCE(MAX(id), 0) FROM {quote(table.name)}")[0]


def write_rows(db: Database, table: Table, columns: list[Column], rows: list[list[Any]],
               replace: bool = False, id_rule: IdRule = MANTICORE_IDS, *, first_row: int = 1,
               id_floor: int = 0, replaced: Collection[int] = ()) -> Result:
    """Insert (or replace) rows of Python values into ``table``: the one write path shared by
    INSERT, REPLACE, executemany and LOAD DATA. ``first_row``: the number errors give the first row
    (a later batch of a statement); ``id_floor``: see :func:`_assign_ids`. REPLACE: a row that a later
    row of the same call replaces (it repeats its id; or the caller says so in ``replaced``, rows that
    repeat a unique key: sql/mysql/keys.py) gets its id and is left out, counting 2 as in MySQL (it
    was inserted, then deleted)."""
    _check_width(rows, len(columns), first_row)
    if not rows:
        return Result(rowcount=0)
    names = [c.name.lower() for c in columns]
    records = [dict(zip(names, row)) for row in rows]
    given = [_id_value(r.get("id"), n, id_rule.zero_generates) for n, r in enumerate(records, start=first_row)]
    ids = _assign_ids(db, table, given, replace, id_rule, id_floor)
    dropped = 0
    if replace:
        all_ids = ids
        ids, records = _last_of_each(ids, records, replaced)
        dropped = len(all_ids) - len(ids)
    for doc_id, rec in zip(ids, records):
        rec["id"] = doc_id
    vectors = _vector_values(db, table, names, records, ids, first_row)
    scalar_cols = [c for c in table.columns if c.type not in VECTOR_TYPES and
                   (c.name.lower() in names or c.name.lower() == "id")]
    vector_cols = [c for c in table.columns if c.type in VECTOR_TYPES and c.name.lower() in vectors]
    out_cols = scalar_cols + vector_cols
    values = []
    for n, rec in enumerate(records):
        row = [write_value(c.type, rec.get(c.name.lower())) for c in scalar_cols]
        row += [_pack(c, vectors[c.name.lower()][n]) for c in vector_cols]
        values.append(row)
    deleted = 0
    if replace:
        deleted = _delete_ids(db, table, all_ids)
    col_sql = ", ".join(quote(c.name) for c in out_cols)
    db.store.executemany(f"INSERT INTO {quote(table.name)} ({col_sql}) VALUES ({', '.join('?' * len(out_cols))})",
                         values)
    _write_chunk_rows(db, table, ids, vectors, records)
    return Result(rowcount=len(ids) + deleted + 2 * dropped, lastrowid=ids[-1])


def _last_of_each(ids: list[int], records: list[dict], replaced: Collection[int] = ()) -> tuple[list[int], list[dict]]:
    last = {doc_id: n for n, doc_id in enumerate(ids)}
    keep = sorted(set(last.values()) - set(replaced))
    return [ids[n] for n in keep], [records[n] for n in keep]


def _delete_ids(db: Database, table: Table, ids: list[int]) -> int:
    db.store.execute(f"DELETE FROM {quote(table.name)} WHERE id IN (SELECT value FROM json_each(?))",
                     (json.dumps(ids),))
    return db.store.changes()


def _pack(col: Column, value: Embedded | None) -> bytes | None:
    if value is None:
        return None if col.type == "float_vector" else b""
    if col.type == "float_vector":
        return pack_vector(value.vectors[0]) if len(value.vectors) else None
    return pack_array(value.vectors)


def _vector_values(db: Database, table: Table, names: list[str], records: list[dict],
                   ids: list[int], first_row: int = 1) -> dict[str, list[Embedded | None]]:
    """For every vector column written by this statement: one Embedded (or None) per row."""
    out: dict[str, list[Embedded | None]] = {}
    for col in table.columns:
        if col.type not in VECTOR_TYPES:
            continue
        key = col.name.lower()
        spec = table.vectors.get(key)
        if key in names:
            out[key] = [supplied_vectors(col, spec, rec.get(key), n)
                        for n, rec in enumerate(records, start=first_row)]
        elif spec is not None and spec.model_name:
            texts = [source_text(spec, rec) for rec in records]
            labels = [errors.Place(row=n, id=doc_id) for n, doc_id in enumerate(ids, start=first_row)]
            out[key] = list(embed_texts(db, spec, texts, labels, [source_title(spec, rec) for rec in records]))
        else:
            out[key] = [None] * len(records)
    return out


def supplied_vectors(col: Column, spec, value: Any, row: int) -> Embedded | None:
    if isinstance(value, Embedded):     # already embedded and checked (LOAD DATA of a shard: io.shards)
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):   # INSERT ... SELECT of a vector column
        try:
            value = unpack(bytes(value), col.type == "float_vector_array") if value else []
        except (ValueError, struct.error):      # a BLOB that is not a stored vector
            raise errors.at(errors.Place(row=row), "incompatible value specified for a float vector column "
                            "(a BLOB that is not a vector)", errors.DataError, column=col.name) from None
        if len(value) and not np.isfinite(value).all():
            value = value.tolist()              # the element checks name the bad value
        if col.type == "float_vector" and len(value):
            value = value[0]
    if value is None:
        return None
    matrix = to_vectors(value, is_array=col.type == "float_vector_array",
                        dims=spec.dims if spec else None,
                        normalize=spec is not None and spec.similarity == "cosine",
                        row=row, column=col.name, model=(spec.model_text or spec.model_name) if spec else None)
    return Embedded(matrix, [(None, None)] * len(matrix))


def _write_chunk_rows(db: Database, table: Table, ids: list[int],
                      vectors: dict[str, list[Embedded | None]], records: list[dict] | None = None) -> None:
    """``records``: per row its values as written (None: not at hand), whose ``from`` texts give the
    chunks their full-text entries (``stored_texts``)."""
    for key, per_row in vectors.items():
        if key not in table.vectors:
            continue
        layout = table.layout(key)
        texts = stored_texts(table, table.vectors[key], records) if records is not None else None
        rows, row_texts = [], []
        for n, (doc_id, emb) in enumerate(zip(ids, per_row)):
            if emb is None:
                continue
            rows.extend((doc_id, ord_, s, e, emb.keys[ord_] if emb.keys else None) + location_row(emb, ord_)
                        for ord_, (s, e) in enumerate(emb.spans))
            row_texts.extend([texts[n] if texts is not None else None] * len(emb.spans))
        if rows:
            write_chunks(db.store, layout, rows, index=catalog_fulltext.chunk_index(table, key),
                         texts=row_texts if texts is not None else None)
        unit_table.write(db.store, layout, [(doc_id, ord_, emb.keys[ord_] if emb.keys else None, blob)
                                            for doc_id, emb in zip(ids, per_row) if emb is not None and emb.units
                                            for ord_, blob in enumerate(emb.units)])


def stored_texts(table: Table, spec, records: list[dict]) -> list[str | None] | None:
    """Per record, its ``from`` text exactly as the chunk full-text trigger reads it back from SQLite
    (``ChunkTextIndex.source_sql``): the ``from`` columns joined, when each is a ``text`` or ``string``
    column (TEXT affinity: a str is stored as it is) given in the record as a str or None; None for a
    record where SQLite could hold something else (a number, bytes, a column not written, a NUL)."""
    columns = [table.column(c) for c in spec.from_columns]
    if any(c is None or c.type not in ("text", "string") for c in columns):
        return None
    names, join = [c.name.lower() for c in columns], separator(spec).join
    out: list[str | None] = []
    for rec in records:
        values = [rec.get(name, 0) for name in names]       # 0: a column not written (its default)
        text = join("" if v is None else v for v in values) if all(v is None or type(v) is str for v in values) else None
        out.append(None if text is None or "\x00" in text else text)
    return out


def store_vectors(db: Database, table: Table, col: Column, ids: list[int],
                   per_row: list[Embedded | None], records: list[dict] | None = None) -> None:
    db.store.executemany(f"UPDATE {quote(table.name)} SET {quote(col.name)} = ? WHERE id = ?",
                         [(_pack(col, emb), doc_id) for doc_id, emb in zip(ids, per_row)])
    if col.name.lower() in table.vectors:
        layout = table.layout(col.name)
        delete_doc_chunks(db.store, layout, ids)
        _write_chunk_rows(db, table, ids, {col.name.lower(): per_row}, records)


def recompute(db: Database, table: Table, specs: list, ids: list[int]) -> None:
    """Embed the model columns ``specs`` again for the rows ``ids`` from their ``from`` columns."""
    if not ids:
        return
    sources = sorted({f for s in specs for f in s.from_columns}, key=str.lower)
    cols = ", ".join(quote(table.column(f).name) for f in sources)
    for start in range(0, len(ids), 2000):
        part = ids[start:start + 2000]
        rows = list(db.store.execute(f"SELECT id, {cols} FROM {quote(table.name)} WHERE id IN "
                                     "(SELECT value FROM json_each(?)) ORDER BY id", (json.dumps(part),)))
        got_ids = [r[0] for r in rows]
        records = [dict(zip([f.lower() for f in sources], r[1:])) for r in rows]
        for spec in specs:
            texts = [source_text(spec, rec) for rec in records]
            labels = [errors.Place(id=doc_id) for doc_id in got_ids]
            titles = [source_title(spec, rec) for rec in records]
            store_vectors(db, table, table.column(spec.column), got_ids, embed_texts(db, spec, texts, labels, titles),
                          records)


def recompute_all(db: Database, table: Table, specs: list) -> None:
    ids = [r[0] for r in db.store.execute(f"SELECT id FROM {quote(table.name)} ORDER BY id")]
    recompute(db, table, specs, ids)


