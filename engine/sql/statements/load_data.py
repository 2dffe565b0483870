"""``LOAD DATA INFILE 'file' [REPLACE] INTO TABLE t [(col, ...)]``: the file is streamed in batches
(``tesseradb.io.formats``); each batch is converted to the table's column types and goes through the
one write path (``tesseradb.sql.write``), which embeds model-backed columns batched across the rows.
The executor runs the whole statement in one transaction, so a bad row anywhere loads nothing."""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa

from tesseradb import errors
from tesseradb.catalog.tables import Column
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.io import shards
from tesseradb.io.formats import BadRow, Batch, batches, columns_for, convert, extension, pick
from tesseradb.results import Result
from tesseradb.sql.statements import load_documents, load_fields, sync
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import auto_value, keys
from tesseradb.sql.statements.update_delete import delete_ids
from tesseradb.sql.write import write_rows


class Progress:
    """Chunks embedded across all batches (and all model columns), as one count that only grows;
    the total is estimated from the part of the file read and is exact at the last batch."""

    def __init__(self, report: Callable[[int, int], None]):
        self.report, self.base, self.fraction = report, 0, 0.0
        self.last_done = self.last_total = 0

    def batch(self, fraction: float) -> None:
        self.base += self.last_total
        self.last_done = self.last_total = 0
        self.fraction = fraction

    def __call__(self, done: int, total: int) -> None:
        if done < self.last_done or (self.last_total and self.last_done >= self.last_total):
            self.base += self.last_total           # the next model column of the same batch
        self.last_done, self.last_total = done, total
        known = self.base + total
        estimate = known if self.fraction >= 1.0 or self.fraction <= 0 else round(known / self.fraction)
        self.report(self.base + done, max(estimate, self.base + done + 1))   # done == total: finish()

    def finish(self) -> None:
        if self.base + self.last_total:
            self.report(self.base + self.last_total, self.base + self.last_total)


def _place(exc: UserError, path: str, batch: Batch, rows: list[list[Any]], columns: list[Column]) -> UserError:
    """A write_rows error said of the file's line: the row it names (``at``), or the line that repeats the
    id of a duplicate id (the second such line of the batch), else the batch's lines."""
    row = exc.fields.get("row")
    if exc.place is not None and isinstance(row, int) and 0 < row <= len(batch.lines):
        return errors.relocated(exc, f"'{path}' line {batch.lines[row - 1]}")
    names = [c.name.lower() for c in columns]
    wanted = exc.fields.get("id")
    if exc.kind is errors.DuplicateKey and wanted is not None and "id" in names:
        pos = names.index("id")
        hits = [line for row, line in zip(rows, batch.lines) if _same_id(row[pos], wanted)]
        if hits:
            return errors.relocated(exc, f"'{path}' line {hits[1] if len(hits) > 1 else hits[0]}")
    return errors.prefixed(exc, f"'{path}' lines {batch.lines[0]}-{batch.lines[-1]}")


def _same_id(value: Any, wanted: int) -> bool:
    try:
        return int(value) == wanted
    except (TypeError, ValueError):
        return False


def load_data(db: Database, stmt: ast.LoadData, params=None) -> Result:
    """``LOAD DATA INFILE 'file' [REPLACE] INTO TABLE t [FIELDS ...] [LINES ...] [IGNORE n LINES]
    [(col | @var, ...)] [SET col = expr, ...]``, inside the statement's transaction."""
    stmt = load_documents.bind_path(stmt, params)
    if stmt.ignore and load_documents.is_document_load(stmt):
        raise UserError("LOAD DATA ... IGNORE INTO TABLE loads data files, not documents (a document row "
                        "has no key of its own to repeat)", errors.NotSupportedError)
    if load_documents.is_document_load(stmt):         # markdown, text, HTML, PDF: one row per file
        handler = sync.sync if stmt.sync else load_documents.load
        stmt = dataclasses.replace(stmt, path=db.file_access.located(stmt.path))   # refused first
        return handler(db, stmt, functools.partial(db.file_access.expand, warn=_warner(db)), Progress)
    if stmt.sync:
        raise UserError("LOAD DATA ... SYNC loads document files (.md, .markdown, .txt, .html, .htm, .pdf)",
                        errors.NotSupportedError)
    table = db.table(stmt.table)
    fields = load_fields.Loader(db, table, stmt) if load_documents.has_delimited_clauses(stmt) else None
    ext = extension(stmt.path, "LOAD DATA") if fields is None else ".txt"
    paths = db.file_access.expand(stmt.path, warn=_warner(db))   # the one expansion: secure_file_priv (io/file_access.py)
    progress = Progress(db.on_progress) if db.on_progress is not None else None
    saved, written = db.on_progress, 0
    db.on_progress = progress
    try:
        for path in paths:
            written += _load_file(db, table, stmt, path, ext, progress, fields)
        if progress is not None:
            progress.finish()
    finally:
        db.on_progress = saved
    return Result(rowcount=written)


