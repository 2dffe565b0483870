"""Full-text and hybrid retrieval on Manticore's manual, through SQL: quality and speed.

    .venv/bin/python tests/benchmarks/bench_hybrid.py                 # build once (cached), then measure
    .venv/bin/python tests/benchmarks/bench_hybrid.py --db FILE   # where the built database lives

The manual's 189 pages go into one table (``body text`` + a ``recursive`` 256/32 model column of
all-MiniLM-L6-v2, ``morphology='stem_en'``) through the DB-API, once: the database file is kept (default
tempfile.gettempdir()/tessera_hybrid_bench.db) and reused by later runs. Then, for the heading queries of bench_recall
(common.heading_queries, deep/head) and for the hand-written questions of questions.jsonl:

* ``knn``           ``WHERE knn(v, 10, ?)``
* ``match page``    ``WHERE MATCH(body) AGAINST(?)`` (natural language: any word, page BM25)
* ``match chunk``   BM25 over the column's chunks, each page by its best chunk (the text side of
                    hybrid_match; read from its FTS5 index directly, as SQL has no form for it alone)
* ``hybrid page``   ``MATCH(body) AGAINST(?) AND knn(v, 10, ?) OPTION fusion_method='rrf'``
* ``hybrid chunk``  ``WHERE hybrid_match(?, v)`` (knn + chunk BM25, RRF, k=60)
* ``... w50``, ``w100`` the same with ``OPTION window_size=50`` / ``100`` (candidates per side)
* ``... +stopwords`` on a copy of the database whose table has ``stopwords='en'`` (query-time only)

recall@1/5/10 and MRR of the right page. Speed, as ratios from the same run: the full-text indexes'
share of loading (their bulk build time against the whole load), MATCH top-10 p50 against the
model's time to embed a short query, hybrid_match p50 against knn()-with-text p50 (embedding
included; the model's query cache is cleared before every timed query). Results go to
tests/benchmarks/results/hybrid.json.
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

import apsw

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import log  # noqa: E402

import tesseradb  # noqa: E402
from tesseradb.storage.fulltext import TOKENIZERS, ChunkTextIndex, TextIndex  # noqa: E402
from tesseradb.storage.rowstore import RowStore  # noqa: E402

HERE = Path(__file__).resolve().parent
QUESTIONS = HERE / "questions.jsonl"
DEFAULT_DB = str(Path(tempfile.gettempdir()) / "tessera_hybrid_bench.db")
CREATE = ("CREATE TABLE manual (path string, body text, v float_vector_array knn_type='hnsw' "
          "hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' from='body' "
          "chunk_strategy='recursive' max_tokens='256' overlap_tokens='32') morphology='stem_en'")
METHODS = {
    "knn": "SELECT id FROM manual WHERE knn(v, 10, ?) LIMIT 10",
    "match page": "SELECT id FROM manual WHERE MATCH(body) AGAINST(?) LIMIT 10",
    "hybrid page": "SELECT id FROM manual WHERE MATCH(body) AGAINST(?) AND knn(v, 10, ?) LIMIT 10 "
                   "OPTION fusion_method='rrf'",
    "hybrid chunk": "SELECT id FROM manual WHERE hybrid_match(?, v) LIMIT 10",
    "hybrid chunk w50": "SELECT id FROM manual WHERE hybrid_match(?, v) LIMIT 10 OPTION window_size=50",
    "hybrid chunk w100": "SELECT id FROM manual WHERE hybrid_match(?, v) LIMIT 10 OPTION window_size=100",
    "hybrid page w50": "SELECT id FROM manual WHERE MATCH(body) AGAINST(?) AND knn(v, 10, ?) LIMIT 10 "
                       "OPTION fusion_method='rrf', window_size=50",
}


def build(path: str, create: str = CREATE) -> dict:
    """Load the manual into ``path`` once (``create``: the table's DDL; bench_hybrid_peers gives the
    table the default morphology)."""
    done = Path(path + ".built.json")
    if done.exists():
        return json.loads(done.read_text())
    for leftover in (path, path + "-wal", path + "-shm"):
        if os.path.exists(leftover):
            os.remove(leftover)
    docs = common.pages()
    con = tesseradb.connect(path)
    cur = con.cursor()
    cur.execute(create)
    started = time.perf_counter()
    for start in range(0, len(docs), 16):
        cur.executemany("INSERT INTO manual (id, path, body) VALUES (?, ?, ?)",
                        [(p.doc_id, p.path, p.text) for p in docs[start:start + 16]])
        log(f"  loaded {min(start + 16, len(docs))}/{len(docs)} pages")
    con.commit()
    load = time.perf_counter() - started
    con.close()
    info = {"pages": len(docs), "load_seconds": load}
    info.update(fulltext_share(path, load))
    done.write_text(json.dumps(info))
    return info


def _indexes(store: RowStore) -> tuple[TextIndex, ChunkTextIndex]:
    chunks = store.one("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE '\\_tessera\\_chunks\\_%' "
                       "ESCAPE '\\' AND name NOT LIKE '%\\_doc' ESCAPE '\\'")[0]
    return (TextIndex("manual", ("body",), TOKENIZERS["stem_en"]),
            ChunkTextIndex("manual", chunks, ("body",), TOKENIZERS["stem_en"]))


def fulltext_share(path: str, load: float) -> dict:
    """The indexes' bulk build time (row + chunk level), rolled back, against the whole load."""
    store = RowStore(path)
    row, chunk = _indexes(store)
    store.begin()
    started = time.perf_counter()
    row.rebuild(store)
    row_s = time.perf_counter() - started
    chunk.rebuild(store)
    both = time.perf_counter() - started
    store.rollback()
    store.close()
    return {"fulltext_build_seconds": both, "fulltext_row_seconds": row_s, "fulltext_share_of_load": both / load}


