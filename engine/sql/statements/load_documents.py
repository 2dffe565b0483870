"""``LOAD DATA INFILE 'docs/**/*.md' INTO TABLE t``: one row per document file (markdown, text, HTML,
PDF; ``tesseradb.io.documents`` reads them). The file's fields and its front matter keys fill the
columns of the same name, the other keys go to a ``json`` column named ``meta``, and whatever has
no column is named in one Note. Rows go through the one write path (``tesseradb.sql.write``), in
batches, so model columns are embedded batched (and chunk texts seen before are reused).
``... SYNC INTO TABLE`` is ``tesseradb.sql.statements.sync``."""
from __future__ import annotations

import dataclasses
import glob
import os
from collections.abc import Callable, Sequence
from typing import Any

from tesseradb import errors
from tesseradb.catalog.tables import Column, Table
from tesseradb.catalog.types import VECTOR_TYPES
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.io import documents, globs
from tesseradb.io.documents import Document, MissingExtra, Unreadable
from tesseradb.io.formats import BATCH_BYTES, BATCH_ROWS, BadRow, Batch, convert
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.sql.write import write_rows

DATA_EXTENSIONS = (".csv", ".tsv", ".jsonl", ".ndjson", ".parquet")
RESERVED_KEYS = ("id", "path", "body", "size", "sha256")   # front matter keys that never fill a column
FilesOf = Callable[..., list[str]]       # LOAD DATA's one path/glob expansion (load_data._files)


def bind_path(stmt: ast.LoadData, params: Any) -> ast.LoadData:
    """``LOAD DATA INFILE ?``: the path is the statement's one parameter."""
    if not isinstance(stmt.path, ast.Placeholder):
        return stmt
    if params is None or isinstance(params, dict) or len(params) != 1 or not isinstance(params[0], str):
        raise UserError("LOAD DATA INFILE ?: bind the file name (one string parameter)", errors.ProgrammingError)
    return dataclasses.replace(stmt, path=params[0])


def has_delimited_clauses(stmt: ast.LoadData) -> bool:
    """MySQL's clauses (FIELDS, LINES, IGNORE n LINES, an @variable in the column list, SET) make any
    file delimited data (tesseradb.sql.statements.load_fields)."""
    return bool(stmt.fields or stmt.lines or stmt.ignore_lines is not None or stmt.assignments
                or any(isinstance(c, ast.UserVar) for c in stmt.columns))


def is_document_load(stmt: ast.LoadData) -> bool:
    """The one choice between documents and data files: a document extension (.md, .markdown, .txt,
    .html, .htm, .pdf), or a glob whose last part names no extension (``docs/**/*``), unless the
    statement has MySQL's clauses (has_delimited_clauses)."""
    if has_delimited_clauses(stmt):
        return False
    base = os.path.basename(stmt.path)
    ext = os.path.splitext(base)[1].lower()
    if ext in documents.KINDS:
        return True
    return glob.has_magic(base) and ext not in DATA_EXTENSIONS and (not ext or glob.has_magic(ext))


def document_files(stmt: ast.LoadData, files_of: FilesOf, missing_ok: bool = False) -> list[str]:
    """The files of the path or glob that are documents (a glob's other files are ignored)."""
    found = [f for f in files_of(stmt.path, missing_ok=True) if documents.kind_of(f)]
    if not found and not missing_ok:
        raise errors.OperationalError(f"File '{stmt.path}' not found (Errcode: 2 - No such file or directory); "
                                      "documents are .md, .markdown, .txt, .html, .htm and .pdf files", errno=29)
    return found


def load(db: Database, stmt: ast.LoadData, files_of: FilesOf, progress_of: Callable) -> Result:
    """Plain LOAD DATA of documents (SYNC goes to ``tesseradb.sql.statements.sync``)."""
    table = db.table(stmt.table)
    pattern = globs.split(stmt.path)
    files = document_files(stmt, files_of)
    writer = Writer(db, table, stmt, progress_of)
    with writer:
        for n, file in enumerate(files, start=1):
            doc = read_document(db, stmt, pattern, file, writer)
            if doc is not None:
                writer.add(doc, None, n / len(files))
    return Result(rowcount=writer.written)


def read_document(db: Database, stmt: ast.LoadData, pattern: globs.Pattern, file: str, writer: Writer,
                  snap: documents.Snapshot | None = None, relative: str | None = None) -> Document | None:
    """The document of ``file``, or None when it is skipped (with a Warning naming the file)."""
    if db.check_cancelled():
        raise errors.Interrupted("Query execution was interrupted")
    try:
        snap = snap or documents.snapshot(file)
        doc = _parsed(db, file, relative if relative is not None else globs.relative(pattern, file), snap)
        for note in doc.notes:                  # loaded, but not quite as written: say so, naming the file
            db.warn(f"'{file}': {note}", code=1366)
        return doc
    except MissingExtra as exc:
        if documents.kind_of(stmt.path) == documents.kind_of(file):    # the statement asked for PDFs
            raise documents.missing_extra_error(str(exc)) from None
        writer.skip(file, str(exc))
    except Unreadable as exc:
        writer.skip(file, str(exc))
    except RecursionError:
        writer.skip(file, "nested too deeply to read")
    except errors.Error:
        raise
    except Exception as exc:       # a reader's library failing on one odd file skips that file only
        writer.skip(file, f"its reader failed ({type(exc).__name__}: {str(exc)[:200]})")
    return None


