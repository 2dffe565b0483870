"""Saved vector indexes inside the database file, so that a closed database is exactly one file.

A saved index (the byte stream ``index_file`` writes: prefix, header, arrays, FAISS graph) is kept
in the table ``_tessera_index_cache`` as consecutive parts of at most ``PART`` bytes (SQLite caps
one value at 1 GB; a float32 graph of a million 384-wide vectors is 1.7 GB), under a generation
number; ``_tessera_index_cache_head`` names the current generation of each index:

    _tessera_index_cache(name TEXT, gen INTEGER, part INTEGER, data BLOB, PRIMARY KEY (name, gen, part))
    _tessera_index_cache_head(name TEXT PRIMARY KEY, gen INTEGER)

A save writes a new generation part by part, each part in a short write transaction of its own (so
other writers wait for one part, never for the whole graph), holding one part in memory at a time, then switches the head to it and
deletes the old generation in one last transaction: a crash keeps the old stream or the new one,
never a mix (SQLite's WAL gives the atomicity that side files got from temp file + fsync + rename);
parts of a generation that never became current are deleted by the next save. Two connections may
save the same index at once: each claims its generation (a part -1 row) when it starts, and the last
transaction switches the head only if every part it wrote is still there, so of two saves that
overlap one wins whole and the other changes nothing (before, each deleted the other's parts and the
head could name a stream with holes: a rebuild on the next open). A load reads the head
and its parts inside one read transaction (a savepoint), so it sees one committed stream even while
another connection saves a newer one. The stream keeps its own checksum: a part damaged on disk is
found by ``index_file`` and the index is rebuilt.

Saving is best-effort, as it always was (the index is a cache of what SQLite holds): when the
database is locked by another writer past the busy timeout, or opened read-only, the save is
skipped and the next open catches up from the rows.
"""
from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

import apsw

from .errors import IndexCorrupt
from .rowstore import RowStore

TABLE = "_tessera_index_cache"
HEAD = "_tessera_index_cache_head"
PART = 4 << 20          # bytes of each part (and of the one part a save holds in memory)
FIRST = 64 << 10        # bytes of part 0, which a save keeps in memory to the end (the prefix is written last)
_CREATE = (f"CREATE TABLE IF NOT EXISTS {TABLE} (name TEXT NOT NULL, gen INTEGER NOT NULL, "
           "part INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY (name, gen, part))",
           f"CREATE TABLE IF NOT EXISTS {HEAD} (name TEXT PRIMARY KEY, gen INTEGER NOT NULL)")


class CacheWriter:
    """A write-only stream that stores itself as parts; seeks back only into the first part (where
    ``index_file`` writes its prefix last).

    It holds at most one part and the first one in memory, whatever the size of the index: part 0
    (``FIRST`` bytes, the prefix and header) waits for the prefix until :meth:`finish`, and each
    later part is filled in one reused buffer and written into a zeroblob in place
    (``RowStore.insert_blob``), never copied into a bound value. Files saved with other part sizes
    (16 MB, part 0 included, before) read the same: a reader takes each part's length as stored."""

    def __init__(self, store: RowStore, name: str, gen: int):
        self.store, self.name, self.gen = store, name, gen
        self.first_size = min(FIRST, PART)
        self.first = bytearray()        # part 0 stays in memory until close: the prefix lands in it
        self.buffer = bytearray(PART)   # the part being filled (parts 1, 2, ...)
        self.filled = 0
        self.part = 0
        self.pos = 0
        self.written = 0                # parts stored so far

    def write(self, data: bytes) -> int:
        data = memoryview(data).cast("B")
        if self.pos < len(self.first):          # rewriting inside part 0 (the prefix, last)
            end = self.pos + len(data)
            if end > len(self.first):
                raise ValueError("a rewrite may not run past what was written")
            self.first[self.pos:end] = data
            self.pos = end
            return len(data)
        if self.pos != self._size():
            raise ValueError("the stream is written in order")
        taken = 0
        while taken < len(data):
            if self.part == 0:
                piece = data[taken:taken + self.first_size - len(self.first)]
                self.first += piece
                if len(self.first) == self.first_size:
                    self.part = 1
            else:
                piece = data[taken:taken + PART - self.filled]
                self.buffer[self.filled:self.filled + len(piece)] = piece
                self.filled += len(piece)
                if self.filled == PART:
                    self._insert(self.part, self.buffer)
                    self.part, self.filled = self.part + 1, 0
            taken += len(piece)
        self.pos += len(data)
        return len(data)

    def _size(self) -> int:
        return len(self.first) if self.part == 0 else self.first_size + PART * (self.part - 1) + self.filled

    def _insert(self, part: int, data: bytes | bytearray | memoryview) -> None:
        self.written += 1
        with _writing(self.store):
            self.store.insert_blob(f"INSERT INTO {TABLE} (name, gen, part, data) VALUES (?, ?, ?, zeroblob(?))",
                                   (self.name, self.gen, part, len(data)), TABLE, "data", data)

    def seek(self, pos: int) -> int:
        if pos > len(self.first):
            raise ValueError("a seek may only go back into the first part")
        self.pos = pos
        return pos

    def tell(self) -> int:
        return self.pos

    def flush(self) -> None:
        pass

    def finish(self) -> None:
        if self.part > 0 and self.filled:
            self._insert(self.part, memoryview(self.buffer)[:self.filled])
        self._insert(0, self.first)
        self.buffer = bytearray()


