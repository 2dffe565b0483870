"""32 wire clients, 40% INSERTs that embed, 30% knn(), 30% MATCH, against one ``tessera serve``
for 60 s (issue 33): no INSERT waits past the 5 s lock wait (``ERROR 1205``): each embeds before it
takes the write lock, and the server's writers queue for it first come first served
(storage/write_queue.py); every acknowledged row is there, once, and searchable; readers never fail.
Latencies and rates are measured by tests/benchmarks/bench_write_lock.py (docs/benchmarks.md)."""
from __future__ import annotations

import signal

import pytest

from tests.server.support import connect, load_docs
from tests.server.write_mix import run_mix, summary, titles

pytestmark = [pytest.mark.slow, pytest.mark.stress]

CLIENTS, SECONDS = 32, 60.0


def test_writers_that_embed_beside_readers_lose_nothing(start_process, db_file):
    proc = start_process(db_file)
    load_docs(proc.port)
    clients = run_mix(proc.port, CLIENTS, SECONDS)
    assert all(not c.is_alive() for c in clients)
    assert [e for c in clients for e in c.other_errors] == []
    figures = summary(clients, SECONDS)
    print(figures)
    assert figures["insert"]["errors"] == {}                 # no writer waited past the lock wait
    assert set(figures["knn"]["errors"]) | set(figures["match"]["errors"]) == set()
    acknowledged = [t for c in clients for t in c.acknowledged]
    failed = {t for c in clients for t in c.failed}
    assert failed == set()
    assert len(acknowledged) > CLIENTS
    stored = titles(proc.port)
    assert sorted(stored) == sorted(acknowledged)            # none lost, none duplicated
    assert not failed & set(stored)                          # a failed INSERT left nothing
    with connect(proc.port) as c, c.cursor() as cur:         # every stored row is searchable
        cur.execute("SELECT COUNT(*) FROM docs WHERE knn(chunks, 100000, 'anything at all')")
        assert cur.fetchall()[0][0] == len(stored) + 3
    code, err = proc.stop(signal.SIGTERM)
    assert code == 0, err
