"""The first pass of a LOAD DATA (statements/embed_first.py): the rows of its first data files or
documents, read as the statement reads them, within ``prepared.BUDGET_CHARS`` characters of text, so
that their texts are cut and embedded before the statement takes the write lock.

Data files (CSV, TSV, JSONL, Parquet, and any file under MySQL's FIELDS/LINES/SET clauses) go
through ``load_data.source`` with the statement's own delimited reader (``load_fields.Loader``); an
embedded shard brings its vectors and is passed over. Under IGNORE, a row that repeats a key already
committed is passed over (the statement skips it; it checks again under the lock). Documents are read
by ``load_documents.read_document`` and made rows by the load's own ``Writer.rows``; a SYNC reads only
its new and changed files (``sync.first_documents``: the stored size, modification time and sha256).
The path is expanded by ``db.file_access`` as the statement does: a refused path (secure_file_priv)
ends the pass before anything is read, and the statement refuses it. Every file the pass opens is
closed before the transaction begins; the statement reads its files again under the lock and stores
what it reads then (a text this pass did not see is simply embedded under the lock).

A plain document load also reads ahead (:class:`ReadAhead`): while the model embeds the first
pass's texts (its worker threads hold both cores, the statement's thread waits), one more thread
reads the next documents and cuts their texts into ``Database.prepared``, up to
``prepared.READ_AHEAD_CHARS`` characters; the statement then finds those cuts under the lock and
runs the model on them at once, instead of cutting them while a core idles. The read-ahead ends
(and its files are closed) before the first pass returns; a document it could not read or cut is
left to the statement, which says why."""
from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from tesseradb.embed.prepared import BUDGET_CHARS, READ_AHEAD_CHARS
from tesseradb.grammar import ast
from tesseradb.io import globs, shards
from tesseradb.io.formats import extension
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import keys
from tesseradb.sql.statements import load_data, load_documents, load_fields, sync
from tesseradb.embed.rows import cut_ahead, source_text, source_title

Work = list[tuple[Any, list[dict[str, Any]]]]       # as embed_first.Work: (model column's spec, its records)
HEAD_CHARS = 1 << 17        # the first pass's head: the model starts on it while the rest is cut


def gather(db: Database, stmt: ast.LoadData, param_sets: Sequence[Any]) -> tuple[Work, ReadAhead | None]:
    """The first rows of a LOAD DATA: of its data files (CSV, TSV, JSONL, Parquet that is not an embedded
    shard, which brings its vectors), or of its documents; and, for a plain document load with more
    files, the :class:`ReadAhead` of the next ones (not started). The path is expanded as the
    statement does (secure_file_priv: a refused path gives up here, and the real run refuses it
    before reading)."""
    stmt = load_documents.bind_path(stmt, param_sets[0])
    table = db.table(stmt.table)
    if not table.model_columns():
        return [], None
    if load_documents.is_document_load(stmt):
        if stmt.ignore:             # refused by the statement
            return [], None
        return _documents(db, dataclasses.replace(stmt, path=db.file_access.located(stmt.path)), table)
    if stmt.sync:                   # refused by the statement
        return [], None
    return _data_rows(db, stmt, table), None


def _data_rows(db: Database, stmt: ast.LoadData, table) -> Work:
    """The first rows of a LOAD DATA of data files."""
    fields = load_fields.Loader(db, table, stmt) if load_documents.has_delimited_clauses(stmt) else None
    ext = extension(stmt.path, "LOAD DATA") if fields is None else ".txt"
    out: Work = []
    chars = 0
    for path in db.file_access.expand(stmt.path, warn=_quiet):
        if ext == ".parquet" and shards.header(path) is not None:
            continue
        source = load_data.source(path, ext, table, stmt, fields)
        try:
            for _batch, columns, rows in source:
                names = [c.name.lower() for c in columns]
                specs = [s for s in table.model_columns() if s.column.lower() not in names]
                if not specs:
                    break
                chosen = []
                for row in rows:
                    if chars >= BUDGET_CHARS and (chosen or out):      # always the statement's first row
                        break
                    rec = dict(zip(names, row))
                    if stmt.ignore and keys.collision(db, table, rec) is not None:
                        continue        # IGNORE skips it (the statement checks again under the lock)
                    chosen.append(rec)
                    chars += sum(len(source_text(s, rec)) for s in specs)
                out.extend((spec, chosen) for spec in specs)
                if chars >= BUDGET_CHARS:
                    return out
        finally:
            source.close()          # the file is closed: nothing stays open into the transaction
    return out


def _documents(db: Database, stmt: ast.LoadData, table) -> tuple[Work, ReadAhead | None]:
    """The rows of the first documents of a document load, built as the load builds them."""
    files_of = functools.partial(db.file_access.expand, warn=_quiet)
    writer = load_documents.Writer(db, table, stmt, lambda _report: None)
    rest: list[str] = []
    if stmt.sync:
        docs = sync.first_documents(db, stmt, files_of, writer, BUDGET_CHARS)
    else:
        files = load_documents.document_files(stmt, files_of)
        docs, used = _first_files(db, stmt, files, writer)
        rest = files[used:]
    if not docs:
        return [], None
    columns, rows = writer.rows(docs)
    names = [c.name.lower() for c in columns]
    records = [dict(zip(names, r)) for r in rows]
    specs = [s for s in table.model_columns() if s.column.lower() not in names]
    ahead = ReadAhead(db, stmt, writer, specs, rest) if specs and not stmt.sync else None
    return [(s, records) for s in specs], ahead


