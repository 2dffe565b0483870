"""Ray ingest throughput per worker: pages of the manual through ``tesseradb.io.distributed``.

    .venv/bin/python tests/benchmarks/bench_ray_ingest.py [--every 3] [--workers 1,2] [--model all-MiniLM-L6-v2]

Every Nth page of the manual is written to one Parquet file (id, path, body; row groups of 8 pages so
the workers share the input), then embedded on a local Ray cluster (as many CPUs as this machine)
into a recursive 256/32 column's shards, once per worker count (each worker claims
``(cpus - 1) / workers`` CPUs and runs the model on one thread; one whole CPU stays free for Ray
Data's listing task). Reports documents, chunks, model tokens, seconds, pages/s and tokens/s in all and per
worker, and the time to LOAD DATA the shards into a table (no model). Writes results/ray_ingest.json.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

REC = common.Config("recursive", 256, 32)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=3, help="every Nth page of the manual")
    ap.add_argument("--workers", default="1", help="comma-separated worker counts to run")
    ap.add_argument("--model", default=common.MODEL_NAME)
    args = ap.parse_args()
    import ray
    import tesseradb
    from tesseradb.io import distributed

    docs = common.pages()[::args.every]
    model = common.model()
    tokens = sum(common.model_tokens(model, common.plan(model, p.text, REC)) for p in docs)
    cpus = common.machine()["cpus"]
    tmp = Path(tempfile.mkdtemp(prefix="tessera-ray-bench."))
    source = tmp / "pages.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": p.doc_id, "path": p.path, "body": p.text} for p in docs]),
                   source, row_group_size=8)
    settings = distributed.settings_for("chunks", args.model, ["body"], chunk_strategy="recursive",
                                        max_tokens=REC.max_tokens, overlap_tokens=REC.overlap)
    ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
    runs = {}
    try:
        for workers in [int(w) for w in args.workers.split(",")]:
            out = tmp / f"shards-{workers}"
            claim = (cpus - 1) / workers  # one whole CPU stays free for Ray Data's listing task
            load_before = common.loadavg()
            summary = distributed.embed_to_parquet(str(source), str(out), settings, workers=workers,
                                                   cpus_per_worker=claim, threads_per_worker=1, batch_rows=8)
            con = tesseradb.connect(str(tmp / f"load-{workers}.db"))
            cur = con.cursor()
            cur.execute("CREATE TABLE manual (path string, body text, chunks float_vector_array knn_type='hnsw' "
                        f"hnsw_similarity='cosine' model_name='{args.model}' from='body' chunk_strategy='recursive' "
                        f"max_tokens={REC.max_tokens} overlap_tokens={REC.overlap})")
            started = time.perf_counter()
            cur.execute(f"LOAD DATA INFILE '{out}/*.parquet' INTO TABLE manual")
            con.commit()
            load_seconds = time.perf_counter() - started
            con.close()
            runs[str(workers)] = {
                "workers": workers, "cpus_per_worker": claim, "threads_per_worker": 1,
                "documents": summary.documents, "chunks": summary.chunks, "model_tokens": tokens,
                "shards": summary.files, "seconds": summary.seconds,
                "pages_per_s": summary.documents / summary.seconds, "tokens_per_s": tokens / summary.seconds,
                "tokens_per_s_per_worker": tokens / summary.seconds / workers,
                "load_data_seconds": load_seconds, "loadavg_before": load_before, "loadavg_after": common.loadavg()}
            common.log(f"{workers} worker(s): {runs[str(workers)]}")
    finally:
        ray.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    result = common.load_result("ray_ingest") or {}
    result.setdefault("runs", {}).update({f"{args.model} every {args.every}: {k}": v for k, v in runs.items()})
    common.save_result("ray_ingest", result)


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("int8")
