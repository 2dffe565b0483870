"""Bookkeeping of a vector index's positions: growable arrays, key -> positions lookups, a lock.

FAISS numbers vectors 0..n-1 in the order they were added (*positions*); the index keeps, per
position, its chunk id, doc id and whether it is alive, and finds the positions of given chunk or
doc ids through :class:`KeyIndex`. Pure numpy; no FAISS calls except ``one_thread``.
"""
from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import faiss
import numpy as np

from .ranking import first_of_runs


class RWLock:
    """Many readers or one writer; a waiting writer blocks new readers so it cannot starve."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._readers = 0
        self._writer = False
        self._writers_waiting = 0
        self._reading = _Reading(self)

    def read(self) -> _Reading:
        """``with lock.read():`` (one object serves every reader: it keeps no state of its own; a
        plain context manager, not a generator's: every search takes it)."""
        return self._reading

    @contextmanager
    def write(self) -> Iterator[None]:
        with self._cond:
            self._writers_waiting += 1
            while self._writer or self._readers:
                self._cond.wait()
            self._writers_waiting -= 1
            self._writer = True
        try:
            yield
        finally:
            with self._cond:
                self._writer = False
                self._cond.notify_all()


class _Reading:
    __slots__ = ("_rw",)

    def __init__(self, rw: RWLock) -> None:
        self._rw = rw

    def __enter__(self) -> None:
        rw = self._rw
        with rw._cond:
            while rw._writer or rw._writers_waiting:
                rw._cond.wait()
            rw._readers += 1

    def __exit__(self, *exc: object) -> None:
        rw = self._rw
        with rw._cond:
            rw._readers -= 1
            if not rw._readers and rw._writers_waiting:     # only a writer waits for the readers to leave
                rw._cond.notify_all()


class Column:
    """A growable 1-d numpy array (amortised appends)."""

    def __init__(self, dtype: Any, data: np.ndarray | None = None) -> None:
        self._data = np.empty(0, dtype) if data is None else np.array(data, dtype)
        self.n = len(self._data)

    def append(self, values: np.ndarray) -> None:
        need = self.n + len(values)
        if need > len(self._data):
            grown = np.empty(max(need, 2 * len(self._data), 1024), self._data.dtype)
            grown[: self.n] = self._data[: self.n]
            self._data = grown
        self._data[self.n : need] = values
        self.n = need

    def reserve(self, more: int) -> None:
        """Room for ``more`` values, allocated now (growing as appends do: small reservations, one per
        commit, must not copy the column each time): appends up to it never reallocate."""
        if self.n + more > len(self._data):
            grown = np.empty(max(self.n + more, 2 * len(self._data), 1024), self._data.dtype)
            grown[: self.n] = self._data[: self.n]
            self._data = grown

    @classmethod
    def owning(cls, data: np.ndarray) -> Column:
        """A column holding ``data`` itself (a writable 1-d array nobody else keeps), not a copy."""
        column = cls(data.dtype)
        column._data, column.n = data, len(data)
        return column

    @property
    def view(self) -> np.ndarray:
        return self._data[: self.n]

    @property
    def nbytes(self) -> int:
        """Bytes allocated (growth slack included)."""
        return self._data.nbytes


INT32_POSITIONS = 2**31 - 1    # positions below this are kept as int32


class KeyIndex:
    """Positions grouped by an int64 key (doc id, chunk id): a sorted part plus a short unsorted tail.

    Keys that arrive in ascending order (chunk and doc ids only grow, so a batch of new rows nearly
    always does) are appended to the sorted part in place, into room :meth:`reserve` made or that
    grows as :class:`Column` does: no copy of the sorted part. Others go to the tail, merged into the
    sorted part once it reaches 1/16 of it (a copy of it), so an append costs O(1) amortised and a
    lookup O(m log n + tail).
    """

    def __init__(self, keys: np.ndarray) -> None:
        dtype = np.int32 if len(keys) < INT32_POSITIONS else np.int64   # 4 bytes a position saved
        if ascending(keys):             # what a saved index of rows added in order holds: no sort
            sorted_keys, sorted_pos = np.array(keys, np.int64), np.arange(len(keys), dtype=dtype)
        else:
            order = np.argsort(keys, kind="stable")
            sorted_keys, sorted_pos = keys[order].astype(np.int64, copy=False), order.astype(dtype)
        self._sorted_keys, self._sorted_pos = Column.owning(sorted_keys), Column.owning(sorted_pos)
        self._tail_keys = Column(np.int64)
        self._tail_pos = Column(dtype)

    @property
    def _keys(self) -> np.ndarray:
        return self._sorted_keys.view

    @property
    def _pos(self) -> np.ndarray:
        return self._sorted_pos.view

    def reserve(self, more: int) -> None:
        """Room for ``more`` keys appended in ascending order (see :meth:`Column.reserve`)."""
        self._sorted_keys.reserve(more)
        self._sorted_pos.reserve(more)

    def append(self, keys: np.ndarray, start: int) -> None:
        if start + len(keys) >= INT32_POSITIONS and self._pos.dtype != np.int64:
            self._merge()
            self._sorted_pos = Column.owning(self._pos.astype(np.int64))
            self._tail_pos = Column(np.int64)
        if not self._tail_keys.n and len(keys) and ascending(keys) and (
                not self._sorted_keys.n or keys[0] >= self._keys[-1]):
            self._sorted_keys.append(keys)          # in place: the sorted part stays sorted
            self._sorted_pos.append(np.arange(start, start + len(keys), dtype=self._pos.dtype))
            return
        self._tail_keys.append(keys)
        self._tail_pos.append(np.arange(start, start + len(keys), dtype=np.int64))
        if self._tail_keys.n > max(1024, len(self._keys) // 16):
            self._merge()

    @property
    def nbytes(self) -> int:
        return (self._sorted_keys.nbytes + self._sorted_pos.nbytes + self._tail_keys.nbytes
                + self._tail_pos.nbytes)

    def _merge(self) -> None:
        keys, pos = self._tail_keys.view, self._tail_pos.view
        order = np.argsort(keys, kind="stable")
        at = np.searchsorted(self._keys, keys[order], side="right")
        self._sorted_keys = Column.owning(np.insert(self._keys, at, keys[order]))
        self._sorted_pos = Column.owning(np.insert(self._pos, at, pos[order].astype(self._pos.dtype)))
        self._tail_keys, self._tail_pos = Column(np.int64), Column(self._pos.dtype)

    def live(self, wanted: np.ndarray, alive: np.ndarray) -> tuple[np.ndarray, int]:
        """Live positions whose key is in ``wanted`` (sorted, distinct), and how many keys have one.

        Linear in the positions found: the sorted part yields them grouped by key, so counting the
        keys needs no sort.
        """
        lo = np.searchsorted(self._keys, wanted, side="left")
        hi = np.searchsorted(self._keys, wanted, side="right")
        found = self._pos[expand_ranges(lo, hi)]
        live = alive[found]
        key_of = np.repeat(np.arange(len(wanted)), hi - lo)[live]
        pos = found[live]
        n_keys = int(len(key_of) > 0) + int(np.count_nonzero(key_of[1:] != key_of[:-1]))
        if not self._tail_keys.n:
            return pos, n_keys
        in_tail = np.isin(self._tail_keys.view, wanted) & alive[self._tail_pos.view]
        if not in_tail.any():
            return pos, n_keys
        tail_keys = distinct(self._tail_keys.view[in_tail])
        n_keys += int(np.count_nonzero(~np.isin(tail_keys, wanted[key_of])))
        return np.concatenate([pos, self._tail_pos.view[in_tail]]), n_keys


@contextmanager
def one_thread() -> Iterator[None]:
    """Run FAISS single-threaded in this thread: one query gains nothing from an OpenMP team, and
    waking one costs milliseconds on small machines. The setting is per thread (an OpenMP ICV)."""
    before = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(1)
    try:
        yield
    finally:
        faiss.omp_set_num_threads(before)


def expand_ranges(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Concatenate ``arange(lo[i], hi[i])`` for every i, vectorised."""
    counts = hi - lo
    total = int(counts.sum())
    if not total:
        return np.empty(0, np.int64)
    starts = np.repeat(lo - np.cumsum(counts) + counts, counts)
    return starts + np.arange(total, dtype=np.int64)


def ascending(values: np.ndarray) -> bool:
    """Are the values in non-decreasing order? (Checked in blocks: no full-size temporary.)"""
    block = 1 << 16
    for start in range(0, max(len(values) - 1, 0), block):
        part = values[start:start + block + 1]
        if not bool(np.all(part[1:] >= part[:-1])):
            return False
    return True


def count_distinct(values: np.ndarray, where: np.ndarray) -> int:
    """How many distinct values there are where ``where`` is True. Values in ascending order (doc ids
    of rows added in order) are counted in blocks, without a sorted copy of them all."""
    if not ascending(values):
        return len(distinct(values[where]))
    block, count, last = 1 << 16, 0, None
    for start in range(0, len(values), block):
        part = values[start:start + block][where[start:start + block]]
        if not len(part):
            continue
        count += int(np.count_nonzero(part[1:] != part[:-1])) + int(part[0] != last)
        last = part[-1]
    return count


def distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort-based: much faster than ``np.unique`` on int64 here)."""
    out = np.sort(values)
    return out[first_of_runs(out)] if len(out) else out


def int_array(values: Iterable[int] | np.ndarray) -> np.ndarray:
    """Sorted distinct int64 ids from any iterable of integers (ids already so are not sorted again)."""
    arr = np.asarray(values if isinstance(values, np.ndarray) else list(values))
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"ids must be integers, got {arr.dtype}")
    arr = arr.astype(np.int64, copy=False).ravel()
    return arr if bool(np.all(arr[1:] > arr[:-1])) else distinct(arr)