def _parsed(db: Database, file: str, relative: str, snap: documents.Snapshot) -> Document:
    """The document of the file's bytes, parsed once per statement: a LOAD DATA's first pass parses the
    files it reads before the lock (embed/prepared.py), and under the lock the statement reads each file
    again; the same bytes (size, modification time, sha256) make the same Document, so it is taken from
    the first pass (a file changed in between is parsed as read then)."""
    prepared = getattr(db, "prepared", None)
    if prepared is None:
        return documents.parse(file, relative, snap)
    key = (file, relative, snap.size, snap.mtime_ns, snap.sha256)
    doc = prepared.documents.get(key)
    if doc is None:
        doc = documents.parse(file, relative, snap)
        if prepared.filling:
            prepared.documents[key] = doc
    return doc


class Writer:
    """Documents to rows, in write batches; tracks skipped files and fields with no column."""

    def __init__(self, db: Database, table: Table, stmt: ast.LoadData, progress_of: Callable):
        self.db, self.table, self.stmt = db, table, stmt
        self.progress = progress_of(db.on_progress) if db.on_progress is not None else None
        self.pending: list[tuple[Document, int | None]] = []
        self.pending_bytes = 0
        self.written = self.skipped = 0
        self.unstored: dict[str, None] = {}
        self.targets = _targets(table, stmt)
        self.on_written: Callable[[list[tuple[Document, int]]], None] | None = None

    def __enter__(self) -> Writer:
        self.saved, self.db.on_progress = self.db.on_progress, self.progress
        return self

    def __exit__(self, kind, exc, tb) -> None:
        self.db.on_progress = self.saved
        if kind is None:
            self.flush(1.0)
            if self.progress is not None:
                self.progress.finish()
            if self.unstored:
                names = ", ".join(f"'{n}'" for n in self.unstored)
                self.db.warn(f"LOAD DATA: table '{self.table.name}' has no column for {names}; "
                             "not stored", code=1000, level="Note")

    def skip(self, file: str, reason: str) -> None:
        self.skipped += 1
        self.db.warn(f"'{file}' skipped: {reason}", code=1262)

    def add(self, doc: Document, row_id: int | None, done: float) -> None:
        self.pending.append((doc, row_id))
        self.pending_bytes += len(doc.body)
        if len(self.pending) >= BATCH_ROWS or self.pending_bytes >= BATCH_BYTES:
            self.flush(done)

    def flush(self, done: float) -> None:
        if not self.pending:
            return
        if self.db.check_cancelled():
            raise errors.Interrupted("Query execution was interrupted")
        if self.progress is not None:
            self.progress.batch(done)
        pending, self.pending, self.pending_bytes = self.pending, [], 0
        changed = any(row_id is not None for _, row_id in pending)     # SYNC: a changed file keeps its id
        self.written += self._write(pending, self.stmt.replace or changed)
        if self.on_written is not None:
            self.on_written(pending)

    def rows(self, part: list[tuple[Document, int | None]]) -> tuple[list[Column], list[list[Any]]]:
        """The columns and the rows (converted to the columns' types) of some documents."""
        records = [self._record(doc, row_id) for doc, row_id in part]
        names = list(dict.fromkeys(n for r in records for n in r))
        columns = [self.table.column(n) for n in names]
        batch = Batch(names, [[r.get(n) for n in names] for r in records], list(range(1, len(part) + 1)), 1.0)
        try:
            return columns, convert(columns, batch, native_json=True)
        except BadRow as bad:
            raise UserError(f"'{part[bad.line - 1][0].file}', column '{bad.column}': {bad.msg}", bad.kind) from None

    def _write(self, part: list[tuple[Document, int | None]], replace: bool) -> int:
        columns, rows = self.rows(part)
        try:
            return write_rows(self.db, self.table, columns, rows, replace=replace).rowcount
        except UserError as exc:
            raise _place(exc, [d.file for d, _ in part]) from None

    def _record(self, doc: Document, row_id: int | None) -> dict[str, Any]:
        """column name -> value for one document; names what has no column."""
        fields: dict[str, Any] = {"path": doc.path, "title": doc.title, "body": doc.body,
                                  "modified": doc.modified, "size": doc.size, "sha256": doc.sha256}
        rest: dict[str, Any] = {}
        for key, value in doc.front.items():
            low = key.lower()
            if low == "title" and isinstance(value, (str, int, float)) and not isinstance(value, bool):
                continue                                        # it is the title
            if low == "modified":
                fields["modified"] = value
            elif low in RESERVED_KEYS or low in fields or low not in self.targets.columns:
                rest[key] = value
            else:
                fields[low] = value
        record = {n: v for n, v in fields.items() if n in self.targets.columns}
        self.unstored.update(dict.fromkeys(n for n in fields if n not in self.targets.columns))
        if self.targets.meta:
            record["meta"] = rest
        else:
            self.unstored.update(dict.fromkeys(rest))
        if row_id is not None:
            record["id"] = row_id
        return record


@dataclasses.dataclass(frozen=True)
class _Targets:
    columns: frozenset[str]     # lower-case names the document's fields may fill
    meta: bool                  # the rest of the front matter goes to the json column 'meta'


def _targets(table: Table, stmt: ast.LoadData) -> _Targets:
    wanted = [c.lower() for c in stmt.columns] if stmt.columns else \
        [c.name.lower() for c in table.columns if c.type not in VECTOR_TYPES and c.name.lower() != "id"]
    for name in wanted:
        if table.column(name) is None:
            raise errors.unknown_column(name)
    meta_col: Column | None = table.column("meta")
    meta = "meta" in wanted and meta_col is not None and meta_col.type == "json"
    return _Targets(frozenset(n for n in wanted if not (meta and n == "meta")), meta)


def _place(exc: UserError, files: Sequence[str]) -> UserError:
    """A write error 'row N ...' names the file instead."""
    row = exc.fields.get("row")
    if exc.place is not None and isinstance(row, int) and 0 < row <= len(files):
        return errors.relocated(exc, f"'{files[row - 1]}'")
    return exc
