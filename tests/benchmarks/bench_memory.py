"""Peak RSS while the engine loads the manual, sampled over time, and what onnxruntime's arena adds.

    .venv/bin/python tests/benchmarks/bench_memory.py                     # the whole manual, one executemany
    .venv/bin/python tests/benchmarks/bench_memory.py --largest 31        # the 31 largest pages only
    .venv/bin/python tests/benchmarks/bench_memory.py --largest 31 --no-arena
    .venv/bin/python tests/benchmarks/bench_memory.py --read-vectors-once  # with the index-build fix
    .venv/bin/python tests/benchmarks/bench_memory.py --big-document 20   # one 20 MB page, max_chunks=4

A fresh process loads pages through the DB-API into a new database (a truncate and a recursive
256/32 column, as bench_ingest.py), builds the indexes and closes, while a thread samples the
resident set size every 20 ms. ``--no-arena`` creates the model's onnxruntime session with
``enable_cpu_mem_arena = False`` (a patch of tesseradb.embed.model.session_options inside this
process only: an experiment, not an engine setting); ``--read-vectors-once`` likewise swaps in the
read_vectors of bench_index_build.py. ``--big-document MB`` instead loads one document of that many
MB (the manual's pages joined, repeated as needed) into a recursive 256/32 column with
max_chunks=4, and reports the peak RSS growth over the process with the model loaded (issue 17: at
most 300 MB for 20 MB). Merges into results/memory.json under a key naming the run.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import CACHE, log  # noqa: E402


def rss_mib() -> float:
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--largest", type=int, default=0, help="load only the N largest pages (0 = all 189)")
    ap.add_argument("--no-arena", action="store_true", help="onnxruntime session without the CPU memory arena")
    ap.add_argument("--read-vectors-once", action="store_true",
                    help="storage.chunks.read_vectors swapped for bench_index_build's one-blob-per-document variant")
    ap.add_argument("--big-document", type=float, default=0, metavar="MB",
                    help="load one document of this many MB into a max_chunks=4 column instead")
    args = ap.parse_args()
    if args.big_document:
        return big_document(args.big_document)
    if args.read_vectors_once:
        import bench_index_build
        from tesseradb.storage import chunks
        chunks.read_vectors = bench_index_build.read_vectors_once_per_doc
    if args.no_arena:
        from tesseradb.embed import model as model_module
        inner = model_module.session_options

        def options(threads=None):
            o = inner(threads)
            o.enable_cpu_mem_arena = False
            return o
        model_module.session_options = options

    import tesseradb
    import bench_ingest
    docs = common.pages()
    model = common.model()
    if args.largest:
        docs = sorted(docs, key=lambda p: -len(model.token_offsets(p.text)))[:args.largest]
    samples: list[tuple[float, float, str]] = []
    stage = ["model ready"]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            samples.append((time.perf_counter(), rss_mib(), stage[0]))
            time.sleep(0.02)

    path = CACHE / "memory.db"
    shutil.rmtree(str(path) + ".tessera", ignore_errors=True)
    path.unlink(missing_ok=True)
    thread = threading.Thread(target=sample, daemon=True)
    started = time.perf_counter()
    thread.start()
    con = tesseradb.connect(str(path))
    con.cursor().execute(bench_ingest.CREATE)
    stage[0] = "executemany + commit"
    con.cursor().executemany(bench_ingest.INSERT, [(p.doc_id, p.path, p.text) for p in docs])
    con.commit()
    stage[0] = "index build (first knn)"
    for col in bench_ingest.COLUMNS:
        con.cursor().execute(bench_ingest.KNN.format(col=col), ("warm up the index",)).fetchall()
    stage[0] = "close"
    con.close()
    stop.set()
    thread.join()
    peak = max(samples, key=lambda s: s[1])
    by_stage: dict[str, float] = {}
    for _, mib, st in samples:
        by_stage[st] = max(by_stage.get(st, 0.0), mib)
    key = (f"{'all' if not args.largest else f'largest-{args.largest}'}{'-no-arena' if args.no_arena else ''}"
           f"{'-read-vectors-once' if args.read_vectors_once else ''}")
    out = {"pages": len(docs), "tokens": sum(len(model.token_offsets(p.text)) for p in docs),
           "arena": not args.no_arena, "seconds": time.perf_counter() - started,
           "before_mib": samples[0][1], "peak_rss_mib": peak[1], "peak_stage": peak[2], "vm_hwm_mib": common.vm_hwm_mib(),
           "peak_by_stage_mib": by_stage, "disk_bytes": {"sqlite": common.dir_size(path),
                                                         "indexes": common.dir_size(Path(str(path) + ".tessera"))},
           "loadavg": common.loadavg()}
    result = common.load_result("memory") or {}
    result.setdefault("runs", {})[key] = out
    common.save_result("memory", result)
    log(f"{key}: {out}")


BIG_CREATE = ("CREATE TABLE big (title string, body text, v float_vector_array knn_type='hnsw' "
              f"model_name='{common.MODEL_NAME}' from='body' chunk_strategy='recursive' max_tokens=256 "
              "overlap_tokens=32 max_chunks=4)")


def big_document(megabytes: float) -> None:
    """One document of ``megabytes`` MB through INSERT + COMMIT + first knn(); peak RSS growth."""
    import tesseradb
    text = "\n\n".join(p.text for p in common.pages())
    size = int(megabytes * (1 << 20))
    text = (text * (size // len(text) + 1))[:size]
    common.model()
    CACHE.mkdir(parents=True, exist_ok=True)
    path = CACHE / "memory-big.db"
    shutil.rmtree(str(path) + ".tessera", ignore_errors=True)
    path.unlink(missing_ok=True)
    before = rss_mib()
    peak = [before]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], rss_mib())
            time.sleep(0.01)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    started = time.perf_counter()
    con = tesseradb.connect(str(path))
    cur = con.cursor()
    cur.execute(BIG_CREATE)
    cur.execute("INSERT INTO big (id, title, body) VALUES (1, 'big', ?)", (text,))
    warnings = cur.execute("SHOW WARNINGS").fetchall()
    con.commit()
    n = cur.execute("SELECT LENGTH(v) FROM big").fetchone()[0]
    cur.execute("SELECT id FROM big WHERE knn(v, 1, 'replication')").fetchall()
    con.close()
    seconds = time.perf_counter() - started
    stop.set()
    thread.join()
    key = f"big-document-{megabytes:g}mb"
    out = {"megabytes": megabytes, "characters": len(text), "vectors": n, "warnings": [w[2] for w in warnings],
           "before_mib": before, "peak_rss_mib": peak[0], "growth_mib": peak[0] - before,
           "seconds": seconds, "loadavg": common.loadavg()}
    result = common.load_result("memory") or {}
    result.setdefault("runs", {})[key] = out
    common.save_result("memory", result)
    log(f"{key}: {out}")


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("int8", "engine-notes", "targets")
