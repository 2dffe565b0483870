"""The writers of one process take the write lock in the order they came (storage/write_queue.py):
SQLite's busy handler retries on a timer, so an old waiter could lose every time to newcomers and
fail with 1205 while the lock was free most of the time (issue 33)."""
from __future__ import annotations

import gc
import threading
import time

import apsw
import pytest

from tesseradb.storage import write_queue
from tesseradb.storage.rowstore import RowStore


class Owner:
    pass


def _wait_until(cond, seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.005)


def test_waiters_get_their_turn_in_the_order_they_came():
    q = write_queue.WriteQueue()
    first, order, owners = Owner(), [], [Owner() for _ in range(4)]
    assert q.acquire(first, 0)

    def wait_for_turn(owner: Owner, n: int) -> None:
        assert q.acquire(owner, 30)
        order.append(n)
        q.release(owner)

    threads = []
    for n, owner in enumerate(owners):
        t = threading.Thread(target=wait_for_turn, args=(owner, n))
        t.start()
        threads.append(t)
        _wait_until(lambda: len(q._waiting) == n + 1)      # each one queued before the next comes
    q.release(first)
    for t in threads:
        t.join(30)
    assert order == [0, 1, 2, 3]


def test_a_waiter_gives_up_at_its_timeout_and_leaves_the_queue():
    q = write_queue.WriteQueue()
    holder, waiter = Owner(), Owner()
    assert q.acquire(holder, 0)
    assert q.acquire(waiter, 0) is False
    assert q.acquire(waiter, 0.05) is False
    assert len(q._waiting) == 0
    q.release(holder)
    assert q.acquire(waiter, 0)


def test_the_turn_of_a_collected_owner_is_taken_over():
    q = write_queue.WriteQueue()
    holder = Owner()
    assert q.acquire(holder, 0)
    del holder
    gc.collect()
    assert q.acquire(Owner(), 1)


def test_connections_of_one_file_share_one_queue_and_the_turn_ends_with_the_transaction(tmp_path):
    path = str(tmp_path / "x.db")
    a = RowStore(path, busy_timeout_ms=0)
    b = RowStore(str(tmp_path / "." / "x.db"), busy_timeout_ms=0)
    try:
        a.execute("CREATE TABLE t (x)")
        a.begin()
        with pytest.raises(apsw.BusyError):       # the queue says no at once: a's turn
            b.begin()
        a.execute("INSERT INTO t VALUES (1)")
        a.commit()
        b.begin()                                 # a's COMMIT gave the turn back
        b.execute("INSERT INTO t VALUES (2)")
        b.rollback()
        a.begin()                                 # and b's ROLLBACK
        a.rollback()
        assert [r[0] for r in b.execute("SELECT x FROM t")] == [1]
    finally:
        a.close()
        b.close()
