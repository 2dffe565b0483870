"""CHECK TABLE / REPAIR TABLE: do the rows, the chunk rows, the vectors and the index agree?

SQLite is the source of truth. Per vector column, what must hold:

* every chunk row belongs to a row of the table (no orphans), and the table's delete trigger that
  keeps it so exists;
* a document's chunk rows are numbered ``ord = 0 .. n-1`` where ``n`` is the number of vectors in its
  blob (``float_vector``: 0 or 1; ``float_vector_array``: the array's length), and the blob decodes
  to finite vectors of the column's width;
* the FAISS index (a cache) holds exactly the live chunk ids of SQLite, each with its document's
  vector; its file, when there is one, passes its checksum.

``CHECK TABLE`` reports what does not hold, MySQL style (Table, Op, Msg_type, Msg_text), ending with
``status OK`` or ``error Corrupt``. ``REPAIR TABLE`` rebuilds chunk rows from the blobs (a model column
whose blob is unreadable is embedded again from its ``from`` columns; a supplied one is cleared, and
the report says so), recreates a missing chunk table or trigger, and rebuilds the index. SQLite's own
``integrity_check`` of the table is part of CHECK; damage that it finds is reported, not repaired.
"""
from __future__ import annotations

import logging
import math
import struct
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from tesseradb.catalog import fulltext as catalog_fulltext
from tesseradb.storage import unit_table
from tesseradb.storage.catalog import quote
from tesseradb.storage.chunk_table import ColumnLayout, create_chunk_table, install_pending_triggers
from tesseradb.storage.errors import StorageError

from tesseradb.catalog.tables import Table
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.sql.write import recompute

log = logging.getLogger("tesseradb.integrity")

COLUMNS = [("Table", None), ("Op", None), ("Msg_type", None), ("Msg_text", None)]
LISTED = 5                 # example ids quoted per problem
VECTOR_SAMPLE = 20_000     # chunks whose vectors are looked up in the index (evenly spread)
DIST_TOL = 1e-3


@dataclass
class ColumnState:
    """What one pass over a vector column found."""
    layout: ColumnLayout
    model: bool
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    missing_table: bool = False
    missing_trigger: bool = False
    missing_doc_index: bool = False
    orphans: int = 0
    bad_blobs: list[int] = field(default_factory=list)          # docs whose vectors cannot be read
    mismatched: dict[int, int] = field(default_factory=dict)    # doc -> vectors, chunk rows disagree
    expected: list[int] = field(default_factory=list)           # chunk ids the index must hold
    sample: list[tuple[int, int, np.ndarray]] = field(default_factory=list)  # (chunk, doc, vector)
    file_problem: str | None = None

    @property
    def sql_ok(self) -> bool:
        return not (self.missing_table or self.missing_trigger or self.missing_doc_index or self.orphans
                    or self.bad_blobs or self.mismatched)


def check_table(db: Database, table: Table, repair: bool) -> Result:
    op = "repair" if repair else "check"
    rows: list[tuple[str, str, str, str]] = []

    def say(kind: str, text: str) -> None:
        rows.append((table.name, op, kind, text))

    own_snapshot = not db.store.in_transaction
    if own_snapshot:                      # every read below sees one committed state
        db.store.execute("BEGIN")
    try:
        sqlite_problems = _sqlite_check(db, table)
        text_problems = catalog_fulltext.check(db.store, table)      # the full-text indexes against the rows
        states = [_check_column(db, table, layout) for layout in table.layouts()]
        for state in states:
            _check_index(db, table, state)
        for text in sqlite_problems + text_problems:
            say("error" if not repair else "warning", text)
        for state in states:
            for text in state.problems:
                say("error" if not repair else "warning", text)
            for text in state.notes:
                say("note", text)
        if not repair:
            broken = sqlite_problems or text_problems or any(s.problems for s in states)
            say("error" if broken else "status", "Corrupt" if broken else "OK")
            return Result(columns=COLUMNS, rows=rows, rowcount=len(rows))
        for state in states:
            for text in _repair_column(db, table, state):
                say("info", text)
        for text in catalog_fulltext.rebuild(db.store, table, db.on_progress):
            say("info", text)
        left = list(sqlite_problems) + catalog_fulltext.check(db.store, table)
        for layout in table.layouts():
            after = _check_column(db, table, layout)
            left += after.problems
        for text in left:
            say("error", f"not repaired: {text}")
        say("error" if left else "status", "Table could not be fully repaired" if left else "OK")
        return Result(columns=COLUMNS, rows=rows, rowcount=len(rows))
    finally:
        if own_snapshot and db.store.in_transaction:
            db.store.execute("COMMIT")    # a read-only transaction: nothing to write


