"""The LangChain store's cost against the DB-API it is built on (docs/integrations.md#cost).

    .venv/bin/python tests/benchmarks/bench_integrations.py                # the whole manual
    .venv/bin/python tests/benchmarks/bench_integrations.py --every 4      # a sample (say so when quoting)
    .venv/bin/python tests/benchmarks/bench_integrations.py --store DB --rounds 3   # the query stage alone

* ``load``: the manual's pages through ``TesseraVectorStore.add_documents`` (table created by the
  store: recursive 256/32, the engine embeds) against ``LOAD DATA`` of the same pages (a JSONL file
  with the same ids, text and metadata) into the same table definition, each in its own database file
  (no chunk reuse between them). The pages go in slices; within a slice the two run one after the
  other, the order alternating, so that a change of machine load hits both.
* ``query``: ``similarity_search(q, k=4)`` against the same knn() through the DB-API
  (``SELECT doc_key, content, metadata, knn_dist() FROM documents WHERE knn(embedding, 4, ?)``) on the
  loaded table, section headings as queries; every text is run once first (the model's query cache
  then answers both forms, so the difference is the integration's own work), then the two forms
  timed alternately.

Results go to tests/benchmarks/results/integrations.json, with the load average before and after.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import log, percentile  # noqa: E402

import tesseradb  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from tesseradb.integrations.langchain import TesseraVectorStore  # noqa: E402

TABLE = ("CREATE TABLE documents (doc_key string, content text, metadata json, embedding float_vector_array "
         "knn_type='hnsw' hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' from='content' "
         "chunk_strategy='recursive' max_tokens='256' overlap_tokens='32')")
KNN = "SELECT doc_key, content, metadata, knn_dist() FROM documents WHERE knn(embedding, 4, ?)"


def load(pages, folder: Path, slices: int) -> dict:
    store = TesseraVectorStore(str(folder / "store.db"))
    con = tesseradb.connect(str(folder / "load.db"))
    con.execute(TABLE)
    con.execute("CREATE UNIQUE INDEX documents_doc_key_key ON documents (doc_key)")
    con.commit()
    con.embed("warm the model up"), store.similarity_search("warm the model up", k=1)
    size = -(-len(pages) // slices)
    times = {"add_documents": 0.0, "load_data": 0.0}
    per_slice = []
    for n in range(slices):
        part = pages[n * size:(n + 1) * size]
        if not part:
            break
        path = folder / f"slice{n}.jsonl"
        path.write_text("".join(json.dumps({"doc_key": p.path, "content": p.text, "metadata": {"path": p.path}})
                                + "\n" for p in part), encoding="utf-8")
        docs = [Document(id=p.path, page_content=p.text, metadata={"path": p.path}) for p in part]
        runs = {"add_documents": lambda: store.add_documents(docs),
                "load_data": lambda: (con.execute(f"LOAD DATA INFILE '{path}' INTO TABLE documents"), con.commit())}
        order = list(runs) if n % 2 == 0 else list(reversed(runs))
        row = {}
        for name in order:
            started = time.perf_counter()
            runs[name]()
            row[name] = time.perf_counter() - started
            times[name] += row[name]
        row["pages"] = len(part)
        per_slice.append(row)
        log(f"slice {n}: {row}  load {os.getloadavg()}")
    counts = (store.connection.execute("SELECT COUNT(*) FROM documents").fetchone()[0],
              con.execute("SELECT COUNT(*) FROM documents").fetchone()[0])
    con.close()
    return {"pages": len(pages), "seconds": times, "ratio": times["add_documents"] / times["load_data"],
            "slices": per_slice, "rows": counts, "store": store}


def query(store: TesseraVectorStore, texts: list[str], rounds: int) -> dict:
    cur = store.connection.cursor()
    for text in texts:                          # the model's query cache holds every text afterwards
        store.similarity_search(text, k=4)
        cur.execute(KNN, [text]).fetchall()
    timed = {"similarity_search": [], "dbapi_knn": []}
    for n, text in enumerate(texts * rounds):
        runs = [("similarity_search", lambda: store.similarity_search(text, k=4)),
                ("dbapi_knn", lambda: cur.execute(KNN, [text]).fetchall())]
        for name, run in (runs if n % 2 == 0 else runs[::-1]):
            started = time.perf_counter()
            run()
            timed[name].append((time.perf_counter() - started) * 1000)
    p50 = {name: percentile(values, 50) for name, values in timed.items()}
    return {"queries": len(texts), "rounds": rounds, "p50_ms": p50, "p99_ms": {n: percentile(v, 99) for n, v in timed.items()},
            "mean_ms": {n: statistics.fmean(v) for n, v in timed.items()},
            "ratio_p50": p50["similarity_search"] / p50["dbapi_knn"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=0, help="only the first N pages")
    parser.add_argument("--every", type=int, default=1, help="every Nth page (a sample across the manual)")
    parser.add_argument("--slices", type=int, default=4)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=1, help="time every query this many times")
    parser.add_argument("--store", help="only the query stage, on a database the store already loaded")
    parser.add_argument("--out", default="integrations", help="results/<out>.json")
    args = parser.parse_args()
    pages = common.pages()
    pages = pages[::args.every]
    pages = pages[:args.pages] if args.pages else pages
    before = os.getloadavg()
    if args.store:
        store = TesseraVectorStore(args.store)
        loaded_ids = {d for (d,) in store.connection.execute("SELECT doc_key FROM documents").fetchall()}
        texts = [q.text for q in common.heading_queries([p for p in pages if p.path in loaded_ids])][:args.queries]
        result = {"query": query(store, texts, args.rounds), "pages_loaded": len(loaded_ids),
                  "loadavg_before": before, "loadavg_after": os.getloadavg(), "cpus": os.cpu_count()}
        store.close()
        _write(args.out, result)
        return
    with tempfile.TemporaryDirectory() as tmp:
        loaded = load(pages, Path(tmp), args.slices)
        store = loaded.pop("store")
        texts = [q.text for q in common.heading_queries(pages)][:args.queries]
        queried = query(store, texts, args.rounds)
        store.close()
    result = {"load": loaded, "query": queried, "loadavg_before": before, "loadavg_after": os.getloadavg(),
              "cpus": os.cpu_count()}
    _write(args.out, result)


def _write(name: str, result: dict) -> None:
    common.RESULTS.mkdir(exist_ok=True)
    (common.RESULTS / f"{name}.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    log(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
