"""Where a saved vector index lives: inside the database file (issue 28) vs a side file beside it
(release 0.2's ``<db>.tessera/<chunks>.faiss``). Save and open times at 100k (and 1M) vectors.

    .venv/bin/python tests/benchmarks/bench_index_store.py [--sizes 100000,1000000] [--quantization none]

The vectors and the database are bench_quantize_index.py's (clustered 384-dim, cosine); the index is
built once through the engine's path (``ColumnIndex.catch_up``) and then saved and opened
``--repeat`` times each way: inside (``index_cache``: parts of 16 MiB in short write transactions,
SQLite's WAL, then a checkpoint as a closed database has), and beside (temp file, fsync, rename,
fsync of the folder). Reports the median seconds and the bytes each takes.

Writes tests/benchmarks/results/index_store.json.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_quantize_index as bq  # noqa: E402
import common  # noqa: E402
from common import CACHE, log  # noqa: E402

from tesseradb.storage import index_cache  # noqa: E402
from tesseradb.storage.vectors import VectorIndex  # noqa: E402


def _timed(fn, repeat: int) -> float:
    seconds = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)


def run_size(n: int, quantization: str, repeat: int) -> dict:
    x, _ = bq.data(n, 1)
    store = bq.database(n, x)
    del x
    col, info = bq.build(store, n, quantization)
    mark = f"{col.max_id}:{len(col.index)}"
    name = col.name + "-store-bench"
    side = str(CACHE / f"index-store-{n}-{quantization}.faiss")

    def save_inside():
        assert index_cache.write(store, name, lambda stream: col.index.save(stream, mark))
        store.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def open_inside():
        with index_cache.reading(store, name) as stream:
            assert VectorIndex.load(stream) is not None

    out = {"n": n, "quantization": quantization, "loadavg_start": common.loadavg(), "build": info,
           "save_inside_s": _timed(save_inside, repeat), "open_inside_s": _timed(open_inside, repeat),
           "save_beside_s": _timed(lambda: col.index.save(side, mark), repeat),
           "open_beside_s": _timed(lambda: VectorIndex.load(side), repeat)}
    out["bytes_inside"] = int(store.one(f"SELECT SUM(length(data)) FROM {index_cache.TABLE} WHERE name = ?", (name,))[0])
    out["bytes_beside"] = os.path.getsize(side)
    out["loadavg_end"] = common.loadavg()
    index_cache.remove(store, name)
    os.remove(side)
    store.close()
    log(f"  {n} {quantization}: save inside {out['save_inside_s']:.2f} s / beside {out['save_beside_s']:.2f} s; "
        f"open inside {out['open_inside_s']:.2f} s / beside {out['open_beside_s']:.2f} s; "
        f"{out['bytes_inside'] / 1e6:.1f} MB")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000")
    ap.add_argument("--quantization", default="none")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    result = common.load_result("index_store") or {}
    for n in [int(s) for s in args.sizes.split(",") if s]:
        result[f"{n}-{args.quantization}"] = run_size(n, args.quantization, args.repeat)
        common.save_result("index_store", result)
    log(f"wrote {common.RESULTS / 'index_store.json'}")


if __name__ == "__main__":
    main()
