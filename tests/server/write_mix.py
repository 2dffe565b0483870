"""The 32-client mix of issue 33 over real sockets: INSERTs that embed, knn() and MATCH searches
against one ``tessera serve``, each client with its own PyMySQL connection. Shared by the stress test
(tests/server/test_embedding_writers.py: what must hold) and the benchmark
(tests/benchmarks/bench_write_lock.py: what it costs)."""
from __future__ import annotations

import random
import statistics
import threading
import time

import pymysql

from tests.server.support import connect

WORDS = ("certificate rotate backup region pasta water index vector shard replica token model "
         "chunk query latency disk memory socket thread commit rollback").split()
QUESTIONS = ["how do I rotate certificates", "where are backups stored", "cooking pasta",
             "what is a replica", "disk latency problems"]
TERMS = ["certificate", "backup", "replica", "latency", "rollback"]
MIX = (("insert", 0.4), ("knn", 0.3), ("match", 0.3))


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 12))).capitalize() + "."


class Client(threading.Thread):
    """One client's loop of the mix until the deadline: what it was told, and how long each call took."""

    def __init__(self, port: int, number: int, deadline: float):
        super().__init__(daemon=True)
        self.port, self.number, self.deadline = port, number, deadline
        self.acknowledged: list[str] = []
        self.failed: list[str] = []
        self.errors: dict[str, list[int]] = {k: [] for k, _ in MIX}
        self.other_errors: list[BaseException] = []
        self.latencies: dict[str, list[float]] = {k: [] for k, _ in MIX}

    def run(self) -> None:
        rng = random.Random(self.number)
        try:
            con = connect(self.port, read_timeout=300)
        except pymysql.err.MySQLError as exc:
            self.other_errors.append(exc)
            return
        seq = 0
        with con:
            cur = con.cursor()
            while time.monotonic() < self.deadline:
                kind = rng.choices([k for k, _ in MIX], [w for _, w in MIX])[0]
                started = time.monotonic()
                try:
                    if kind == "insert":
                        seq += 1
                        title = f"c{self.number}-{seq}"
                        body = " ".join(_sentence(rng) for _ in range(rng.randint(2, 8)))
                        try:
                            cur.execute("INSERT INTO docs (title, body, tag) VALUES (%s, %s, 'load')", (title, body))
                        except pymysql.err.MySQLError:
                            self.failed.append(title)
                            raise
                        self.acknowledged.append(title)
                    elif kind == "knn":
                        cur.execute("SELECT id, title FROM docs WHERE knn(chunks, 3, %s)", (rng.choice(QUESTIONS),))
                        assert len(cur.fetchall()) <= 3
                    else:
                        cur.execute("SELECT id FROM docs WHERE MATCH(%s) LIMIT 5", (rng.choice(TERMS),))
                        cur.fetchall()
                    self.latencies[kind].append(time.monotonic() - started)
                except pymysql.err.MySQLError as exc:
                    self.errors[kind].append(exc.args[0])
                except BaseException as exc:  # noqa: BLE001 - reported by the caller
                    self.other_errors.append(exc)
                    return


def run_mix(port: int, clients: int, seconds: float) -> list[Client]:
    deadline = time.monotonic() + seconds
    running = [Client(port, n, deadline) for n in range(clients)]
    for c in running:
        c.start()
    for c in running:
        c.join(timeout=seconds + 600)
    return running


def titles(port: int) -> list[str]:
    with connect(port) as c, c.cursor() as cur:
        cur.execute("SELECT title FROM docs WHERE tag = 'load'")
        return [r[0] for r in cur.fetchall()]


def summary(clients: list[Client], seconds: float) -> dict:
    """Counts, rates, error numbers and latency percentiles (ms) per kind of call."""
    out: dict = {"clients": len(clients), "seconds": seconds}
    for kind, _ in MIX:
        lat = sorted(x * 1000 for c in clients for x in c.latencies[kind])
        errs = [e for c in clients for e in c.errors[kind]]
        out[kind] = {"ok": len(lat), "per_second": round(len(lat) / seconds, 2),
                     "errors": {str(e): errs.count(e) for e in sorted(set(errs))},
                     "p50_ms": round(statistics.median(lat), 1) if lat else None,
                     "p95_ms": round(lat[int(0.95 * (len(lat) - 1))], 1) if lat else None,
                     "max_ms": round(lat[-1], 1) if lat else None}
    return out