def trigger_cost(rounds: int = 5) -> dict:
    """The row-level index's cost at insert time: the manual's pages inserted into a text table with
    and without the FTS5 triggers (storage level, in memory, best of ``rounds``)."""
    rows = [(p.doc_id, p.path, p.text) for p in common.pages()]
    best = {}
    for with_index in (False, True):
        times = []
        for _ in range(rounds):
            store = RowStore()
            store.execute("CREATE TABLE pages (id INTEGER PRIMARY KEY, path TEXT, body TEXT)")
            if with_index:
                TextIndex("pages", ("body",), TOKENIZERS["stem_en"]).create(store)
            started = time.perf_counter()
            store.begin()
            store.executemany("INSERT INTO pages VALUES (?, ?, ?)", rows)
            store.commit()
            times.append(time.perf_counter() - started)
            store.close()
        best["with" if with_index else "without"] = min(times)
    return {"insert_seconds_without_index": best["without"], "insert_seconds_with_index": best["with"]}


def chunk_text_rank(store: RowStore, chunk: ChunkTextIndex, text: str) -> list[int]:
    from tesseradb.grammar.match_fts5 import to_fts5
    from tesseradb.grammar.match_mysql import parse_against
    expr = to_fts5(parse_against(text, [], boolean=False), ["body"])
    if expr is None:
        return []
    fts = f'"{chunk.name}"'
    sql = (f"WITH x AS MATERIALIZED (SELECT rowid AS c, -bm25({fts}) AS s FROM {fts}(?)) SELECT k.doc_id, MAX(x.s) AS b "
           f'FROM x JOIN "{chunk.chunks}" k ON k.chunk_id = x.c GROUP BY k.doc_id ORDER BY b DESC, k.doc_id LIMIT 10')
    return [r[0] for r in store.execute(sql, (expr,))]


def rank_all(cur, store, chunk, queries) -> tuple[dict[str, list[list[int]]], dict[str, int]]:
    ranked = {m: [] for m in ["match chunk", *METHODS]}
    errors = {m: 0 for m in ranked}
    for q in queries:
        for method, sql in METHODS.items():
            params = (q.text, q.text) if method.startswith("hybrid page") else (q.text,)
            try:
                ranked[method].append([r[0] for r in cur.execute(sql, params).fetchall()])
            except tesseradb.Error:
                errors[method] += 1
                ranked[method].append([])
        ranked["match chunk"].append(chunk_text_rank(store, chunk, q.text))
    return ranked, errors


def questions(docs) -> list[common.Query]:
    by_path = {p.path: p.doc_id for p in docs}
    out = []
    for line in QUESTIONS.read_text().splitlines():
        if line.strip():
            item = json.loads(line)
            out.append(common.Query(item["question"], by_path[item["page"]], 0, False))
    return out


def with_stopwords(path: str) -> str:
    """A copy of the built database whose table has stopwords='en' (a query-time option: same index)."""
    copy = path + ".stopwords.db"
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(copy + suffix):
            os.remove(copy + suffix)
    source = apsw.Connection(path)
    target = apsw.Connection(copy)
    with target.backup("main", source, "main") as backup:
        backup.step()
    definition = json.loads(target.execute("SELECT definition FROM _tessera_catalog WHERE name = 'manual'").fetchone()[0])
    definition.setdefault("options", {})["stopwords"] = "en"
    target.execute("UPDATE _tessera_catalog SET definition = ? WHERE name = 'manual'", (json.dumps(definition),))
    target.close()
    source.close()
    return copy


def timed(cur, sql: str, params, model) -> float:
    model._queries.clear()          # noqa: SLF001 - every timed query embeds its text, as a new query would
    started = time.perf_counter()
    cur.execute(sql, params).fetchall()
    return (time.perf_counter() - started) * 1000


