"""`tessera serve` throughput and latency: point SELECT and knn text query, over the wire and in-process.

    .venv/bin/python tests/benchmarks/bench_server.py                     # 1, 8, 32 clients, 10 s each
    .venv/bin/python tests/benchmarks/bench_server.py --seconds 5 --clients 1,8

One database of DOCS generated documents (a model-backed float_vector_array column, sentence
chunks), served by a `tessera serve` *process* on a free loopback port. For each query kind and
client count, N client *processes* (PyMySQL, one connection each) run the query in a closed loop for
the same wall time; in-process, N client processes run the same loop on their own
``tesseradb.connect()`` of the same file. Latency is timed around ``execute`` + ``fetchall`` in the
client. Every knn text is new (random words), so every query embeds its text: the query-embedding
cache is not what is measured.

- point: ``SELECT id, title, tag FROM docs WHERE id = ?`` (a random id)
- knn:   ``SELECT id, title, knn_dist() FROM docs WHERE knn(chunks, 5, ?)``

Writes tests/benchmarks/results/server.json and prints a table. The numbers depend on the machine
and on what else runs on it; docs/server.md gives the figures of one run and the machine.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import platform
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "tests" / "benchmarks" / "results" / "server.json"
DOCS = 1000
WORDS = ("certificate rotate backup region pasta water index vector shard replica token model chunk "
         "query latency disk memory socket thread commit rollback cluster node restart snapshot").split()
DDL = ("CREATE TABLE docs (title text, body text, tag string, chunks float_vector_array knn_type='hnsw' "
       "hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' from='title,body' "
       "chunk_strategy='sentence' max_tokens='64')")
QUERIES = {
    "point": "SELECT id, title, tag FROM docs WHERE id = {p}",
    "knn": "SELECT id, title, knn_dist() FROM docs WHERE knn(chunks, 5, {p})",
}


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def build(path: str) -> None:
    import tesseradb
    rng = random.Random(0)
    with tesseradb.connect(path) as con:
        con.execute(DDL)
        rows = [(f"doc {i} {_text(rng, 3)}", ". ".join(_text(rng, 10) for _ in range(4)), rng.choice("abc"))
                for i in range(DOCS)]
        con.executemany("INSERT INTO docs (title, body, tag) VALUES (?, ?, ?)", rows)
    con.close()


def _param(kind: str, rng: random.Random):
    return rng.randint(1, DOCS) if kind == "point" else f"{_text(rng, 6)} {rng.random():.6f}"


def client_loop(mode: str, target: str, kind: str, seconds: float, seed: int, barrier, out) -> None:
    """One client process: run the query until the time is up, report latencies (seconds)."""
    rng = random.Random(seed)
    if mode == "wire":
        import pymysql
        con = pymysql.connect(host="127.0.0.1", port=int(target), user="bench", database="docs", autocommit=True)
        sql = QUERIES[kind].format(p="%s")
    else:
        import tesseradb
        con = tesseradb.connect(target, autocommit=True)
        sql = QUERIES[kind].format(p="?")
    cur = con.cursor()
    cur.execute(sql, (_param(kind, rng),))              # warm: the model, the index, the connection
    cur.fetchall()
    barrier.wait()                                      # every client connected and warm: go
    latencies = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t = time.perf_counter()
        cur.execute(sql, (_param(kind, rng),))
        cur.fetchall()
        latencies.append(time.perf_counter() - t)
    con.close()
    out.put(latencies)


def run(mode: str, target: str, kind: str, clients: int, seconds: float) -> dict:
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    barrier = ctx.Barrier(clients)
    procs = [ctx.Process(target=client_loop, args=(mode, target, kind, seconds, 1000 * clients + i, barrier, out))
             for i in range(clients)]
    for p in procs:
        p.start()
    latencies = [x for _ in procs for x in out.get()]
    for p in procs:
        p.join()
    latencies.sort()
    pick = lambda q: latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000  # noqa: E731
    return {"mode": mode, "query": kind, "clients": clients, "queries": len(latencies),
            "qps": round(len(latencies) / seconds, 1), "p50_ms": round(pick(0.50), 2),
            "p99_ms": round(pick(0.99), 2)}


def serve(path: str) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-m", "tesseradb.clients.shell.main", "serve", path, "--port", "0"],
                            stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    match = re.search(r" on [^ ]+:(\d+) ", line)
    if match is None:
        raise SystemExit(f"server did not start: {line}")
    return proc, int(match.group(1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--clients", default="1,8,32")
    ap.add_argument("--queries", default="point,knn")
    args = ap.parse_args()
    counts = [int(x) for x in args.clients.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "docs.db")
        t = time.perf_counter()
        build(path)
        print(f"built {DOCS} docs in {time.perf_counter() - t:.1f} s", file=sys.stderr)
        server, port = serve(path)
        rows = []
        try:
            for kind in args.queries.split(","):
                for n in counts:
                    for mode, target in (("in-process", path), ("wire", str(port))):
                        row = run(mode, target, kind, n, args.seconds)
                        rows.append(row)
                        print(json.dumps(row), file=sys.stderr)
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=120)
    report = {"machine": f"{platform.machine()}, {os.cpu_count()} cores, {platform.python_version()}",
              "seconds_per_cell": args.seconds, "docs": DOCS, "rows": rows}
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print("| query | clients | in-process qps | wire qps | in-process p50 / p99 ms | wire p50 / p99 ms |")
    print("|---|---:|---:|---:|---:|---:|")
    for kind in args.queries.split(","):
        for n in counts:
            a = next(r for r in rows if r["query"] == kind and r["clients"] == n and r["mode"] == "in-process")
            b = next(r for r in rows if r["query"] == kind and r["clients"] == n and r["mode"] == "wire")
            print(f"| {kind} | {n} | {a['qps']} | {b['qps']} | {a['p50_ms']} / {a['p99_ms']} "
                  f"| {b['p50_ms']} / {b['p99_ms']} |")


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("server")