# -- SQLite itself ------------------------------------------------------------------------------
def _sqlite_check(db: Database, table: Table) -> list[str]:
    problems = []
    names = [table.name] + [lay.chunks for lay in table.layouts() if _exists(db, "table", lay.chunks)]
    for name in names:
        for (line,) in db.store.execute(f"PRAGMA integrity_check({quote(name)})"):
            if line != "ok":
                problems.append(f"SQLite integrity_check of '{name}': {line}")
    return problems


def _exists(db: Database, kind: str, name: str) -> bool:
    return db.store.one("SELECT 1 FROM sqlite_master WHERE type = ? AND name = ?", (kind, name)) is not None


# -- one vector column: rows, blobs and chunk rows --------------------------------------------
def _decode(blob: object, layout: ColumnLayout) -> np.ndarray | str:
    """The vectors of a stored value, or why they cannot be read."""
    if blob is None or blob == b"":
        return np.zeros((0, layout.dims), np.float32)
    if not isinstance(blob, bytes):
        return f"holds a {type(blob).__name__}, not a vector blob"
    if layout.is_array:
        if len(blob) < 4:
            return f"is {len(blob)} bytes, shorter than its header"
        (dims,) = struct.unpack_from("<I", blob)
        if dims != layout.dims:
            return f"says {dims} dimensions, the column has {layout.dims}"
        if (len(blob) - 4) % (4 * dims):
            return f"is {len(blob)} bytes, not a whole number of {dims}-dimensional vectors"
        vectors = np.frombuffer(blob, "<f4", offset=4).reshape(-1, dims)
    else:
        if len(blob) != 4 * layout.dims:
            return f"is {len(blob)} bytes, a {layout.dims}-dimensional vector takes {4 * layout.dims}"
        vectors = np.frombuffer(blob, "<f4").reshape(1, -1)
    if not np.isfinite(vectors).all():
        return "holds NaN or infinity"
    return vectors


def _chunk_rows(db: Database, layout: ColumnLayout) -> Iterator[tuple[int, list[tuple[int, int, int, int]]]]:
    """(doc_id, [(chunk_id, ord, start, end), ...]) per document, by doc id."""
    sql = (f"SELECT doc_id, chunk_id, ord, start, \"end\" FROM {quote(layout.chunks)} "
           "ORDER BY doc_id, ord, chunk_id")
    doc, group = None, []
    for doc_id, chunk_id, ord_, start, end in db.store.execute(sql):
        if doc_id != doc and group:
            yield doc, group
            group = []
        doc = doc_id
        group.append((chunk_id, ord_, start, end))
    if group:
        yield doc, group


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def _examples(ids: list[int]) -> str:
    shown = ", ".join(str(i) for i in ids[:LISTED])
    return shown + (f" and {len(ids) - LISTED} more" if len(ids) > LISTED else "")


def _check_column(db: Database, table: Table, layout: ColumnLayout) -> ColumnState:
    spec = table.vectors[layout.column.lower()]
    state = ColumnState(layout, model=bool(spec.model_name))
    col = f"column '{layout.column}'"
    if not _exists(db, "table", layout.chunks):
        state.missing_table = True
        state.problems.append(f"{col}: its chunk table {layout.chunks} is missing")
        return state
    if not _exists(db, "trigger", layout.chunks + "_del"):
        state.missing_trigger = True
        state.problems.append(f"{col}: the trigger that deletes a row's chunks with the row is missing")
    if not _exists(db, "index", layout.chunks + "_doc"):
        state.missing_doc_index = True
        state.problems.append(f"{col}: the index of its chunk rows by document is missing")
    c, t = quote(layout.chunks), quote(layout.table)
    state.orphans = int(db.store.one(
        f"SELECT COUNT(*) FROM {c} ch WHERE NOT EXISTS (SELECT 1 FROM {t} d WHERE d.id = ch.doc_id)")[0])
    if state.orphans:
        state.problems.append(f"{col}: {_n(state.orphans, 'chunk row')} belong to no row of the table")
    total = int(db.store.one(f"SELECT COUNT(*) FROM {c}")[0])
    every = max(1, math.ceil(total / VECTOR_SAMPLE))
    chunks = _chunk_rows(db, layout)
    pending = next(chunks, None)
    bad_reason: dict[int, str] = {}
    seen = 0
    for doc_id, blob in db.store.execute(f"SELECT id, {quote(layout.column)} FROM {t} ORDER BY id"):
        while pending is not None and pending[0] < doc_id:     # orphans: counted above
            pending = next(chunks, None)
        rows = []
        if pending is not None and pending[0] == doc_id:
            rows = pending[1]
            pending = next(chunks, None)
        vectors = _decode(blob, layout)
        if isinstance(vectors, str):
            state.bad_blobs.append(doc_id)
            bad_reason.setdefault(doc_id, vectors)
            continue
        ords = [r[1] for r in rows]
        if ords != list(range(len(vectors))):
            state.mismatched[doc_id] = len(vectors)
        for chunk_id, ord_, _, _ in rows:
            if isinstance(ord_, int) and 0 <= ord_ < len(vectors):
                state.expected.append(chunk_id)
                if seen % every == 0:
                    state.sample.append((chunk_id, doc_id, vectors[ord_]))
                seen += 1
    if state.bad_blobs:
        first = state.bad_blobs[0]
        state.problems.append(f"{col}: the vectors of {_n(len(state.bad_blobs), 'row')} cannot be read "
                              f"(id {_examples(state.bad_blobs)}; id {first}: the value {bad_reason[first]})")
    if state.mismatched:
        docs = sorted(state.mismatched)
        first = docs[0]
        have = int(db.store.one(f"SELECT COUNT(*) FROM {c} WHERE doc_id = ?", (first,))[0])
        state.problems.append(f"{col}: {_n(len(docs), 'row')} with chunk rows that do not match their vectors "
                              f"(id {_examples(docs)}; id {first} has {state.mismatched[first]} vectors and "
                              f"{have} chunk rows)")
    return state


