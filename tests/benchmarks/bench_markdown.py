"""chunk_strategy='markdown' against 'recursive' 256/32 on Manticore's manual: quality, load time, section cost.

    TESSERA_BENCH_CORPUS=path/to/manticore_manual .venv/bin/python tests/benchmarks/bench_markdown.py

The manual's 189 pages (``--subset questions``: only the 50 pages questions.jsonl asks about, a fifth of
the text, for a machine too busy to embed the whole manual twice) go, in the same run, into two tables of the same shape (``title string, body
text``, the title being the page's file name in words, and a model column of all-MiniLM-L6-v2 with
``from='title,body'``): one ``chunk_strategy='recursive' max_tokens='256' overlap_tokens='32'``, one
``chunk_strategy='markdown'`` with the same numbers (``chunk_context='heading'``, its default). The load
time of each is measured through the DB-API (batches of 16 pages, one commit). The databases are kept
(default tessera_markdown_bench_*.db under tempfile.gettempdir()) and reused with ``--reuse`` (then the load times are those
of the run that built them).

Quality, for the heading queries of bench_recall (common.heading_queries; deep = after the page's first
1,200 characters) and the hand-written questions of questions.jsonl: recall@1/5/10 and MRR of the right
page with ``knn(v, 10, ?)`` and with ``hybrid_match(?, v)``.

Cost of ``knn_chunk_section()``: p50 of ``SELECT id FROM manual WHERE knn(v, 10, ?) LIMIT 10`` against
the same query selecting ``knn_chunk_section()`` too, on the markdown table, the two interleaved query by
query, the model's query cache cleared before each (every query embeds its text). Results go to
tests/benchmarks/results/markdown.json.
"""
from __future__ import annotations

import argparse
import tempfile
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_hybrid  # noqa: E402
import common  # noqa: E402
from common import log  # noqa: E402

import tesseradb  # noqa: E402

COLUMN = ("CREATE TABLE manual (title string, body text, v float_vector_array knn_type='hnsw' "
          "hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' from='title,body' "
          "chunk_strategy='{strategy}' max_tokens='256' overlap_tokens='32')")
STRATEGIES = ("recursive", "markdown")
METHODS = {
    "knn": "SELECT id FROM manual WHERE knn(v, 10, ?) LIMIT 10",
    "hybrid_match": "SELECT id FROM manual WHERE hybrid_match(?, v) LIMIT 10",
}
PLAIN = "SELECT id FROM manual WHERE knn(v, 10, ?) LIMIT 10"
SECTION = "SELECT id, knn_chunk_section() FROM manual WHERE knn(v, 10, ?) LIMIT 10"


def title_of(page: common.Page) -> str:
    return page.path.rsplit("/", 1)[-1].removesuffix(".md").replace("_", " ")


def corpus(subset: str) -> list[common.Page]:
    """The whole manual, or (``questions``) the 50 pages questions.jsonl asks about (a fifth of it)."""
    docs = common.pages()
    if subset == "all":
        return docs
    asked = {json.loads(line)["page"] for line in bench_hybrid.QUESTIONS.read_text().splitlines() if line.strip()}
    return [p for p in docs if p.path in asked]


def build(path: str, strategy: str, reuse: bool, docs: list[common.Page]) -> dict:
    done = Path(path + ".built.json")
    if reuse and done.exists():
        return json.loads(done.read_text())
    for leftover in (path, path + "-wal", path + "-shm", done):
        if os.path.exists(leftover):
            os.remove(leftover)
    con = tesseradb.connect(path)
    cur = con.cursor()
    cur.execute(COLUMN.format(strategy=strategy))
    started, cpu_started = time.perf_counter(), time.process_time()
    for start in range(0, len(docs), 16):
        cur.executemany("INSERT INTO manual (id, title, body) VALUES (?, ?, ?)",
                        [(p.doc_id, title_of(p), p.text) for p in docs[start:start + 16]])
        log(f"  {strategy}: loaded {min(start + 16, len(docs))}/{len(docs)} pages")
    con.commit()
    load, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    chunks = cur.execute("SELECT SUM(LENGTH(v)) FROM manual").fetchone()[0]
    con.close()
    info = {"strategy": strategy, "pages": len(docs), "chunks": chunks, "load_seconds": load, "load_cpu_seconds": cpu,
            "loadavg_after": common.loadavg()}
    done.write_text(json.dumps(info))
    return info


