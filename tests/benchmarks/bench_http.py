"""`tessera serve --http`: Manticore's HTTP JSON API against the MySQL protocol and in-process, p50.

    .venv/bin/python tests/benchmarks/bench_http.py                 # 200 rounds, 500 documents
    .venv/bin/python tests/benchmarks/bench_http.py --rounds 50

One database of DOCS generated documents (a model-backed float_vector_array column, sentence chunks,
kept in TESSERA_BENCH_CACHE between runs), served by one `tessera serve DB --port 0 --http-port 0`
process. Two statements, each through three paths, query by query in a rotating order:

- knn: a text knn (5 nearest documents, their title and distance). Every text is new (random words),
  so every path embeds it: the query-embedding cache is not what is measured. HTTP: ``POST /search``
  ``{"knn": {"field", "query", "k": 5}, "_source": ["title"]}``; MySQL and in-process: ``SELECT id,
  title, knn_dist() FROM docs WHERE knn(v, 5, ?)``.
- select: ``SELECT id, title, tag FROM docs WHERE id = N`` (a random id). HTTP: ``POST /sql?mode=raw``;
  MySQL: PyMySQL; in-process: the DB-API on its own connection to the file.

Wall time at a high load average measures the machine's queue as much as the server, so the run also
measures CPU time per request, which load hardly changes: for each statement and path, a block of
``--cpu-block`` requests in a row, the server process's CPU time (all its threads, from
/proc/<pid>/stat) and the benchmark's own (the client's share) divided by the requests.

HTTP goes through one keep-alive ``http.client`` connection (the standard library's: the leanest client,
so that the server's share shows), MySQL through one PyMySQL connection; each is timed around the
request and the decoded answer. Target (issue 35): HTTP p50 within 1.3x of the MySQL
path. Writes results/http.json and prints a table.
"""
from __future__ import annotations

import argparse
import os
import random
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import sections  # noqa: E402

DOCS = 500
TARGET = 1.3
WORDS = ("certificate rotate backup region pasta water index vector shard replica token model chunk "
         "query latency disk memory socket thread commit rollback cluster node restart snapshot").split()
DDL = ("CREATE TABLE docs (title text, body text, tag string, v float_vector_array knn_type='hnsw' "
       "hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' from='title,body' "
       "chunk_strategy='sentence' max_tokens='64')")
TESSERA = os.path.join(os.path.dirname(sys.executable), "tessera")
KNN = "SELECT id, title, knn_dist() FROM docs WHERE knn(v, 5, {p})"
SELECT = "SELECT id, title, tag FROM docs WHERE id = {p}"


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def database() -> str:
    import tesseradb
    path = common.CACHE / f"http_{DOCS}.db"
    if path.exists():
        return str(path)
    common.CACHE.mkdir(parents=True, exist_ok=True)
    tmp = str(path) + ".building"
    rng = random.Random(0)
    con = tesseradb.connect(tmp)
    con.execute(DDL)
    con.executemany("INSERT INTO docs (title, body, tag) VALUES (?, ?, ?)",
                    [(f"doc {i} {_text(rng, 3)}", ". ".join(_text(rng, 10) for _ in range(4)), rng.choice("abc"))
                     for i in range(DOCS)])
    con.commit()
    con.execute("SELECT id FROM docs WHERE knn(v, 1, 'build the index')").fetchall()
    con.close()                     # the last connection: SQLite folds the WAL into the file
    os.replace(tmp, path)
    if os.path.exists(tmp + ".tessera"):            # older releases kept the vector indexes beside the file
        os.replace(tmp + ".tessera", str(path) + ".tessera")
    return str(path)


