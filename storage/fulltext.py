"""Full-text indexes: SQLite FTS5 tables kept in step with the rows by triggers (same transaction).

Two kinds, neither holding a second copy of the text:

* **row level** ``_tessera_fts_<table>``: an *external-content* FTS5 table over every ``text`` column
  of the table (``content=<table>``, ``content_rowid=id``). Triggers on the table add, remove and
  re-index a row's text inside the statement that writes it; ``highlight()``/``snippet()`` read the
  text from the row itself.
* **chunk level** ``_tessera_ftsc_<chunk table>``: a *contentless* FTS5 table (``content=''``,
  ``contentless_delete=1``) with one entry per chunk of a model column: the chunk's span of the
  column's ``from`` text. The rows' writer adds the entries of the chunks it writes from the texts it
  holds, just before their chunk rows; a trigger indexes any other chunk row inserted, cutting its
  span by SQLite from the row (the chunk rows are written after their row). Deleting a chunk row
  deletes its entry.

The tokenizer comes from Manticore's ``morphology`` table option (``TOKENIZERS``); ``_`` is a word
character, as in Manticore's default ``charset_table`` (``max_matches`` is one word).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar

import apsw

from .catalog import quote
from .rowstore import RowStore

TOKENIZERS = {
    "none": "unicode61 tokenchars '_'",
    "stem_en": "porter unicode61 tokenchars '_'",
}
REBUILD_BATCH = 5000
# REBUILT_SEGMENTS: a rebuilt index (REPAIR TABLE, an upgrade at open) is merged into one segment at the
# end. FTS5 writes a segment whenever its pending entries outgrow its hash (~1 MB) and merges them
# only by fours of a size, and a query reads every segment for each of its words: the whole manual's
# chunk index came out of a rebuild in 4 segments (0.14 s; the merge ~0.03 s more), and
# hybrid_match's text side query took 0.66 ms (median of 400 heading queries) on those, 0.53 on one,
# the same rows and scores (docs/hybrid.md, "How it runs")
Progress = Callable[[int, int], None] | None


def fts_name(table: str) -> str:
    return f"_tessera_fts_{table.lower()}"


def chunk_fts_name(chunks: str) -> str:
    return f"_tessera_ftsc_{chunks[len('_tessera_chunks_'):] if chunks.startswith('_tessera_chunks_') else chunks}"


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def built_tokenizer(store: RowStore, name: str) -> str | None:
    """The ``tokenize=`` an existing FTS5 table was created with (None: no such table, or none given)."""
    row = store.one("SELECT sql FROM sqlite_master WHERE name = ?", (name,))
    found = _TOKENIZE.search(row[0] or "") if row else None
    return found.group(1).replace("''", "'") if found else None


_TOKENIZE = re.compile(r"tokenize='((?:[^']|'')*)'")


def _exists(store: RowStore, name: str) -> bool:
    return store.one("SELECT 1 FROM sqlite_master WHERE name = ?", (name,)) is not None


class _Fts5Index:
    """What the row-level and chunk-level indexes share: an FTS5 table named ``name`` kept in step by
    triggers named ``name`` + each of ``TRIGGERS``."""
    TRIGGERS: ClassVar[tuple[str, ...]] = ()
    name: str

    def drop(self, store: RowStore) -> None:
        for suffix in self.TRIGGERS:
            store.execute(f"DROP TRIGGER IF EXISTS {quote(self.name + suffix)}")
        store.execute(f"DROP TABLE IF EXISTS {quote(self.name)}")

    def exists(self, store: RowStore) -> bool:
        return _exists(store, self.name)

    def optimize(self, store: RowStore) -> None:
        """Merge the index's segments into one (OPTIMIZE TABLE)."""
        store.execute(f"INSERT INTO {quote(self.name)} ({quote(self.name)}) VALUES ('optimize')")

    def triggers_exist(self, store: RowStore) -> bool:
        return all(_exists(store, self.name + s) for s in self.TRIGGERS)

    def indexes_as_defined(self, store: RowStore) -> bool:
        """Whether the existing index indexes what its definition now says (beyond the tokenizer)."""
        return True


