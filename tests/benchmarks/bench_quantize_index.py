"""Quantized vector indexes at scale: memory, build time, latency and recall, float32 vs 8bit vs 1bit vs
multi-bit RaBitQ (rabitq2, rabitq4).

    .venv/bin/python tests/benchmarks/bench_quantize_index.py                    # 100k vectors
    .venv/bin/python tests/benchmarks/bench_quantize_index.py --sizes 100000,1000000

N supplied 384-dim vectors (clustered gaussian data, the generator and seed of bench_query.py's ANN
step: a cluster per 100 vectors, L2-normalised, cosine) are written through the storage layer into a
SQLite database (one row and one chunk per vector, as a ``float_vector`` column stores them), under
the cache directory. For each quantization the column's index is built from SQLite exactly as the
engine builds it (``ColumnIndex.catch_up``: read_vectors + add), timed, and saved; a rerun loads it.
Then k=10 searches of held-out queries (default ef) run through ``VectorIndex.search`` with
and without rescoring; rescoring reads the candidates' float32 vectors from SQLite (the real path).
Recall@10 is against exact search over the float32 vectors.

Index memory is the index's own accounting (``VectorIndex.footprint``: vectors or codes, HNSW links,
id maps), which is what stays resident; the index file size is reported too.

Writes tests/benchmarks/results/quantize_index.json.
"""
from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_vectors  # noqa: E402
import common  # noqa: E402
from common import CACHE, log, percentile  # noqa: E402

from tesseradb.storage.blobs import pack_vector  # noqa: E402
from tesseradb.storage import index_cache  # noqa: E402
from tesseradb.storage.chunk_table import ColumnLayout, create_chunk_table  # noqa: E402
from tesseradb.storage.chunks import ColumnIndex  # noqa: E402
from tesseradb.storage.rowstore import RowStore  # noqa: E402

DIMS = 384
QUANTIZATIONS = ("none", "8bit", "1bit", "rabitq2", "rabitq4")
MODES = [("rescore", {"rescore": True}), ("no rescore", {"rescore": False})]


def layout(quantization: str) -> ColumnLayout:
    return ColumnLayout(table="vecs", column="v", chunks="_tessera_chunks_vecs_v", is_array=False, dims=DIMS,
                        metric="cosine", hnsw_m=16, ef_construction=200, quantization=quantization)


def data(n: int, queries: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(n)                       # bench_query.py's seed: the same vectors
    centres = rng.standard_normal((max(1, n // 100), DIMS), dtype=np.float32)
    return bench_vectors.clustered(n, DIMS, rng, centres), bench_vectors.clustered(queries, DIMS, rng, centres)


def database(n: int, x: np.ndarray) -> RowStore:
    path = CACHE / f"quantize-{n}.db"
    CACHE.mkdir(parents=True, exist_ok=True)
    store = RowStore(str(path))
    if store.one("SELECT 1 FROM sqlite_master WHERE name = 'vecs'") is not None:
        if store.one("SELECT COUNT(*) FROM vecs")[0] == n:
            store.execute("PRAGMA wal_checkpoint(TRUNCATE)")     # a database at rest: pages in the file
            return store
        store.close()
        path.unlink()
        store = RowStore(str(path))
    log(f"  writing {n} vectors to {path}")
    store.begin()
    store.execute("CREATE TABLE vecs (id INTEGER PRIMARY KEY, v BLOB)")
    create_chunk_table(store, layout("none"))
    for s in range(0, n, 50_000):
        ids = range(s + 1, min(n, s + 50_000) + 1)
        store.executemany("INSERT INTO vecs (id, v) VALUES (?, ?)", [(i, pack_vector(x[i - 1])) for i in ids])
        store.executemany("INSERT INTO _tessera_chunks_vecs_v (doc_id, ord) VALUES (?, 0)", [(i,) for i in ids])
    store.commit()
    store.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return store


def build(store: RowStore, n: int, quantization: str) -> tuple[ColumnIndex, dict]:
    col = ColumnIndex(store, layout(quantization))
    col.name = f"{col.name}-{quantization}"        # one saved index per quantization, inside the database
    had_saved = index_cache.current(store, col.name) is not None
    started = time.perf_counter()
    col.catch_up()
    seconds = time.perf_counter() - started
    if had_saved:
        info = {"build": "loaded from inside the database (built by an earlier run)", "load_s": seconds}
    else:
        info = {"build_s": seconds, "vectors_per_s": n / seconds}
        col.save()
    info["footprint_bytes"] = col.index.footprint()
    info["saved_bytes"] = int(store.one(f"SELECT SUM(length(data)) FROM {index_cache.TABLE} WHERE name = ? AND gen = ?",
                                        (col.name, index_cache.current(store, col.name)))[0])
    return col, info


def measure(col: ColumnIndex, q: np.ndarray, truth: list[set[int]], **kw) -> dict:
    index = col.index
    index.search(q[0], 10, **kw)  # warm
    ms, found = [], []
    for v in q:
        started = time.perf_counter()
        hits = index.search(v, 10, **kw)
        ms.append((time.perf_counter() - started) * 1000)
        found.append({d - 1 for d, _, _ in hits})        # doc ids are row numbers + 1
    return {"p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99), "mean_ms": float(np.mean(ms)),
            "recall@10": float(np.mean([len(f & t) / 10 for f, t in zip(found, truth)])),
            "plan": index.explain(10, **kw)}


def run_size(n: int, args: argparse.Namespace, before: dict) -> dict:
    x, q = data(n, args.queries)
    store = database(n, x)
    truth = bench_vectors.exact_topk(x, q, 10)
    del x
    gc.collect()
    out: dict = {"n": n, "dims": DIMS, "queries": len(q), "loadavg_start": common.loadavg()}
    for quantization in args.quantizations.split(","):
        log(f"  {n}: building {quantization}")
        col, info = build(store, n, quantization)
        if "build" in info:         # loaded: keep the build time an earlier run measured
            info.update({k: v for k, v in before.get(quantization, {}).items() if k in ("build_s", "vectors_per_s")})
        modes = MODES if quantization != "none" else MODES[:1]
        if quantization != "none" and args.oversampling:
            modes = modes + [(f"rescore, oversampling {o}", {"rescore": True, "oversampling": float(o)})
                             for o in args.oversampling.split(",")]
        for name, kw in modes:
            info[name] = measure(col, q, truth, **kw)
            log(f"  {n} {quantization} {name}: p50 {info[name]['p50_ms']:.3f} ms p99 {info[name]['p99_ms']:.3f} ms "
                f"recall@10 {info[name]['recall@10']:.3f} | footprint {json.dumps(info['footprint_bytes'])}")
        out[quantization] = info
        del col
        gc.collect()
    out["loadavg_end"] = common.loadavg()
    store.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000", help="comma-separated numbers of vectors")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--oversampling", default="", help="also measure these oversampling factors (comma-separated)")
    ap.add_argument("--quantizations", default=",".join(QUANTIZATIONS))
    args = ap.parse_args()
    result = common.load_result("quantize_index") or {}
    for n in [int(s) for s in args.sizes.split(",") if s]:
        sized = result.setdefault("sizes", {}).setdefault(str(n), {})
        sized.update(run_size(n, args, dict(sized)))
        common.save_result("quantize_index", result)
    log(f"wrote {common.RESULTS / 'quantize_index.json'}")


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("speed")
