"""Remote models against the local model in-process, and the query prefix's effect (issue 34).

    .venv/bin/python tests/benchmarks/bench_models.py [--every N] [--prefix 'query: ']

1. Ingest of the manual (TESSERA_BENCH_CORPUS; every Nth page with --every) into a table whose model
   runs in-process (`all-MiniLM-L6-v2`), and into one whose model is an OpenAI-compatible endpoint
   (`openai:all-MiniLM-L6-v2`, api_url of a loopback server that follows OpenAI's embeddings API and
   runs the same model: tests/embed/remote/standin.py), with the same chunking (`tokenizer=` the same
   model, so the chunks are the same). Reported: seconds each, the HTTP path's ratio (target <= 1.3x
   with batching), the largest difference between the two tables' vectors, requests and their sizes.
2. Recall on the manual's questions (questions.jsonl) and its headings, with and without a query
   prefix, ranked exactly over the in-process table's chunk vectors (MaxP, as knn() ranks).
Writes results/models.json, then its section of docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "embed" / "remote"))
import common  # noqa: E402
import sections  # noqa: E402
from standin import StandIn  # noqa: E402

import tesseradb  # noqa: E402
from tesseradb import embed  # noqa: E402

CHUNKING = "chunk_strategy='recursive' max_tokens='256' overlap_tokens='32'"


def _ddl(table: str, model: str, extra: str = "") -> str:
    return (f"CREATE TABLE {table} (path string, body text, v float_vector_array knn_type='hnsw' "
            f"hnsw_similarity='cosine' model_name='{model}' from='body' {CHUNKING} {extra})")


def _ingest(con, table: str, rows: list[tuple]) -> float:
    started = time.perf_counter()
    con.executemany(f"INSERT INTO {table} (id, path, body) VALUES (?, ?, ?)", rows)
    con.commit()
    return time.perf_counter() - started


def _chunks(con, table: str) -> tuple[np.ndarray, np.ndarray]:
    vecs, docs = [], []
    for doc, v in con.execute(f"SELECT id, v FROM {table} ORDER BY id"):
        arr = np.asarray(v, np.float32).reshape(-1, 384)
        vecs.append(arr)
        docs.extend([doc] * len(arr))
    return np.vstack(vecs), np.array(docs)


def _questions(pages) -> list[common.Query]:
    by_path = {p.path: p.doc_id for p in pages}
    out = []
    for line in (HERE / "questions.jsonl").read_text().splitlines():
        q = json.loads(line)
        if q["page"] in by_path:
            out.append(common.Query(q["question"], by_path[q["page"]], 0, False))
    return out


def _recall(model_options, queries, chunk_vecs, chunk_docs) -> dict:
    model = embed.get_model("all-MiniLM-L6-v2", model_options)
    qv = np.vstack([model.embed_query(q.text) for q in queries])
    return common.score(queries, common.maxp_rank(qv, chunk_vecs, chunk_docs))["all"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--every", type=int, default=1, help="every Nth page of the manual")
    ap.add_argument("--prefix", default="query: ", help="the query prefix measured")
    ap.add_argument("--batch", type=int, default=64, help="batch_size of the remote column")
    args = ap.parse_args()
    load_start = common.loadavg()
    pages = common.pages()[::args.every]
    rows = [(p.doc_id, p.path, p.text) for p in pages]
    model = common.model()
    scratch = Path(tempfile.mkdtemp(prefix="bench_models_"))
    with StandIn(lambda texts: model.embed(texts)) as server:
        local = tesseradb.connect(str(scratch / "local.db"))
        remote = tesseradb.connect(str(scratch / "remote.db"))
        local.execute(_ddl("docs", "all-MiniLM-L6-v2"))
        remote.execute(_ddl("docs", "openai:all-MiniLM-L6-v2",
                            f"api_url='{server.base}/v1' tokenizer='all-MiniLM-L6-v2' batch_size='{args.batch}' api_timeout='300'"))
        server.requests.clear()
        common.log(f"ingest {len(rows)} pages in-process")
        local_s = _ingest(local, "docs", rows)
        common.log(f"  {local_s:.1f} s; through the OpenAI-compatible endpoint")
        remote_s = _ingest(remote, "docs", rows)
        common.log(f"  {remote_s:.1f} s")
        sizes = [len(b["input"]) for _, _, b in server.requests]
        lv, ld = _chunks(local, "docs")
        rv, rd = _chunks(remote, "docs")
    same_chunks = bool(np.array_equal(ld, rd))
    max_diff = float(np.max(np.abs(lv - rv))) if same_chunks else None
    queries = {"questions": _questions(pages), "headings": common.heading_queries(pages)}
    recall = {}
    for name, qs in queries.items():
        common.log(f"recall on {len(qs)} {name}, with and without the prefix {args.prefix!r}")
        recall[name] = {"n": len(qs),
                        "no_prefix": _recall(embed.ModelOptions(), qs, lv, ld),
                        "prefix": _recall(embed.ModelOptions(query_prefix=args.prefix), qs, lv, ld)}
    common.save_result("models", {
        "command": "bench_models.py " + " ".join(sys.argv[1:]), "every": args.every, "pages": len(rows),
        "chunks": int(len(ld)), "batch_size": args.batch,
        "ingest": {"in_process_s": local_s, "http_s": remote_s, "ratio": remote_s / local_s,
                   "requests": len(sizes), "mean_batch": float(np.mean(sizes)) if sizes else 0,
                   "same_chunks": same_chunks, "max_abs_diff": max_diff},
        "prefix": args.prefix, "recall": recall,
        "loadavg_start": load_start, "loadavg_end": common.loadavg(),
        "page_notes": ["The prefix row measures all-MiniLM-L6-v2, which was not trained with a prefix: it shows "
                       "what a wrong prefix costs, not a prefix model's gain. A prefix-trained model "
                       "(multilingual-e5-small, from the prefix-model extra) is measured with and without its "
                       "query prefix by bench_prefix_model.py, in the section that follows."],
    })
    sections.write_sections("models")


if __name__ == "__main__":
    main()