# -- row level ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TextIndex(_Fts5Index):
    """The row-level full-text index of one table."""
    TRIGGERS: ClassVar[tuple[str, ...]] = ("_ai", "_ad", "_au")
    table: str
    columns: tuple[str, ...]            # the table's text columns, in table order
    tokenize: str

    @property
    def name(self) -> str:
        return fts_name(self.table)

    def _cols(self, prefix: str = "") -> str:
        return ", ".join(f"{prefix}{quote(c)}" for c in self.columns)

    def create(self, store: RowStore) -> None:
        """Create the FTS5 table and its triggers (empty: call :meth:`rebuild` for existing rows)."""
        if not self.columns:
            return
        f, t = quote(self.name), quote(self.table)
        store.execute(f"CREATE VIRTUAL TABLE {f} USING fts5({self._cols()}, content={_sql_string(self.table)}, "
                      f"content_rowid='id', tokenize={_sql_string(self.tokenize)})")
        add = f"INSERT INTO {f} (rowid, {self._cols()}) VALUES (NEW.id, {self._cols('NEW.')});"
        remove = (f"INSERT INTO {f} ({f}, rowid, {self._cols()}) VALUES ('delete', OLD.id, {self._cols('OLD.')});")
        watched = ", ".join(quote(c) for c in ("id",) + self.columns)
        store.execute(f"CREATE TRIGGER {quote(self.name + '_ai')} AFTER INSERT ON {t} BEGIN {add} END")
        store.execute(f"CREATE TRIGGER {quote(self.name + '_ad')} AFTER DELETE ON {t} BEGIN {remove} END")
        store.execute(f"CREATE TRIGGER {quote(self.name + '_au')} AFTER UPDATE OF {watched} ON {t} "
                      f"BEGIN {remove} {add} END")

    def rebuild(self, store: RowStore, on_progress: Progress = None) -> int:
        """Index every row again, in batches of ids (``on_progress(done, total)`` after each)."""
        if not self.columns:
            return 0
        f, t = quote(self.name), quote(self.table)
        store.execute(f"INSERT INTO {f} ({f}) VALUES ('delete-all')")
        total = int(store.one(f"SELECT COUNT(*) FROM {t}")[0])
        done, last = 0, None
        while True:
            where = "" if last is None else "WHERE id > ?"
            ids = [r[0] for r in store.execute(f"SELECT id FROM {t} {where} ORDER BY id LIMIT {REBUILD_BATCH}",
                                                () if last is None else (last,))]
            if not ids:
                break
            store.execute(f"INSERT INTO {f} (rowid, {self._cols()}) SELECT id, {self._cols()} FROM {t} "
                          "WHERE id BETWEEN ? AND ?", (ids[0], ids[-1]))
            done, last = done + len(ids), ids[-1]
            if on_progress is not None:
                on_progress(done, total)
        self.optimize(store)        # one segment (REBUILT_SEGMENTS)
        return done

    def check(self, store: RowStore) -> list[str]:
        """What is wrong with the index, compared with the rows (empty: nothing)."""
        if not self.columns:
            return []
        if not self.exists(store):
            return [f"the full-text index {self.name} is missing"]
        problems = [] if self.triggers_exist(store) else [f"a trigger that keeps {self.name} in step is missing"]
        f = quote(self.name)
        try:
            store.execute(f"INSERT INTO {f} ({f}, rank) VALUES ('integrity-check', 1)")
        except apsw.Error as exc:      # CorruptError and kin: FTS5 found a mismatch
            problems.append(f"the full-text index {self.name} does not match the rows: "
                            f"{str(exc).split(': ', 1)[-1]}")
        return problems

    # -- querying ------------------------------------------------------------------------------
    def bm25(self, weights: dict[str, float] | None = None) -> str:
        """SQL for the BM25 relevance of the current match, higher is better (FTS5's bm25() is negated)."""
        args = ""
        if weights:
            args = ", " + ", ".join(repr(float(weights.get(c.lower(), 1.0))) for c in self.columns)
        return f"-bm25({quote(self.name)}{args})"

    def column_index(self, column: str) -> int | None:
        low = [c.lower() for c in self.columns]
        return low.index(column.lower()) if column.lower() in low else None