class CacheReader:
    """A read-only, seekable stream over the stored parts of one name."""

    def __init__(self, store: RowStore, name: str, gen: int, lengths: list[int]):
        self.store, self.name, self.gen = store, name, gen
        self.lengths = lengths
        self.size = sum(lengths)
        self.pos = 0
        self._part, self._data = -1, b""

    def read(self, n: int = -1) -> bytes:
        n = self.size - self.pos if n is None or n < 0 else min(n, self.size - self.pos)
        out = []
        while n > 0:
            part, offset = self._locate(self.pos)
            data = self._load(part)
            piece = data[offset:offset + n]
            if not piece:               # a part gone or shorter than when the stream was opened
                raise IndexCorrupt(self.name, f"the saved stream lacks part {part} of generation {self.gen}")
            out.append(piece)
            self.pos += len(piece)
            n -= len(piece)
        return b"".join(out)

    def readinto(self, target: memoryview | bytearray) -> int:
        """Fill ``target`` (up to its length) from the stream; the bytes read (0 at the end)."""
        target = memoryview(target).cast("B")
        done = 0
        while done < len(target) and self.pos < self.size:
            part, offset = self._locate(self.pos)
            data = self._load(part)
            piece = memoryview(data)[offset:offset + len(target) - done]
            if not len(piece):
                raise IndexCorrupt(self.name, f"the saved stream lacks part {part} of generation {self.gen}")
            target[done:done + len(piece)] = piece
            done += len(piece)
            self.pos += len(piece)
        return done

    def _locate(self, pos: int) -> tuple[int, int]:
        for part, length in enumerate(self.lengths):
            if pos < length:
                return part, pos
            pos -= length
        return len(self.lengths) - 1, self.lengths[-1]

    def _load(self, part: int) -> bytes:
        if part != self._part:
            row = self.store.one(f"SELECT data FROM {TABLE} WHERE name = ? AND gen = ? AND part = ?",
                                 (self.name, self.gen, part))
            self._part, self._data = part, bytes(row[0]) if row else b""
        return self._data

    def seek(self, pos: int) -> int:
        self.pos = max(0, min(pos, self.size))
        return self.pos

    def tell(self) -> int:
        return self.pos


def ensure(store: RowStore) -> None:
    for sql in _CREATE:
        store.execute(sql)


def exists(store: RowStore) -> bool:
    return store.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (HEAD,)) is not None


def current(store: RowStore, name: str) -> int | None:
    row = store.one(f"SELECT gen FROM {HEAD} WHERE name = ?", (name,)) if exists(store) else None
    return None if row is None else int(row[0])


@contextlib.contextmanager
def reading(store: RowStore, name: str) -> Iterator[CacheReader | None]:
    """The stored stream of ``name`` (None when there is none), read in one snapshot."""
    if not exists(store):
        yield None
        return
    with store.savepoint():
        gen = current(store, name)
        lengths = [] if gen is None else [int(r[0]) for r in store.execute(
            f"SELECT length(data) FROM {TABLE} WHERE name = ? AND gen = ? AND part >= 0 ORDER BY part", (name, gen))]
        yield CacheReader(store, name, gen, lengths) if lengths else None


class Unavailable(Exception):
    """The database cannot take the save now (another writer holds it, or it is read-only)."""


@contextlib.contextmanager
def _writing(store: RowStore) -> Iterator[None]:
    try:
        store.begin()
    except (apsw.BusyError, apsw.ReadOnlyError, apsw.CantOpenError) as exc:
        raise Unavailable(str(exc)) from exc
    try:
        yield
        store.commit()
    except BaseException:
        store.rollback()
        raise


def write(store: RowStore, name: str, emit: Callable[[CacheWriter], None]) -> bool:
    """Make what ``emit(writer)`` writes the stream of ``name``; False (nothing changed) when the
    database cannot take a write now (locked past the busy timeout, read-only)."""
    if store.in_transaction:
        return False            # never inside a user's transaction: a ROLLBACK would take it along
    try:
        with _writing(store):
            ensure(store)
            gen = int(store.one(f"SELECT COALESCE(MAX(gen), 0) + 1 FROM {TABLE} WHERE name = ?", (name,))[0])
            store.execute(f"DELETE FROM {TABLE} WHERE name = ? AND gen NOT IN "
                          f"(SELECT gen FROM {HEAD} WHERE name = ?)", (name, name))   # unfinished saves
            store.execute(f"INSERT INTO {TABLE} (name, gen, part, data) VALUES (?, ?, -1, x'')", (name, gen))
        writer = CacheWriter(store, name, gen)
        emit(writer)
        writer.finish()
        with _writing(store):
            have = int(store.one(f"SELECT COUNT(*) FROM {TABLE} WHERE name = ? AND gen = ?", (name, gen))[0])
            if have != writer.written + 1:     # parts 0..n and the claim: another save removed some
                store.execute(f"DELETE FROM {TABLE} WHERE name = ? AND gen = ?", (name, gen))
                return False
            store.execute(f"INSERT OR REPLACE INTO {HEAD} (name, gen) VALUES (?, ?)", (name, gen))
            store.execute(f"DELETE FROM {TABLE} WHERE name = ? AND gen <> ?", (name, gen))
            store.execute(f"DELETE FROM {TABLE} WHERE name = ? AND part = -1", (name,))
    except (Unavailable, apsw.ConstraintError):     # ConstraintError: another save took the generation
        return False
    return True


def remove(store: RowStore, name: str) -> None:
    """Forget the stream of ``name`` (inside the caller's transaction, if any)."""
    if exists(store):
        store.execute(f"DELETE FROM {HEAD} WHERE name = ?", (name,))
        store.execute(f"DELETE FROM {TABLE} WHERE name = ?", (name,))


def names(store: RowStore) -> list[str]:
    if not exists(store):
        return []
    return [r[0] for r in store.execute(f"SELECT name FROM {HEAD}")]