class Served:
    def __init__(self, db: str):
        self.proc = subprocess.Popen([TESSERA, "serve", db, "--port", "0", "--http-port", "0"],
                                     stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
        first, second = self.proc.stderr.readline(), self.proc.stderr.readline()
        self.mysql_port = int(re.search(r" on [^ ]+:(\d+) ", first).group(1))
        self.url = re.search(r"HTTP JSON API on (http://\S+)", second).group(1)

    def cpu_ms(self) -> float:
        """CPU time of the server process so far (user + system, all threads), in ms."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(120)


def run(db: str, rounds: int, cpu_block: int) -> tuple[dict, dict]:
    import http.client
    import json
    from urllib.parse import urlsplit

    import pymysql
    import tesseradb
    served = Served(db)
    try:
        address = urlsplit(served.url)
        conn = http.client.HTTPConnection(address.hostname, address.port, timeout=120)

        def post(path: str, body: bytes) -> object:
            conn.request("POST", path, body=body, headers={"Content-Type": "application/json"})
            return json.loads(conn.getresponse().read())
        wire = pymysql.connect(host="127.0.0.1", port=served.mysql_port, user="root", autocommit=True)
        local = tesseradb.connect(db, autocommit=True)
        cur = wire.cursor()

        def knn_http(q: str) -> None:
            r = post("/search", json.dumps({"table": "docs", "knn": {"field": "v", "query": q, "k": 5},
                                            "_source": ["title"]}).encode())
            assert len(r["hits"]["hits"]) == 5, r

        def knn_mysql(q: str) -> None:
            cur.execute(KNN.format(p="%s"), (q,))
            assert len(cur.fetchall()) == 5

        def knn_local(q: str) -> None:
            assert len(local.execute(KNN.format(p="?"), (q,)).fetchall()) == 5

        def select_http(i: int) -> None:
            r = post("/sql?mode=raw", SELECT.format(p=i).encode())
            assert r[0]["data"][0]["id"] == i, r

        def select_mysql(i: int) -> None:
            cur.execute(SELECT.format(p="%s"), (i,))
            assert cur.fetchall()[0][0] == i

        def select_local(i: int) -> None:
            assert local.execute(SELECT.format(p="?"), (i,)).fetchall()[0][0] == i

        kinds = {"knn": [("http", knn_http), ("mysql", knn_mysql), ("in-process", knn_local)],
                 "select": [("http", select_http), ("mysql", select_mysql), ("in-process", select_local)]}
        for _, fn in kinds["knn"]:
            fn("warm up")
        for _, fn in kinds["select"]:
            fn(1)
        rng = random.Random(1)
        times = {kind: {name: [] for name, _ in sides} for kind, sides in kinds.items()}
        for r in range(rounds):
            for kind, sides in kinds.items():
                order = sides[r % 3:] + sides[:r % 3]
                for name, fn in order:
                    arg = _text(rng, 6) + f" {name}" if kind == "knn" else rng.randint(1, DOCS)
                    start = time.perf_counter()
                    fn(arg)
                    times[kind][name].append((time.perf_counter() - start) * 1000)
        cpu: dict[str, dict[str, dict[str, float]]] = {kind: {} for kind in kinds}
        for kind, sides in kinds.items():
            for name, fn in sides:
                args = [_text(rng, 6) + f" cpu {name}" if kind == "knn" else rng.randint(1, DOCS) for _ in range(cpu_block)]
                server, client = served.cpu_ms(), time.process_time()
                for arg in args:
                    fn(arg)
                cpu[kind][name] = {"server_ms": round((served.cpu_ms() - server) / cpu_block, 3),
                                   "client_ms": round((time.process_time() - client) * 1000 / cpu_block, 3)}
        conn.close()
        wire.close()
        local.close()
        return times, cpu
    finally:
        served.stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=200)
    p.add_argument("--cpu-block", type=int, default=100, help="requests per CPU-time block (per statement and path)")
    args = p.parse_args()
    db = database()
    load_before = common.loadavg()
    times, cpu = run(db, args.rounds, args.cpu_block)
    summary = {kind: {name: {"p50_ms": round(common.percentile(ms, 50), 3), "p90_ms": round(common.percentile(ms, 90), 3),
                             "n": len(ms)} for name, ms in sides.items()} for kind, sides in times.items()}
    ratios = {kind: round(s["http"]["p50_ms"] / s["mysql"]["p50_ms"], 3) for kind, s in summary.items()}
    data = {"docs": DOCS, "rounds": args.rounds, "cpu_block": args.cpu_block, "summary": summary, "cpu": cpu,
            "http_over_mysql_p50": ratios,
            "target": TARGET, "met": {kind: ratio <= TARGET for kind, ratio in ratios.items()},
            "loadavg_before": load_before, "loadavg_after": common.loadavg()}
    path = common.save_result("http", data)
    for kind, sides in summary.items():
        for name, row in sides.items():
            print(f"{kind:>6} {name:>10}  p50 {row['p50_ms']:8.3f} ms   p90 {row['p90_ms']:8.3f} ms   n={row['n']}")
        print(f"{kind:>6} http / mysql p50: {ratios[kind]:.2f}x (target <= {TARGET}x)")
        for name, row in cpu[kind].items():
            print(f"{kind:>6} {name:>10}  cpu per request: server {row['server_ms']:.3f} ms, client {row['client_ms']:.3f} ms")
    print(f"load {load_before} -> {data['loadavg_after']}; wrote {path}")
    sections.write_sections("http")


if __name__ == "__main__":
    main()
