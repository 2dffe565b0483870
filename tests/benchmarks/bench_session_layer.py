"""Per-statement cost of what every query gets around its handler (engine/sql/executor.py _as_query:
the passes of engine/sql/passes.py - @variables, information_schema, declared keys, exact division,
ONLY_FULL_GROUP_BY - and ROW_COUNT() & co) on a point SELECT and a one-row INSERT, against the bare
handlers, interleaved rounds, medians. (MySQL's INSERT key rules are part of the INSERT handler,
engine/sql/statements/insert.py, in both.)

    .venv/bin/python tests/benchmarks/bench_session_layer.py
"""
from __future__ import annotations

import statistics
import time

import tesseradb
from tesseradb.sql import executor

BARE = lambda handler: handler  # noqa: E731 - the handler without the passes around it
ROUNDS, SELECTS, INSERTS = 5, 3000, 1000


def measure() -> tuple[float, float]:
    """(us per point SELECT, us per one-row INSERT) with the query wrapper currently in the executor."""
    con = tesseradb.connect(":memory:", autocommit=True)
    cur = con.cursor()
    cur.execute("CREATE TABLE t (name string, n int)")
    cur.executemany("INSERT INTO t (name, n) VALUES (?, ?)", [(f"n{i}", i) for i in range(1000)])
    t0 = time.perf_counter()
    for i in range(SELECTS):
        cur.execute("SELECT name FROM t WHERE id = ?", (i % 1000 + 1,)).fetchall()
    select = (time.perf_counter() - t0) / SELECTS * 1e6
    t0 = time.perf_counter()
    for i in range(INSERTS):
        cur.execute("INSERT INTO t (name, n) VALUES ('x', ?)", (i,))
    insert = (time.perf_counter() - t0) / INSERTS * 1e6
    con.close()
    return select, insert


def main() -> None:
    wrapped = executor._as_query
    results: dict[str, list[tuple[float, float]]] = {"with": [], "bare": []}
    for _ in range(ROUNDS):
        for label, handlers in (("with", wrapped), ("bare", BARE)):
            executor._as_query = handlers
            results[label].append(measure())
    executor._as_query = wrapped
    for label, runs in results.items():
        sel = statistics.median(r[0] for r in runs)
        ins = statistics.median(r[1] for r in runs)
        print(f"{label:>5}: point SELECT {sel:.0f} us, one-row INSERT {ins:.0f} us (median of {ROUNDS})")


if __name__ == "__main__":
    main()