# -- one vector column: the index -------------------------------------------------------------
def _pending_here(db: Database, layout: ColumnLayout) -> bool:
    return db.has_pending() and db.store.one(
        "SELECT 1 FROM temp._tessera_pending WHERE chunks = ? LIMIT 1", (layout.chunks,)) is not None


def _self_distance(vector: np.ndarray, metric: str) -> float:
    v = vector.astype(np.float64)
    if metric == "l2":
        return 0.0
    if metric == "cosine":
        norm = float(np.linalg.norm(v))
        return 1.0 - (1.0 if norm > 0 else 0.0)
    return 1.0 - float(v @ v)


def _file_state(idx, state: ColumnState, col: str) -> None:
    """The saved index as the connection found it (a note: the connection rebuilt its index from the
    table and searches with that), or as it is in the file now when it has gone bad since."""
    if not idx.persistent:
        state.notes.append(f"{col}: the index is kept in memory (an in-memory database); it is built "
                           "from the table")
        return
    if idx.problem is not None:
        state.file_problem = idx.problem
        state.notes.append(f"{col}: the saved index is unusable ({idx.problem}); this connection rebuilt "
                           "the index from the table and uses it; it is saved again when the connection closes")
        return
    try:
        idx.read_saved()
    except StorageError as exc:
        state.file_problem = getattr(exc, "reason", str(exc))
        state.notes.append(f"{col}: the saved index is unusable ({state.file_problem}); this connection's "
                           "index is whole and saves it again when the connection closes")
        idx.problem = state.file_problem
        idx.dirty_on_disk = True


def _check_index(db: Database, table: Table, state: ColumnState) -> None:
    layout = state.layout
    col = f"column '{layout.column}'"
    if state.missing_table:
        return
    idx = db.column_index(table, layout.column)
    if _pending_here(db, layout):
        _file_state(idx, state, col)
        state.notes.append(f"{col}: the open transaction has changed this column; the index holds "
                           "committed data only and was not compared (COMMIT, then CHECK again)")
        return
    try:
        index = idx.catch_up()        # what this connection searches with: loaded, or rebuilt
    except Exception as exc:  # noqa: BLE001 - reported: bad blobs make the index unbuildable
        state.problems.append(f"{col}: the index cannot be brought up to date ({type(exc).__name__}: {exc})")
        return
    _file_state(idx, state, col)
    have = index.chunk_ids()
    want = np.array(state.expected, np.int64)
    ghosts = np.setdiff1d(have, want)
    missing = np.setdiff1d(want, have)
    if len(ghosts):
        state.problems.append(f"{col}: the index holds {_n(len(ghosts), 'chunk')} that the table does not "
                              f"(chunk id {_examples(ghosts.tolist())})")
    if len(missing):
        lacking = set(missing.tolist())
        docs = sorted({d for c, d, _ in state.sample if c in lacking})
        state.problems.append(f"{col}: the index lacks {_n(len(missing), 'chunk')} of the table "
                              f"(chunk id {_examples(missing.tolist())})"
                              + (f", e.g. of id {_examples(docs)}" if docs else ""))
    absent = set(missing.tolist())
    wrong = []
    for chunk_id, doc_id, vector in state.sample:
        if chunk_id in absent:
            continue
        hits = index.search(vector, 1, allowed_docs=np.array([doc_id], np.int64))
        expect = _self_distance(vector, layout.metric)
        if not hits or hits[0][0] != doc_id or abs(hits[0][1] - expect) > DIST_TOL * (1 + abs(expect)):
            wrong.append(doc_id)
    if wrong:
        state.problems.append(f"{col}: the index holds other vectors than the table for "
                              f"{len(wrong)} of {len(state.sample)} chunks checked (id {_examples(sorted(set(wrong)))})")


