"""Index build from SQLite: storage.chunks.read_vectors (chunk_table.read_vectors, as ColumnIndex calls it) as shipped vs one blob read per document.

    .venv/bin/python tests/benchmarks/bench_index_build.py

Uses a copy of the database bench_ingest.py loaded (under the cache directory), with its index
files removed, and times each column's first catch-up (what the first knn() pays). The second
variant swaps read_vectors, inside this process only, for one that reads the chunk rows without
the document blob and then each document's blob once: the shipped query joins the document row
to every chunk row, so a document of n chunks has its n-vector blob read n times. Writes
results/index_build.json.
"""
from __future__ import annotations

import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

from tesseradb.storage import chunks  # noqa: E402
from tesseradb.storage.blobs import unpack  # noqa: E402
from tesseradb.storage.catalog import quote  # noqa: E402


def read_vectors_once_per_doc(store, layout, where: str = "", params: tuple = ()):
    rows = list(store.execute(f"SELECT c.chunk_id, c.doc_id, c.ord FROM {quote(layout.chunks)} c JOIN "
                              f"{quote(layout.table)} d ON d.id = c.doc_id {where} ORDER BY c.doc_id, c.ord", params))
    docs = sorted({r[1] for r in rows})
    blobs = {}
    for s in range(0, len(docs), 500):
        part = docs[s:s + 500]
        for d, blob in store.execute(f"SELECT id, {quote(layout.column)} FROM {quote(layout.table)} "
                                     f"WHERE id IN ({','.join('?' * len(part))})", part):
            blobs[d] = unpack(blob, layout.is_array)
    keep = [(c, d, blobs[d][o]) for c, d, o in rows if o < len(blobs[d])]
    if not keep:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((0, layout.dims), np.float32)
    return (np.array([k[0] for k in keep], np.int64), np.array([k[1] for k in keep], np.int64),
            np.vstack([k[2] for k in keep]).astype(np.float32))


def main() -> None:
    import tesseradb
    import bench_ingest
    if not bench_ingest.DB_PATH.exists():
        raise SystemExit(f"{bench_ingest.DB_PATH} is missing: run bench_ingest.py first")
    shipped = chunks.read_vectors
    out: dict = {"loadavg_start": common.loadavg(), "variants": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for label, fn in (("shipped", shipped), ("blob once per document", read_vectors_once_per_doc)):
            db_path = Path(tmp) / "m.db"
            shutil.copy(bench_ingest.DB_PATH, db_path)
            shutil.rmtree(str(db_path) + ".tessera", ignore_errors=True)
            chunks.read_vectors = fn
            try:
                con = tesseradb.connect(str(db_path))
                db = con.db
                res = {}
                for col in bench_ingest.COLUMNS:
                    ci = db.column_index(db.table("manual"), col)
                    started = time.perf_counter()
                    ci.catch_up()
                    build = time.perf_counter() - started
                    started = time.perf_counter()
                    ids, _, _ = fn(db.store, ci.layout)
                    res[col] = {"catch_up_seconds": build, "read_vectors_seconds": time.perf_counter() - started,
                                "vectors": int(len(ids))}
                con.close()
            finally:
                chunks.read_vectors = shipped
            out["variants"][label] = res
            common.log(f"{label}: {res}")
    out["loadavg_end"] = common.loadavg()
    common.save_result("index_build", out)


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("engine-notes")
