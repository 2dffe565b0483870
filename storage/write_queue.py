"""The writers of one process queue for a database file's write lock, first come first served.

SQLite lets one writer in at a time; the others wait in its busy handler, which sleeps and tries
again (after 1, 2, 5 ... ms, then every 100 ms). That is not a queue. A writer that has waited long
tries every 100 ms, one that has just come tries at once, so under a steady stream of short write
transactions an old waiter can lose every time until its busy timeout ends (ERROR 1205), although
the lock was free most of that time. This is what made writers of ``tessera serve`` (one process,
a connection per client) fail with 1205 under load.

So a connection of this process takes its turn here before it asks SQLite for the lock
(``RowStore.begin``: BEGIN IMMEDIATE): waiters are served in the order they came, within their busy
timeout, and only the head of the queue asks SQLite, which then waits for other processes only.
The turn is given back when the transaction ends (COMMIT, ROLLBACK, a failed BEGIN, close); a turn
whose connection was garbage-collected is taken over. A forked child starts with empty queues.
"""
from __future__ import annotations

import os
import threading
import time
import weakref
from collections import deque

_POLL = 0.25        # a waiter looks again this often for a holder that was garbage-collected


class WriteQueue:
    """The queue of one database file (:func:`for_file`)."""

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._holder: weakref.ReferenceType | None = None
        self._waiting: deque[object] = deque()

    def _free(self) -> bool:
        return self._holder is None or self._holder() is None

    def holds(self, owner: object) -> bool:
        return self._holder is not None and self._holder() is owner

    def acquire(self, owner: object, timeout: float) -> bool:
        """Wait for ``owner``'s turn, at most ``timeout`` seconds; False when it did not come."""
        deadline = time.monotonic() + max(timeout, 0.0)
        with self._cond:
            if self.holds(owner):
                return True
            if self._free() and not self._waiting:
                self._holder = weakref.ref(owner)
                return True
            ticket = object()
            self._waiting.append(ticket)
            try:
                while not (self._waiting[0] is ticket and self._free()):
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return False
                    self._cond.wait(min(left, _POLL))
                self._holder = weakref.ref(owner)
                return True
            finally:
                self._waiting.remove(ticket)
                self._cond.notify_all()       # the next in line may now be the head

    def release(self, owner: object) -> None:
        """Give the turn back (nothing when ``owner`` does not hold it)."""
        if self._holder is None:
            return      # before every statement, mostly: no turn held (only ``owner``'s own thread gives it one)
        with self._cond:
            if self.holds(owner):
                self._holder = None
                self._cond.notify_all()


_queues: dict[tuple[int, int], WriteQueue] = {}
_guard = threading.Lock()


def for_file(path: str) -> WriteQueue | None:
    """The queue of the database file at ``path`` (one per file, whatever the path says), or None
    when it cannot be told (the file is gone)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    key = (st.st_dev, st.st_ino)
    with _guard:
        queue = _queues.get(key)
        if queue is None:
            queue = _queues[key] = WriteQueue()
        return queue


def _reset_in_child() -> None:
    global _guard
    _guard = threading.Lock()
    _queues.clear()           # the parent's turns belong to the parent's threads


os.register_at_fork(after_in_child=_reset_in_child)