def speed(cur, model, queries) -> dict:
    texts = [q.text for q in queries][:200]
    embed_ms, match_ms, knn_ms, hybrid_ms = [], [], [], []
    for t in texts:
        started = time.perf_counter()
        model.embed([t])
        embed_ms.append((time.perf_counter() - started) * 1000)
        match_ms.append(timed(cur, "SELECT id FROM manual WHERE MATCH(body) AGAINST(?) LIMIT 10", (t,), model))
        knn_ms.append(timed(cur, "SELECT id FROM manual WHERE knn(v, 10, ?) LIMIT 10", (t,), model))
        hybrid_ms.append(timed(cur, "SELECT id FROM manual WHERE hybrid_match(?, v) LIMIT 10", (t,), model))
    p50 = {k: statistics.median(v) for k, v in
           (("embed", embed_ms), ("match", match_ms), ("knn", knn_ms), ("hybrid", hybrid_ms))}
    return {"queries": len(texts), "p50_ms": p50,
            "p95_ms": {k: common.percentile(v, 95) for k, v in
                       (("embed", embed_ms), ("match", match_ms), ("knn", knn_ms), ("hybrid", hybrid_ms))},
            "match_over_embed": p50["match"] / p50["embed"], "hybrid_over_knn": p50["hybrid"] / p50["knn"]}


def speed_only(path: str) -> None:
    result = common.load_result("hybrid")
    result.pop("benchmark", None), result.pop("when", None), result.pop("machine", None)
    con = tesseradb.connect(path)
    log("speed")
    result["speed"] = speed(con.cursor(), common.model(), common.heading_queries(common.pages())[::7])
    result["trigger_cost"] = trigger_cost()
    result["loadavg"] = common.loadavg()
    result.setdefault("speed_runs", []).append({"when": time.strftime("%Y-%m-%d %H:%M:%S"),
                                                "loadavg": result["loadavg"], **result["speed"]})
    log(json.dumps(result["speed"]))
    common.save_result("hybrid", result)
    con.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=DEFAULT_DB)
    ap.add_argument("--speed-only", action="store_true", help="measure speed again (one more entry in speed_runs), "
                    "keep the quality figures")
    args = ap.parse_args()
    if args.speed_only:
        return speed_only(args.db)
    log("building (or reusing) the database")
    info = build(args.db)
    docs = common.pages()
    heads = common.heading_queries(docs)
    asked = questions(docs)
    model = common.model()
    con = tesseradb.connect(args.db)
    cur = con.cursor()
    store = RowStore(args.db)
    _, chunk = _indexes(store)
    result = {"build": info, "queries": len(heads), "questions": len(asked), "methods": {}}
    for name, queries in (("headings", heads), ("questions", asked)):
        log(f"{name}: ranking {len(queries)} queries five ways")
        ranked, errors = rank_all(cur, store, chunk, queries)
        result["methods"][name] = {m: {"scores": common.score(queries, r), "errors": errors[m]}
                                   for m, r in ranked.items()}
        for m, r in result["methods"][name].items():
            d, a = r["scores"]["deep"], r["scores"]["all"]
            log(f"  {m:13s} deep r@1 {d['recall@1']:.3f} mrr {d['mrr']:.3f} | all r@1 {a['recall@1']:.3f} "
                f"r@10 {a['recall@10']:.3f} mrr {a['mrr']:.3f} | errors {r['errors']}")
    sw_con = tesseradb.connect(with_stopwords(args.db))
    sw_cur = sw_con.cursor()
    for name, queries in (("headings", heads), ("questions", asked)):
        log(f"{name}: with stopwords='en'")
        for method in ("match page", "hybrid chunk", "hybrid chunk w50"):
            ranked = [[r[0] for r in sw_cur.execute(METHODS[method], (q.text,)).fetchall()] for q in queries]
            scores = common.score(queries, ranked)
            result["methods"][name][method + " +stopwords"] = {"scores": scores, "errors": 0}
            d, a = scores["deep"], scores["all"]
            log(f"  {method + ' +sw':20s} deep r@1 {d['recall@1']:.3f} mrr {d['mrr']:.3f} | all r@1 "
                f"{a['recall@1']:.3f} r@10 {a['recall@10']:.3f} mrr {a['mrr']:.3f}")
    sw_con.close()
    log("speed")
    result["speed"] = speed(cur, model, heads[::7])
    result["speed_runs"] = [{"when": time.strftime("%Y-%m-%d %H:%M:%S"), "loadavg": common.loadavg(), **result["speed"]}]
    result["trigger_cost"] = trigger_cost()
    result["loadavg"] = common.loadavg()
    log(json.dumps(result["speed"]))
    common.save_result("hybrid", result)
    con.close()


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("hybrid")