def _warner(db: Database) -> Callable[[str], None]:
    """A link out of ``--secure-file-priv`` that a glob met: skipped, with a Warning (1290)."""
    return lambda message: db.warn(message, code=1290)


def source(path: str, ext: str, table, stmt: ast.LoadData,
            fields: load_fields.Loader | None) -> Iterator[tuple[Batch, list[Column], list[list[Any]]]]:
    """(batch, columns, rows) of one file; an embedded shard (io.shards) brings its model column's
    vectors, checked against the column's model and chunk settings, so the model does not run.
    With MySQL's FIELDS/LINES/SET clauses the file is MySQL's delimited text (load_fields)."""
    if fields is not None:
        yield from fields.source(path)
        return
    shard = shards.header(path) if ext == ".parquet" else None
    if shard is not None:
        yield from shards.load_batches(path, table, stmt, shard, shards.check(shard, table, path))
        return
    for batch in batches(path, ext, stmt):
        columns, positions = columns_for(table, batch, stmt, ext)
        batch = pick(batch, positions)
        yield batch, columns, convert(columns, batch, native_json=ext == ".jsonl")


def _load_file(db: Database, table, stmt: ast.LoadData, path: str, ext: str, progress: Progress | None,
               fields: load_fields.Loader | None = None) -> int:
    written = 0
    try:
        for batch, columns, rows in source(path, ext, table, stmt, fields):
            if db.check_cancelled():
                raise errors.Interrupted("Query execution was interrupted")
            if progress is not None:
                progress.batch(batch.done)
            if stmt.ignore:
                written += _write_ignoring(db, table, path, batch, columns, rows)
                continue
            try:
                doomed = keys.conflicts(db, table, [c.name for c in columns], rows, stmt.replace)
                if doomed:
                    delete_ids(db, table, doomed)           # REPLACE: the rows the new ones repeat a key of
                written += write_rows(db, table, columns, rows, replace=stmt.replace,
                                      id_rule=auto_value.id_rule(db, table)).rowcount
            except UserError as exc:
                raise _place(exc, path, batch, rows, columns) from None
    except BadRow as bad:
        where = f"'{path}'" + (f" {'row' if ext == '.parquet' else 'line'} {bad.line}" if bad.line else "")
        where += f", column '{bad.column}'" if bad.column else ""
        raise UserError(f"{where}: {bad.msg}", bad.kind) from None
    except (OSError, UnicodeDecodeError, pa.ArrowException) as exc:
        raise UserError(f"'{path}': cannot read the file: {exc}", errors.DataError) from None
    return written


def _write_ignoring(db: Database, table, path: str, batch: Batch, columns: list[Column], rows: list[list[Any]]) -> int:
    """LOAD DATA ... IGNORE: a row that repeats the id or a unique key of a row already there (or loaded
    before it) is skipped with its Warning 1062, as INSERT IGNORE does; the others are written one by one."""
    names, written = [c.name.lower() for c in columns], 0
    for row, line in zip(rows, batch.lines):
        hit = keys.collision(db, table, dict(zip(names, row)))
        if hit is not None:
            db.warn(hit.warning(), 1062)
            continue
        try:
            written += write_rows(db, table, columns, [row], id_rule=auto_value.id_rule(db, table)).rowcount
        except UserError as exc:
            raise _place(exc, path, Batch(batch.names, [row], [line], batch.done), [row], columns) from None
    return written