def _first_files(db: Database, stmt: ast.LoadData, files: list[str], writer) -> tuple[list, int]:
    """The documents of a plain document load's first files, within the budget, and how many of the
    files they took."""
    pattern = globs.split(stmt.path)
    docs, chars, used = [], 0, 0
    for file in files:
        if docs and chars >= BUDGET_CHARS:
            break
        used += 1
        doc = load_documents.read_document(db, stmt, pattern, file, writer)
        if doc is not None:
            docs.append((doc, None))
            chars += len(doc.body) + len(doc.title or "")
    return docs, used


class ReadAhead:
    """The next documents of a plain document load, read and cut on one thread while the model
    embeds the first pass's texts (see the module docstring). Only the cuts stay (in
    ``Database.prepared``); :meth:`finish` waits for it (stopped after the document in hand when the
    first pass failed or was cancelled).

    The first pass itself starts the model early (:meth:`parts`): when its texts pass
    :data:`HEAD_CHARS`, the model embeds its shortest documents first (the head, that many
    characters or just more), cut on the statement's thread, while this thread cuts the others;
    the model then embeds those from their cuts. Each text's cut and vector are the same whichever
    call makes them (embed/prepared.py)."""

    def __init__(self, db: Database, stmt: ast.LoadData, writer, specs: list, files: list[str]):
        self.db, self.stmt, self.writer, self.specs, self.files = db, stmt, writer, specs, files
        self.stopping = threading.Event()
        self.first_cut = threading.Event()      # the first pass's texts after its head are cut
        self.first: list[tuple[Any, str, str | None]] = []     # those texts: (spec, text, title)
        self.thread: threading.Thread | None = None
        self.cut = 0                # texts cut ahead

    def parts(self, work: Work) -> Iterator[tuple[Any, list[dict[str, Any]], list[int]]]:
        """``(spec, records, their row numbers)`` to embed, in order: the head of ``work``, then (once
        this thread has cut them) the rest; all of ``work`` at once when it is short."""
        head = _head_rows(work)
        if head is None:
            self.first_cut.set()
            yield from ((spec, records, list(range(1, len(records) + 1))) for spec, records in work)
            return
        rest = [n for n in range(len(work[0][1])) if n not in head]
        self.first = [(spec, source_text(spec, records[n]), source_title(spec, records[n]))
                      for spec, records in work for n in rest]
        yield from ((spec, [records[n] for n in head], [n + 1 for n in head]) for spec, records in work)
        self.first_cut.wait()
        yield from ((spec, [records[n] for n in rest], [n + 1 for n in rest]) for spec, records in work)

    def start(self) -> None:
        if self.thread is None:
            self.thread = threading.Thread(target=self._run, name="tessera-read-ahead", daemon=True)
            self.thread.start()

    def finish(self, stop: bool) -> None:
        if stop:
            self.stopping.set()
        if self.thread is not None:
            self.thread.join()

    def _run(self) -> None:
        pattern = globs.split(self.stmt.path)
        chars = 0
        try:
            for spec, text, title in self.first:
                if self.stopping.is_set():
                    return
                self.cut += cut_ahead(self.db, spec, text, title)
            self.first_cut.set()
            for file in self.files:
                if self.stopping.is_set() or chars >= READ_AHEAD_CHARS:
                    return
                doc = load_documents.read_document(self.db, self.stmt, pattern, file, self.writer)
                if doc is None:
                    continue
                columns, rows = self.writer.rows([(doc, None)])
                record = dict(zip([c.name.lower() for c in columns], rows[0]))
                for spec in self.specs:
                    text = source_text(spec, record)
                    self.cut += cut_ahead(self.db, spec, text, source_title(spec, record))
                    chars += len(text)
        except Exception:       # noqa: BLE001 - the statement reads the file again and says what is wrong
            return
        finally:
            self.first_cut.set()        # (a read-ahead that failed: what it did not cut is cut by the pass)


def _head_rows(work: Work) -> set[int] | None:
    """The rows of the first pass's head: its shortest texts (the quickest to cut), up to
    :data:`HEAD_CHARS` of text or just past it; None when the head would be all of them."""
    if not work:
        return None
    spec, records = work[0]
    sizes = [len(source_text(spec, r)) for r in records]
    head, chars = set(), 0
    for n in sorted(range(len(records)), key=sizes.__getitem__):
        if chars >= HEAD_CHARS:
            return head
        head.add(n)
        chars += sizes[n]
    return None


class _Rising:
    """A LOAD DATA's progress told as one count over both passes: the first pass's reports, then the
    statement's own (which start again from its first batch) once they pass the first pass's."""

    def __init__(self, report: Callable[[int, int], None]):
        self.report, self.done = report, 0

    def __call__(self, done: int, total: int) -> None:
        if done >= self.done:
            self.done = done
            self.report(done, max(total, done))


def one_progress(db: Database) -> _Rising | None:
    """The first pass reports its chunks as the load does (across batches, never finished); the
    statement's own reports follow on from them; the caller's callback is back when it ends."""
    user = db.on_progress
    if user is None:
        return None
    rising = _Rising(user)
    db.on_progress = load_data.Progress(rising)

    def restore() -> None:
        db.on_progress = user
    db.prepared.restore = restore
    return rising


def _quiet(_message: str) -> None:
    """A glob's link out of secure_file_priv: the real run skips it and says so."""
