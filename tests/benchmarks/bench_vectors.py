"""On-demand benchmark of storage.vectors.VectorIndex (not collected by pytest).

    .venv/bin/python tests/benchmarks/bench_vectors.py --sizes 10000,100000 --dims 384
    .venv/bin/python tests/benchmarks/bench_vectors.py --sizes 100000 --calibrate   # exact vs graph timings
    .venv/bin/python tests/benchmarks/bench_vectors.py --sizes 1000000 --queries 100

Data: clustered random vectors (one gaussian cluster per 100 vectors, spread 1.0 around centres drawn
from N(0, 1)), L2-normalised, cosine metric; queries drawn from the same distribution. Reports the
insert rate, query p50/p99 for k=10, recall@10 against exact search, and filtered-query rows
(allowed_docs a random subset of the documents).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

from tesseradb.storage import vector_plan  # noqa: E402
from tesseradb.storage.vectors import VectorIndex  # noqa: E402


def clustered(n: int, dims: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    out = np.empty((n, dims), np.float32)
    for start in range(0, n, 100_000):  # in slices, to keep float64 temporaries small at 1M
        stop = min(n, start + 100_000)
        label = rng.integers(0, len(centres), stop - start)
        part = centres[label] + rng.standard_normal((stop - start, dims), dtype=np.float32)
        out[start:stop] = part / np.linalg.norm(part, axis=1, keepdims=True)
    return out


def exact_topk(x: np.ndarray, q: np.ndarray, k: int, allowed: np.ndarray | None = None) -> list[set[int]]:
    """Ground truth with one chunk per doc (doc id == row number), in row blocks for every query at once."""
    rows = np.arange(len(x)) if allowed is None else np.sort(allowed)
    best_ids = np.empty((len(q), 0), np.int64)
    best_sims = np.empty((len(q), 0), np.float32)
    for s in range(0, len(rows), 100_000):
        block = rows[s : s + 100_000]
        part = x[s : s + len(block)] if allowed is None else x[block]
        sims = q @ part.T  # (queries, block)
        top = np.argpartition(-sims, min(k, len(block)) - 1, axis=1)[:, :k]
        best_ids = np.hstack([best_ids, block[top]])
        best_sims = np.hstack([best_sims, np.take_along_axis(sims, top, axis=1)])
        keep = np.argsort(-best_sims, axis=1)[:, :k]
        best_ids = np.take_along_axis(best_ids, keep, axis=1)
        best_sims = np.take_along_axis(best_sims, keep, axis=1)
    return [set(row.tolist()) for row in best_ids]


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def row(label: str, ms: list[float], recall: float | None, extra: str = "") -> None:
    rec = "" if recall is None else f"  recall@10 {recall:.3f}"
    print(f"  {label:<34} p50 {np.percentile(ms, 50):8.2f} ms  p99 {np.percentile(ms, 99):8.2f} ms{rec}  {extra}",
          flush=True)


def recall_of(index: VectorIndex, q: np.ndarray, truth: list[set[int]], k: int, **kw: object) -> float:
    hits = [len({d for d, _, _ in index.search(qi, k, **kw)} & t) / max(len(t), 1) for qi, t in zip(q, truth)]
    return float(np.mean(hits))


def run_size(n: int, args: argparse.Namespace) -> None:
    rng = np.random.default_rng(n)
    centres = rng.standard_normal((max(1, n // 100), args.dims), dtype=np.float32)
    x = clustered(n, args.dims, rng, centres)
    q = clustered(args.queries, args.dims, rng, centres)
    ids = np.arange(n, dtype=np.int64)
    index = VectorIndex(args.dims, "cosine")
    t = time.perf_counter()
    for s in range(0, n, args.batch):
        index.add(ids[s : s + args.batch] * 10 + 7, ids[s : s + args.batch], x[s : s + args.batch])
    build = time.perf_counter() - t
    print(f"\n{n} vectors x {args.dims} dims (cosine, m=16, ef_construction=200, batches of {args.batch}):")
    print(f"  insert {n / build:,.0f} vectors/s ({build:.1f} s)", flush=True)
    truth = exact_topk(x, q, args.k)
    plan = index.explain(args.k)
    ms = [t for qi in q for t in timed(lambda: index.search(qi, args.k), 1)]
    row(f"k={args.k} unfiltered ({plan['path']}, ef={plan['ef']})", ms, recall_of(index, q, truth, args.k))
    for ef in args.ef:
        ms = [t for qi in q for t in timed(lambda: index.search(qi, args.k, ef=ef), 1)]
        row(f"k={args.k} unfiltered ef={ef}", ms, recall_of(index, q, truth, args.k, ef=ef))
    for frac in args.filtered:
        allowed = rng.choice(n, max(1, int(n * frac)), replace=False)
        plan = index.explain(args.k, allowed_docs=allowed)
        ms = [t for qi in q for t in timed(lambda: index.search(qi, args.k, allowed_docs=allowed), 1)]
        rec = recall_of(index, q, exact_topk(x, q, args.k, allowed), args.k, allowed_docs=allowed)
        row(f"k={args.k} allowed {frac:.1%} ({plan['path']}, ef={plan['ef']})", ms, rec,
            f"candidates {plan['candidates']}, exact up to {plan['exact_max_chunks']}")
    if args.calibrate:
        calibrate(index, x, q, n, rng, args)


def calibrate(index: VectorIndex, x: np.ndarray, q: np.ndarray, n: int, rng: np.random.Generator,
              args: argparse.Namespace) -> None:
    """Time both paths on the same allowed sets, to place the exact/graph threshold."""
    print("  calibration: allowed fraction -> exact ms / graph ms (p50), graph recall", flush=True)
    saved = vector_plan.EXACT_MIN_CHUNKS, vector_plan.EXACT_COST_RATIO
    try:
        for frac in (0.001, 0.003, 0.01, 0.03, 0.1, 0.2, 0.3, 0.5, 1.0):
            allowed = rng.choice(n, max(1, int(n * frac)), replace=False)
            qs = q[: min(len(q), 50)]
            timings = {}
            for path, (lo, ratio) in {"exact": (10**12, 0.0), "graph": (0, 0.0)}.items():
                vector_plan.EXACT_MIN_CHUNKS, vector_plan.EXACT_COST_RATIO = lo, ratio
                timings[path] = float(np.median([t for qi in qs for t in
                                                 timed(lambda: index.search(qi, args.k, allowed_docs=allowed), 1)]))
                plan = index.explain(args.k, allowed_docs=allowed)
            rec = recall_of(index, qs, exact_topk(x, qs, args.k, allowed), args.k, allowed_docs=allowed)
            work = plan["ef"] * 2 * index.m
            print(f"    {frac:6.1%} {len(allowed):>8} chunks"
                  f"  exact {timings['exact']:8.2f}  graph {timings['graph']:8.2f}"
                  f"  (ef {plan['ef']}, ef*2m {work}, chunks/(ef*2m) {len(allowed) / work:.2f})  recall {rec:.3f}",
                  flush=True)
    finally:
        vector_plan.EXACT_MIN_CHUNKS, vector_plan.EXACT_COST_RATIO = saved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000", help="comma-separated vector counts")
    ap.add_argument("--dims", type=int, default=384)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--batch", type=int, default=10_000, help="vectors per add() call")
    ap.add_argument("--ef", default="", help="extra rows with these explicit ef values, e.g. 96,200 "
                    "(an explicit ef only raises the automatic one)")
    ap.add_argument("--filtered", default="0.01,0.1,0.5", help="allowed_docs fractions for filtered rows")
    ap.add_argument("--calibrate", action="store_true", help="time the exact and graph paths side by side")
    args = ap.parse_args()
    args.ef = [int(e) for e in args.ef.split(",") if e]
    args.filtered = [float(f) for f in args.filtered.split(",") if f]
    for n in (int(s) for s in args.sizes.split(",")):
        run_size(n, args)


if __name__ == "__main__":
    main()
