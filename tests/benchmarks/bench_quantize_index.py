"""Quantized vector indexes at scale: memory, build time, latency and recall, float32 vs 8bit vs 1bit vs
multi-bit RaBitQ (rabitq2, rabitq4).

    .venv/bin/python tests/benchmarks/bench_quantize_index.py                    # 100k vectors
    .venv/bin/python tests/benchmarks/bench_quantize_index.py --sizes 100000,1000000
    # 1M: build each index once (one process each, they may run at the same time), then measure them all
    nice -n 19 .venv/bin/python tests/benchmarks/bench_quantize_index.py --sizes 1000000 --quantizations rabitq2 --build-only
    nice -n 19 .venv/bin/python tests/benchmarks/bench_quantize_index.py --sizes 1000000 \
        --quantizations 1bit,rabitq2,rabitq4 --oversampling 5,10,15,20 --ef 200

N supplied 384-dim vectors (clustered gaussian data, the generator and seed of bench_query.py's ANN
step: a cluster per 100 vectors, L2-normalised, cosine) are written through the storage layer into a
SQLite database (one row and one chunk per vector, as a ``float_vector`` column stores them), under
the cache directory. For each quantization the column's index is built from SQLite exactly as the
engine builds it (``ColumnIndex.catch_up``: read_vectors, then one bulk ``VectorIndex.add``, FAISS on
``--threads`` OpenMP threads), timed (wall and CPU seconds, load averages, peak RSS), and saved to a
scratch folder under the system's temporary directory (never in the repository); a rerun loads it, so
several oversampling and ef settings are measured without building again. Then k=10 searches of
held-out queries run through ``VectorIndex.search`` (the engine's index search, one FAISS thread, as
knn() calls it) with and without rescoring; rescoring reads the candidates' float32 vectors from SQLite
(the real path). Each search's wall time and the CPU time of its thread are recorded (on a shared
machine the gap between them is time spent waiting for a core). Recall@10 is against exact search
over the float32 vectors (FAISS ``IndexFlatIP``, in batches of queries), cached beside the indexes.

Index memory is the index's own accounting (``VectorIndex.footprint``: vectors or codes, HNSW links,
id maps), which is what stays resident; the index file size is reported too.

Writes tests/benchmarks/results/quantize_index.json.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import faiss
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_vectors  # noqa: E402
import common  # noqa: E402
from common import CACHE, log, percentile  # noqa: E402

from tesseradb.storage.blobs import pack_vector  # noqa: E402
from tesseradb.storage import index_cache, rowstore  # noqa: E402
from tesseradb.storage.chunk_table import ColumnLayout, create_chunk_table  # noqa: E402
from tesseradb.storage import chunks as chunks_module  # noqa: E402
from tesseradb.storage.chunks import ColumnIndex  # noqa: E402
from tesseradb.storage.rowstore import RowStore  # noqa: E402
from tesseradb.storage.vectors import VectorIndex  # noqa: E402

DIMS = 384
QUANTIZATIONS = ("none", "8bit", "1bit", "rabitq2", "rabitq4")
MODES = [("rescore", {"rescore": True}), ("no rescore", {"rescore": False})]
# built indexes, ground truth and build records: reused across runs, never in the repository
SCRATCH = Path(tempfile.gettempdir()) / "tesseradb-bench-quantize"


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


def _scratch(n: int, quantization: str) -> Path:
    return SCRATCH / f"{n}-{quantization}.faiss"


def build(store: RowStore, n: int, quantization: str, threads: int = 2, part: int = 0) -> tuple[ColumnIndex, dict]:
    """The column's index as the engine builds it, or the copy an earlier run built and saved."""
    col = ColumnIndex(store, layout(quantization))
    col.name = f"{col.name}-{quantization}"
    path, record = _scratch(n, quantization), _scratch(n, quantization).with_suffix(".json")
    if path.exists() and record.exists():
        started = time.perf_counter()
        loaded = VectorIndex.load(str(path))
        assert loaded is not None
        col.index, mark = loaded
        col.index.rescore_source = col.exact_vectors
        col.max_id, col.seen_version = int(mark.split(":")[0]), store.data_version()
        info = {"build": "loaded from the scratch folder (built by an earlier run)",
                "load_s": time.perf_counter() - started, **json.loads(record.read_text())}
    else:
        faiss.omp_set_num_threads(threads)
        info = {"build_threads": threads, "build_loadavg_start": common.loadavg(),
                "build_started": time.strftime("%Y-%m-%d %H:%M:%S")}
        cpu = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        with _timing_reads() as read_s:
            if part:
                info = _build_in_parts(store, col, n, quantization, part, info)
            else:
                col.rebuild()      # from SQLite (never a copy saved inside the database by an older run)
        seconds = time.perf_counter() - started + info.pop("earlier_s", 0.0)
        info["build_read_s"] = read_s[0] + info.pop("earlier_read_s", 0.0)  # reading from SQLite (the rest: FAISS)
        after = resource.getrusage(resource.RUSAGE_SELF)
        info.update(build_s=seconds, vectors_per_s=n / seconds,
                    build_cpu_s=(after.ru_utime + after.ru_stime) - (cpu.ru_utime + cpu.ru_stime)
                    + info.pop("earlier_cpu_s", 0.0),
                    build_loadavg_end=common.loadavg(), build_peak_rss_mb=after.ru_maxrss / 1024)
        SCRATCH.mkdir(parents=True, exist_ok=True)
        col.index.save(str(path), f"{col.max_id}:{len(col.index)}")
        record.write_text(json.dumps(info, indent=1) + "\n")
        log(f"  {n} {quantization}: built in {seconds:,.0f} s ({info['build_cpu_s']:,.0f} CPU s), "
            f"load {info['build_loadavg_start']} -> {info['build_loadavg_end']}, peak RSS {info['build_peak_rss_mb']:,.0f} MB")
    info["footprint_bytes"] = col.index.footprint()
    info["file_bytes"] = path.stat().st_size
    return col, info


