"""storage/positions.py's RWLock, which every vector search and write takes: readers share it, a
writer waits for the readers inside to leave (and is woken when the last one does), and a reader
arriving while a writer waits queues behind it."""
from __future__ import annotations

import threading
import time

from tesseradb.storage.positions import RWLock


def test_readers_share_and_a_waiting_writer_goes_before_new_readers():
    lock = RWLock()
    order: list[str] = []
    first_in, release_first = threading.Event(), threading.Event()

    def reader(name: str, hold: threading.Event | None = None, entered: threading.Event | None = None) -> None:
        with lock.read():
            order.append(f"{name} in")
            if entered is not None:
                entered.set()
            if hold is not None:
                assert hold.wait(5)
            order.append(f"{name} out")

    def writer() -> None:
        with lock.write():
            order.append("writer")

    r1 = threading.Thread(target=reader, args=("r1", release_first, first_in))
    r1.start()
    assert first_in.wait(5)
    reader("r2")                        # a second reader gets in while the first holds the lock
    w = threading.Thread(target=writer)
    w.start()
    deadline = time.monotonic() + 5
    while not lock._writers_waiting and time.monotonic() < deadline:
        time.sleep(0.001)
    assert lock._writers_waiting == 1
    r3 = threading.Thread(target=reader, args=("r3",))
    r3.start()
    time.sleep(0.05)
    assert "writer" not in order and "r3 in" not in order     # the writer waits for r1; r3 waits for the writer
    release_first.set()                 # the last reader leaves: the waiting writer must be woken
    for t in (r1, w, r3):
        t.join(5)
        assert not t.is_alive()
    assert order == ["r1 in", "r2 in", "r2 out", "r1 out", "writer", "r3 in", "r3 out"]


def test_an_error_inside_a_read_releases_it():
    lock = RWLock()
    try:
        with lock.read():
            raise KeyError("x")
    except KeyError:
        pass
    assert lock._readers == 0
    done = threading.Event()

    def writer() -> None:
        with lock.write():
            done.set()
    threading.Thread(target=writer).start()
    assert done.wait(5)