def quality(cur, queries: list[common.Query]) -> dict:
    out = {}
    for method, sql in METHODS.items():
        ranked = [[r[0] for r in cur.execute(sql, (q.text,)).fetchall()] for q in queries]
        out[method] = common.score(queries, ranked)
    return out


def timed(cur, sql: str, text: str, model) -> tuple[float, float]:
    """Wall and CPU milliseconds (process_time: every thread, the model's included) of one query."""
    model._queries.clear()          # noqa: SLF001 - every timed query embeds its text, as a new query would
    started, cpu_started = time.perf_counter(), time.process_time()
    cur.execute(sql, (text,)).fetchall()
    return (time.perf_counter() - started) * 1000, (time.process_time() - cpu_started) * 1000


def section_cost(cur, model, texts: list[str]) -> dict:
    got: dict[str, list[tuple[float, float]]] = {"knn": [], "knn + knn_chunk_section()": []}
    for n, text in enumerate(texts):         # interleaved, the order alternating
        order = [("knn", PLAIN), ("knn + knn_chunk_section()", SECTION)]
        for name, sql in (order if n % 2 else order[::-1]):
            got[name].append(timed(cur, sql, text, model))
    p50 = {k: statistics.median(w for w, _ in v) for k, v in got.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in got.items()}
    return {"queries": len(texts), "p50_ms": p50, "cpu_p50_ms": cpu,
            "section_over_knn": p50["knn + knn_chunk_section()"] / p50["knn"],
            "section_over_knn_cpu": cpu["knn + knn_chunk_section()"] / cpu["knn"], "loadavg": common.loadavg()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(Path(tempfile.gettempdir()) / "tessera_markdown_bench"))
    ap.add_argument("--reuse", action="store_true", help="keep databases built by an earlier run")
    ap.add_argument("--section-every", type=int, default=7, help="time knn_chunk_section() on every n-th heading query")
    ap.add_argument("--subset", choices=("all", "questions"), default="all",
                    help="the whole manual, or only the pages the questions ask about")
    args = ap.parse_args()
    model = common.model()
    docs = corpus(args.subset)
    heads = common.heading_queries(docs)
    asked = bench_hybrid.questions(docs)
    result: dict = {"subset": args.subset, "pages": len(docs), "queries": len(heads), "questions": len(asked),
                    "builds": {}, "quality": {}}
    for strategy in STRATEGIES:
        log(f"building (or reusing) the {strategy} table")
        result["builds"][strategy] = build(f"{args.db}_{args.subset}_{strategy}.db", strategy, args.reuse, docs)
    builds = result["builds"]
    result["load_ratio_markdown_over_recursive"] = builds["markdown"]["load_seconds"] / builds["recursive"]["load_seconds"]
    result["load_cpu_ratio_markdown_over_recursive"] = (builds["markdown"]["load_cpu_seconds"]
                                                        / builds["recursive"]["load_cpu_seconds"])
    for strategy in STRATEGIES:
        con = tesseradb.connect(f"{args.db}_{args.subset}_{strategy}.db")
        cur = con.cursor()
        result["quality"][strategy] = {"headings": quality(cur, heads), "questions": quality(cur, asked)}
        for name in ("headings", "questions"):
            for method, scores in result["quality"][strategy][name].items():
                d, a = scores["deep"], scores["all"]
                log(f"  {strategy:9s} {name:9s} {method:12s} deep r@1 {d['recall@1']:.3f} mrr {d['mrr']:.3f} | "
                    f"all r@1 {a['recall@1']:.3f} r@10 {a['recall@10']:.3f} mrr {a['mrr']:.3f}")
        if strategy == "markdown":
            log("knn_chunk_section() cost")
            result["section_cost"] = section_cost(cur, model, [q.text for q in heads[::args.section_every]])
            log(json.dumps(result["section_cost"]))
        con.close()
    result["loadavg"] = common.loadavg()
    common.save_result("markdown", result)
    log(f"load ratio markdown/recursive {result['load_ratio_markdown_over_recursive']:.3f} "
        f"(CPU {result['load_cpu_ratio_markdown_over_recursive']:.3f})")


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("markdown")