def _build_in_parts(store: RowStore, col: ColumnIndex, n: int, quantization: str, part: int, info: dict) -> dict:
    """Build by adding ``part`` rows at a time (the engine's catch-up of rows added in batches), saving
    the index after each part to ``<n>-<quantization>.partial.faiss``: a build that is stopped (or runs
    out of time on a shared machine) resumes from its last part; a restart may change ``--threads``."""
    path = _scratch(n, quantization).with_suffix(".partial.faiss")
    record = path.with_suffix(".json")
    cpu0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    earlier = {"earlier_s": 0.0, "earlier_cpu_s": 0.0, "earlier_read_s": 0.0}
    col.index, col.max_id = col._new(), 0
    if path.exists() and record.exists():
        loaded = VectorIndex.load(str(path))
        assert loaded is not None
        col.index, mark = loaded
        col.index.rescore_source = col.exact_vectors
        col.max_id = int(mark.split(":")[0])
        saved = json.loads(record.read_text())
        info = {**saved, "resumed": saved.get("resumed", []) + [[col.max_id, common.loadavg()]]}
        earlier = {k: saved["partial"][k] for k in earlier}
        log(f"  {n} {quantization}: resuming after chunk {col.max_id} ({len(col.index)} vectors)")
    read_s = 0.0
    while col.max_id < n:
        hi = min(n, col.max_id + part)
        started = time.perf_counter()
        chunk_ids, doc_ids, vectors = chunks_module.read_vectors(
            store, col.layout, "WHERE c.chunk_id > ? AND c.chunk_id <= ?", (col.max_id, hi))
        read_s += time.perf_counter() - started
        col.index.add(chunk_ids, doc_ids, vectors)
        del chunk_ids, doc_ids, vectors
        col.max_id = hi
        col.index.save(str(path), f"{col.max_id}:{len(col.index)}")
        used = resource.getrusage(resource.RUSAGE_SELF)
        info["partial"] = {"vectors": len(col.index), "part": part,
                           "earlier_s": earlier["earlier_s"] + time.perf_counter() - t0,
                           "earlier_cpu_s": earlier["earlier_cpu_s"] + (used.ru_utime + used.ru_stime)
                           - (cpu0.ru_utime + cpu0.ru_stime),
                           "earlier_read_s": earlier["earlier_read_s"] + read_s,
                           "loadavg": common.loadavg(), "at": time.strftime("%Y-%m-%d %H:%M:%S")}
        record.write_text(json.dumps(info, indent=1) + "\n")
        log(f"  {n} {quantization}: {len(col.index):,} vectors after {info['partial']['earlier_s']:,.0f} s "
            f"({info['partial']['earlier_cpu_s']:,.0f} CPU s), load {common.loadavg()}")
    col.seen_version = store.data_version()
    done = info.pop("partial")
    path.unlink()
    record.unlink()
    # this process's own time is measured by build(); what earlier processes spent is added to it
    return {**info, "build_parts": part, **{k: earlier[k] for k in earlier}} if "resumed" in info else \
        {**info, "build_parts": part, "build_part_vectors": done["vectors"]}


