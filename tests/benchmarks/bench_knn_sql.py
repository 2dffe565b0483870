"""On-demand benchmark of vector search through SQL and the DB-API (not collected by pytest).

    .venv/bin/python tests/benchmarks/bench_knn_sql.py --sizes 10000,100000 --dims 384

Per size: a file database, a `float_vector` column (cosine, default HNSW settings) filled with
clustered vectors (one gaussian cluster per 100 vectors, like bench_vectors.py) by `executemany`
in committed batches, then:
- insert rate: rows/s of INSERT + COMMIT while the index is not loaded (SQLite only), and while it is
  (each COMMIT also adds the new vectors to the HNSW graph);
- the first query, which builds the index from SQLite; after close and reopen, the first query again
  (the index file is loaded);
- query p50/p99 in ms for `SELECT id, knn_dist() FROM b WHERE knn(v, 10, ?)` (execute + fetchall),
  unfiltered and with `AND tag < x` passing 10% and 1% of the rows;
- recall@10 against exact search (numpy, float64) for each.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

import tesseradb  # noqa: E402


def clustered(n: int, dims: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    label = rng.integers(0, len(centres), n)
    x = centres[label] + rng.standard_normal((n, dims), dtype=np.float32)
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def exact(x: np.ndarray, q: np.ndarray, k: int, mask: np.ndarray | None) -> list[set[int]]:
    ids = np.arange(1, len(x) + 1)
    if mask is not None:
        x, ids = x[mask], ids[mask]
    sims = q.astype(np.float64) @ x.astype(np.float64).T
    top = np.argsort(-sims, axis=1)[:, :k]
    return [set(ids[row].tolist()) for row in top]


def measure(con, sql: str, queries: np.ndarray, truth: list[set[int]]) -> tuple[float, float, float]:
    times, hits = [], []
    for q, t in zip(queries, truth):
        start = time.perf_counter()
        got = con.execute(sql, [q]).fetchall()
        times.append((time.perf_counter() - start) * 1000)
        hits.append(len({r[0] for r in got} & t) / max(len(t), 1))
    return float(np.percentile(times, 50)), float(np.percentile(times, 99)), float(np.mean(hits))


def run(n: int, args: argparse.Namespace, folder: str) -> None:
    rng = np.random.default_rng(n)
    centres = rng.standard_normal((max(1, n // 100), args.dims), dtype=np.float32)
    extra = args.extra
    x = clustered(n + extra, args.dims, rng, centres)
    queries = clustered(args.queries, args.dims, rng, centres)
    tags = np.arange(1, n + extra + 1) % 100
    path = os.path.join(folder, f"bench_{n}.db")
    con = tesseradb.connect(path)
    con.execute(f"CREATE TABLE b (tag int, v float_vector knn_type='hnsw' knn_dims='{args.dims}' "
                "hnsw_similarity='cosine')")
    con.commit()
    sql_insert = "INSERT INTO b (id, tag, v) VALUES (?, ?, ?)"

    start = time.perf_counter()
    for s in range(0, n, args.batch):
        con.executemany(sql_insert, [(i + 1, int(tags[i]), x[i]) for i in range(s, min(n, s + args.batch))])
        con.commit()
    cold = time.perf_counter() - start
    print(f"\n{n} vectors x {args.dims} dims (cosine, m=16, ef_construction=200), file database:")
    print(f"  insert, index not loaded    {n / cold:10,.0f} rows/s  ({cold:.1f} s, batches of {args.batch})")

    start = time.perf_counter()
    con.execute("SELECT id FROM b WHERE knn(v, 10, ?)", [queries[0]]).fetchall()
    print(f"  first query (builds index)  {time.perf_counter() - start:10.1f} s")

    start = time.perf_counter()
    small = max(1, args.batch // 10)
    for s in range(n, n + extra, small):
        con.executemany(sql_insert, [(i + 1, int(tags[i]), x[i]) for i in range(s, min(n + extra, s + small))])
        con.commit()
    warm = time.perf_counter() - start
    print(f"  insert, index loaded        {extra / warm:10,.0f} rows/s  ({extra} rows, batches of {small})")

    con.close()
    start = time.perf_counter()
    con = tesseradb.connect(path)
    con.execute("SELECT id FROM b WHERE knn(v, 10, ?)", [queries[0]]).fetchall()
    print(f"  reopen + first query        {time.perf_counter() - start:10.2f} s  (index file loaded)")

    plan = dict(con.execute("EXPLAIN SELECT id FROM b WHERE knn(v, 10, ?)", [queries[0]]).fetchall())["knn"]
    truth = exact(x, queries, 10, None)
    p50, p99, rec = measure(con, "SELECT id, knn_dist() FROM b WHERE knn(v, 10, ?)", queries, truth)
    print(f"  k=10 unfiltered             p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  recall@10 {rec:.3f}"
          f"  [{plan.split(', candidates')[0]}]")
    for limit, label in ((10, "10%"), (1, "1%")):
        mask = tags < limit
        sql = f"SELECT id, knn_dist() FROM b WHERE knn(v, 10, ?) AND tag < {limit}"
        plan = dict(con.execute("EXPLAIN " + sql, [queries[0]]).fetchall())["knn"]
        p50, p99, rec = measure(con, sql, queries, exact(x, queries, 10, mask))
        print(f"  k=10 filter passes {label:<4}     p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  recall@10 {rec:.3f}"
              f"  [{plan.split(', candidates')[0]}]")
    con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--dims", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--batch", type=int, default=5000, help="rows per executemany + COMMIT")
    ap.add_argument("--extra", type=int, default=2000, help="rows inserted after the index is loaded")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for n in (int(s) for s in args.sizes.split(",")):
            run(n, args, folder)


if __name__ == "__main__":
    main()