# -- REPAIR -----------------------------------------------------------------------------------
def _repair_column(db: Database, table: Table, state: ColumnState) -> list[str]:
    layout = state.layout
    col = f"column '{layout.column}'"
    done: list[str] = []
    c, t = quote(layout.chunks), quote(layout.table)
    sql_changed = False
    if state.missing_table:
        db.store.execute(f"DROP TRIGGER IF EXISTS {quote(layout.chunks + '_del')}")
        unit_table.drop(db.store, layout)       # keyed by the lost table's chunk ids: made again with the rows
        create_chunk_table(db.store, layout)
        install_pending_triggers(db.store, layout)
        done.append(f"{col}: recreated its chunk table")
        sql_changed = True
        state = _check_column(db, table, layout)      # every row now lacks chunk rows
    if state.missing_trigger:
        db.store.execute(f"CREATE TRIGGER {quote(layout.chunks + '_del')} AFTER DELETE ON {t} "
                         f"BEGIN DELETE FROM {c} WHERE doc_id = OLD.id; END")
        done.append(f"{col}: recreated the trigger that deletes a row's chunks with the row")
    if state.missing_doc_index:
        db.store.execute(f"CREATE INDEX IF NOT EXISTS {quote(layout.chunks + '_doc')} ON {c} (doc_id)")
        done.append(f"{col}: recreated the index of chunk rows by document")
    if state.orphans:
        db.store.execute(f"DELETE FROM {c} WHERE NOT EXISTS (SELECT 1 FROM {t} d WHERE d.id = {c}.doc_id)")
        done.append(f"{col}: deleted {_n(state.orphans, 'chunk row')} that belonged to no row")
        sql_changed = True
    if state.bad_blobs:
        sql_changed = True
        if state.model:
            spec = table.vectors[layout.column.lower()]
            recompute(db, table, [spec], state.bad_blobs)
            done.append(f"{col}: embedded {_n(len(state.bad_blobs), 'row')} again from their 'from' columns "
                        f"(id {_examples(state.bad_blobs)})")
        else:
            empty = b"" if layout.is_array else None
            for start in range(0, len(state.bad_blobs), 500):
                part = state.bad_blobs[start:start + 500]
                marks = ",".join("?" * len(part))
                db.store.execute(f"UPDATE {t} SET {quote(layout.column)} = ? WHERE id IN ({marks})",
                                 (empty, *part))
                db.store.execute(f"DELETE FROM {c} WHERE doc_id IN ({marks})", tuple(part))
            done.append(f"{col}: cleared the unreadable vectors of {_n(len(state.bad_blobs), 'row')} "
                        f"(id {_examples(state.bad_blobs)}); they were lost and must be supplied again")
    if state.mismatched:
        sql_changed = True
        fixed = sorted(state.mismatched)
        for doc_id in fixed:
            spans: dict[int, tuple[int, int]] = {}
            for ord_, start, end in db.store.execute(
                    f"SELECT ord, start, \"end\" FROM {c} WHERE doc_id = ? ORDER BY chunk_id", (doc_id,)):
                spans.setdefault(ord_, (start, end))
            db.store.execute(f"DELETE FROM {c} WHERE doc_id = ?", (doc_id,))
            db.store.executemany(f"INSERT INTO {c} (doc_id, ord, start, \"end\") VALUES (?, ?, ?, ?)",
                                 [(doc_id, n, *spans.get(n, (None, None))) for n in range(state.mismatched[doc_id])])
        done.append(f"{col}: rebuilt the chunk rows of {_n(len(fixed), 'row')} from their vectors "
                    f"(id {_examples(fixed)})")
    idx = db.column_index(table, layout.column)
    if sql_changed or _pending_here(db, layout):
        # The index holds committed data only: drop it (file included); the first search after
        # COMMIT builds it again from the table.
        idx.index, idx.max_id, idx.seen_version = None, 0, None
        idx.dirty_on_disk = False
        idx.remove_file()
        done.append(f"{col}: dropped the index; it is rebuilt from the table at the first search after COMMIT")
        log.info("REPAIR TABLE %s: index of %s dropped, rebuilt after commit", table.name, layout.column)
    else:
        index = idx.rebuild()
        idx.save()
        done.append(f"{col}: rebuilt the index from the table ({len(index)} chunks of {index.live_docs} rows)")
        log.info("REPAIR TABLE %s: index of %s rebuilt (%d chunks)", table.name, layout.column, len(index))
    return done