@contextmanager
def _timing_reads():
    """Time ``ColumnIndex``'s reads of the vectors from SQLite (the build's share that is not FAISS)."""
    spent = [0.0]
    original = chunks_module.read_vectors

    def timed(*a, **kw):
        started = time.perf_counter()
        try:
            return original(*a, **kw)
        finally:
            spent[0] += time.perf_counter() - started
    chunks_module.read_vectors = timed
    try:
        yield spent
    finally:
        chunks_module.read_vectors = original


def ground_truth(n: int, queries: int) -> tuple[np.ndarray, list[set[int]]]:
    """(queries, the row numbers of each one's exact top 10), by FAISS exact search; cached."""
    cached = SCRATCH / f"{n}-truth-{queries}.npz"
    if cached.exists():
        z = np.load(cached)
        return z["q"], [set(r.tolist()) for r in z["ids"]]
    x, q = data(n, queries)
    flat = faiss.IndexFlatIP(DIMS)
    flat.add(x)
    del x
    ids = np.vstack([flat.search(q[s:s + 100], 10)[1] for s in range(0, len(q), 100)])
    del flat
    SCRATCH.mkdir(parents=True, exist_ok=True)
    np.savez(cached, q=q, ids=ids)
    return q, [set(r.tolist()) for r in ids]


def open_database(n: int, queries: int) -> RowStore:
    path = CACHE / f"quantize-{n}.db"
    if path.exists():
        store = RowStore(str(path))
        if store.one("SELECT 1 FROM sqlite_master WHERE name = 'vecs'") is not None and \
                store.one("SELECT COUNT(*) FROM vecs")[0] == n:
            return store
        store.close()
    x, _ = data(n, queries)
    return database(n, x)


def measure(col: ColumnIndex, q: np.ndarray, truth: list[set[int]], mmap: bool = True, **kw) -> dict:
    """k=10 searches of every query: wall and thread-CPU time of each, and of its rescoring read from
    SQLite (``rescore_source``); involuntary context switches (the thread was made to wait for a core);
    recall@10. ``mmap=False`` reads the file without the engine's memory map (``PRAGMA mmap_size=0``)."""
    index = col.index
    source, reads = index.rescore_source, []

    def timed(chunk_ids):
        started, used = time.perf_counter(), time.thread_time()
        try:
            return source(chunk_ids)
        finally:
            reads.append(((time.perf_counter() - started) * 1000, (time.thread_time() - used) * 1000))
    index.rescore_source = timed
    if not mmap:
        col.store.execute("PRAGMA mmap_size = 0")
    try:
        for v in q[:10]:              # warm: the index's and the file's pages, the plan
            index.search(v, 10, **kw)
        reads.clear()
        ms, cpu, found, switched = [], [], [], 0
        for v in q:
            before = resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw
            started, used = time.perf_counter(), time.thread_time()
            hits = index.search(v, 10, **kw)
            cpu.append((time.thread_time() - used) * 1000)
            ms.append((time.perf_counter() - started) * 1000)
            switched += resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw > before
            found.append({d - 1 for d, _, _ in hits})        # doc ids are row numbers + 1
    finally:
        index.rescore_source = source
        if not mmap:
            col.store.execute(f"PRAGMA mmap_size = {rowstore.MMAP_BYTES}")
    out = {"p50_ms": percentile(ms, 50), "p99_ms": percentile(ms, 99), "mean_ms": float(np.mean(ms)),
           "cpu_p50_ms": percentile(cpu, 50), "cpu_mean_ms": float(np.mean(cpu)),
           "preempted_share": switched / len(q),
           "recall@10": float(np.mean([len(f & t) / 10 for f, t in zip(found, truth)])),
           "plan": index.explain(10, **kw)}
    if reads:
        out.update(read_p50_ms=percentile([r[0] for r in reads], 50),
                   read_cpu_p50_ms=percentile([r[1] for r in reads], 50))
    return out