# -- chunk level ----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ChunkTextIndex(_Fts5Index):
    """The chunk-level full-text index of one model column: per chunk, two fields, ``heading`` (the
    chunk's context line, else its heading path) and ``body`` (its span of the ``from`` text), ranked
    by BM25 with the heading field weighted ``HEADING_WEIGHT`` (BM25F's title boost; FTS5's ``rank``)."""
    TRIGGERS: ClassVar[tuple[str, ...]] = ("_ai", "_ad")
    COLUMNS: ClassVar[tuple[str, ...]] = ("heading", "body")
    HEADING_WEIGHT: ClassVar[float] = 2.0
    table: str
    chunks: str                         # the column's chunk table
    sources: tuple[str, ...]            # the column's ``from`` columns, in order
    tokenize: str
    separator: str = "' '"              # SQL: how the ``from`` columns are joined (a blank line for markdown)

    @property
    def name(self) -> str:
        return chunk_fts_name(self.chunks)

    def bm25(self) -> str:
        """SQL for an entry's relevance to the current match, higher is better (as ``-rank``)."""
        return f"-bm25({quote(self.name)}, {self.HEADING_WEIGHT!r}, 1.0)"

    def source_sql(self, row: str = "") -> str:
        """The ``from`` text as SQL: the columns joined by the separator, NULL as '' (as the embedder does)."""
        return f" || {self.separator} || ".join(f"COALESCE(CAST({row}{quote(c)} AS TEXT), '')" for c in self.sources)

    def _span_sql(self, chunk: str, row: str) -> str:
        return f"substr({self.source_sql(row)}, {chunk}start + 1, {chunk}\"end\" - {chunk}start)"

    def _indexed_sql(self, chunk: str, row: str) -> str:
        """What a chunk's entry indexes: its context line (``chunk_context='heading'``: what the model
        read before it), else its heading path, as the heading field; its span of the ``from`` text."""
        return f"COALESCE({chunk}context, {chunk}heading, ''), {self._span_sql(chunk, row)}"

    def create(self, store: RowStore) -> None:
        f = quote(self.name)
        store.execute(f"CREATE VIRTUAL TABLE {f} USING fts5({', '.join(self.COLUMNS)}, content='', "
                      f"contentless_delete=1, tokenize={_sql_string(self.tokenize)})")
        store.execute(f"INSERT INTO {f} ({f}, rank) VALUES ('rank', 'bm25({self.HEADING_WEIGHT!r}, 1.0)')")
        store.execute(self._insert_trigger())
        store.execute(f"CREATE TRIGGER {quote(self.name + '_ad')} AFTER DELETE ON {quote(self.chunks)} "
                      f"BEGIN DELETE FROM {f} WHERE rowid = OLD.chunk_id; END")

    def _insert_trigger(self, *, previous: bool = False) -> str:
        """The trigger that indexes a new chunk row that has no entry yet: what it writes is what the
        index holds. The rows' writer gives its chunks their entries itself, first, from the texts it
        holds (:meth:`add_entries`), and the trigger skips those: cutting a chunk's span in SQL reads
        its document's text again from the start, for every chunk. ``previous``: the trigger of the
        releases before that, which indexed every new chunk row (entries of the same text)."""
        f, c, t = quote(self.name), quote(self.chunks), quote(self.table)
        skip = "" if previous else f" AND NOT EXISTS (SELECT 1 FROM {f} WHERE rowid = NEW.chunk_id)"
        return (f"CREATE TRIGGER {quote(self.name + '_ai')} AFTER INSERT ON {c} WHEN NEW.start IS NOT NULL{skip} "
                f"BEGIN INSERT INTO {f} (rowid, {', '.join(self.COLUMNS)}) SELECT NEW.chunk_id, "
                f"{self._indexed_sql('NEW.', 'r.')} FROM {t} r WHERE r.id = NEW.doc_id; END")

    def _stored_insert_trigger(self, store: RowStore) -> str | None:
        row = store.one("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?", (self.name + "_ai",))
        return None if row is None else row[0]

    def indexes_as_defined(self, store: RowStore) -> bool:
        """False when the index was built to hold other text than this release indexes per chunk (its
        insert trigger, which SQLite keeps as written, differs: e.g. an index from before the chunks'
        context line). The previous release's trigger indexed the same text (:meth:`has_previous_trigger`).
        A missing trigger is CHECK TABLE's to report, not a reason to rebuild."""
        stored = self._stored_insert_trigger(store)
        return stored is None or stored in (self._insert_trigger(), self._insert_trigger(previous=True))

    def has_previous_trigger(self, store: RowStore) -> bool:
        """Whether the index is kept by the insert trigger of the releases before the writer gave chunks
        their entries itself (:meth:`replace_previous_trigger` upgrades it)."""
        return self._stored_insert_trigger(store) == self._insert_trigger(previous=True)

    def replace_previous_trigger(self, store: RowStore) -> None:
        """The current insert trigger in place of the previous one (same entries: nothing to rebuild)."""
        store.execute(f"DROP TRIGGER IF EXISTS {quote(self.name + '_ai')}")
        store.execute(self._insert_trigger())

    def takes_entries(self, store: RowStore) -> bool:
        """Whether a writer may give new chunk rows their entries itself (:meth:`add_entries`, before
        the rows): the insert trigger is this release's, which skips a chunk that has one. Under any
        other trigger (a file not upgraded yet) the trigger indexes every row, and an entry added
        before it would be a second one for the same chunk."""
        return self._stored_insert_trigger(store) == self._insert_trigger()

    def add_entries(self, store: RowStore, entries: list[tuple[int, str, str]]) -> None:
        """(chunk_id, heading field, body) of chunk rows about to be written with those ids: the
        heading field is ``COALESCE(context, heading, '')`` and the body its span of the ``from``
        text, exactly what the trigger would index."""
        f = quote(self.name)
        store.executemany(f"INSERT INTO {f} (rowid, {', '.join(self.COLUMNS)}) VALUES (?, ?, ?)", entries)

    def rebuild(self, store: RowStore, on_progress: Progress = None) -> int:
        f, c, t = quote(self.name), quote(self.chunks), quote(self.table)
        store.execute(f"DELETE FROM {f}")
        total = int(store.one(f"SELECT COUNT(*) FROM {c} WHERE start IS NOT NULL")[0])
        done, last = 0, 0
        while True:
            row = store.one(f"SELECT MAX(chunk_id), COUNT(*) FROM (SELECT chunk_id FROM {c} WHERE chunk_id > ? "
                            f"AND start IS NOT NULL ORDER BY chunk_id LIMIT {REBUILD_BATCH})", (last,))
            if not row or row[0] is None:
                break
            store.execute(f"INSERT INTO {f} (rowid, {', '.join(self.COLUMNS)}) SELECT k.chunk_id, {self._indexed_sql('k.', 'r.')} "
                          f"FROM {c} k JOIN {t} r ON r.id = k.doc_id WHERE k.chunk_id > ? AND k.chunk_id <= ? "
                          "AND k.start IS NOT NULL", (last, row[0]))
            done, last = done + int(row[1]), int(row[0])
            if on_progress is not None:
                on_progress(done, total)
        self.optimize(store)        # one segment (REBUILT_SEGMENTS)
        return done

    def check(self, store: RowStore) -> list[str]:
        if not self.exists(store):
            return [f"the chunk full-text index {self.name} is missing"]
        problems = []
        if not self.triggers_exist(store):
            problems.append(f"a trigger that keeps {self.name} in step is missing")
        f, c = quote(self.name), quote(self.chunks)
        if not _exists(store, self.chunks):      # the column check reports the chunk table itself
            return problems
        try:
            store.execute(f"INSERT INTO {f} ({f}) VALUES ('integrity-check')")
        except apsw.Error as exc:      # CorruptError and kin
            problems.append(f"the chunk full-text index {self.name} is corrupt: {str(exc).split(': ', 1)[-1]}")
            return problems
        missing = store.one(f"SELECT COUNT(*) FROM {c} WHERE start IS NOT NULL AND chunk_id NOT IN "
                            f"(SELECT rowid FROM {f})")[0]
        extra = store.one(f"SELECT COUNT(*) FROM {f} WHERE rowid NOT IN (SELECT chunk_id FROM {c})")[0]
        if missing or extra:
            problems.append(f"the chunk full-text index {self.name} lacks {missing} chunk(s) and has {extra} "
                            "of deleted chunks")
        return problems


def create_all(store: RowStore, indexes: Sequence[TextIndex | ChunkTextIndex], on_progress: Progress = None) -> None:
    """Create and fill indexes (a database written before full-text search existed)."""
    for index in indexes:
        index.drop(store)
        index.create(store)
        index.rebuild(store, on_progress)