def modes(quantization: str, args: argparse.Namespace) -> list[tuple[str, dict]]:
    if quantization == "none":
        return MODES[:1]
    out = list(MODES) + [("rescore, file not memory-mapped", {"rescore": True, "mmap": False})]
    factors = [o for o in args.oversampling.split(",") if o]
    for o in factors:
        out.append((f"rescore, oversampling {o}", {"rescore": True, "oversampling": float(o)}))
    for ef in [e for e in args.ef.split(",") if e]:
        out.append((f"rescore, ef {ef}", {"rescore": True, "ef": int(ef)}))
        out += [(f"rescore, oversampling {o}, ef {ef}", {"rescore": True, "oversampling": float(o), "ef": int(ef)})
                for o in factors]
    return out


def run_size(n: int, args: argparse.Namespace, before: dict) -> dict:
    store = open_database(n, args.queries)
    q, truth = ground_truth(n, args.queries)
    gc.collect()
    out: dict = {"n": n, "dims": DIMS, "queries": len(q), "loadavg_start": common.loadavg()}
    for quantization in args.quantizations.split(","):
        log(f"  {n}: building {quantization}")
        col, info = build(store, n, quantization, args.threads, args.parts)
        if "build_s" not in info:   # built before the build records: keep the time an earlier run measured
            info.update({k: v for k, v in before.get(quantization, {}).items() if k in ("build_s", "vectors_per_s")})
        if not args.build_only:
            info["loadavg_measure_start"] = common.loadavg()
            for name, kw in modes(quantization, args):
                info[name] = measure(col, q, truth, **kw)
                m = info[name]
                log(f"  {n} {quantization} {name}: p50 {m['p50_ms']:.3f} ms (CPU {m['cpu_p50_ms']:.3f}) "
                    f"p99 {m['p99_ms']:.3f} ms recall@10 {m['recall@10']:.3f} ef {m['plan']['ef']}"
                    + (f", read p50 {m['read_p50_ms']:.3f} ms (CPU {m['read_cpu_p50_ms']:.3f})" if "read_p50_ms" in m else "")
                    + f", preempted {m['preempted_share']:.0%}")
            log(f"  footprint {json.dumps(info['footprint_bytes'])}")
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
    ap.add_argument("--ef", default="", help="also measure these efSearch values (comma-separated)")
    ap.add_argument("--quantizations", default=",".join(QUANTIZATIONS))
    ap.add_argument("--note", action="append", default=[], help="a note for the size's results (what was tried)")
    ap.add_argument("--threads", type=int, default=2, help="FAISS OpenMP threads while building")
    ap.add_argument("--parts", type=int, default=0,
                    help="build by adding this many rows at a time, saving after each (a stopped build resumes)")
    ap.add_argument("--build-only", action="store_true",
                    help="build and save the indexes (to the scratch folder), measure nothing, write no results")
    args = ap.parse_args()
    result = common.load_result("quantize_index") or {}
    for n in [int(s) for s in args.sizes.split(",") if s]:
        sized = result.setdefault("sizes", {}).setdefault(str(n), {})
        measured = run_size(n, args, dict(sized))
        if args.build_only:
            continue
        for quantization in args.quantizations.split(","):
            sized.pop(quantization, None)      # only this run's figures for what it measured
        sized.update(measured)
        sized["rabitq_notes"] = args.note or sized.get("rabitq_notes", [])
        sized["arguments"] = " ".join(a for a in sys.argv[1:] if a != "--note" and a not in args.note)
        sized["nice"] = os.nice(0)             # the niceness the searches ran at (the command line's nice -n)
        common.save_result("quantize_index", result)
    if not args.build_only:
        log(f"wrote {common.RESULTS / 'quantize_index.json'}")


if __name__ == "__main__":
    main()
    if "--build-only" in sys.argv:
        sys.exit(0)
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("speed", "rabitq")
