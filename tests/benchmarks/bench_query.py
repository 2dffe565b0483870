"""Query latency: text knn() through the DB-API on the manual, and the ANN step alone at scale.

    .venv/bin/python tests/benchmarks/bench_query.py                    # manual + 100k vectors
    .venv/bin/python tests/benchmarks/bench_query.py --sizes 100000,1000000
    .venv/bin/python tests/benchmarks/bench_query.py --sizes ''         # the manual only

1. **The manual** (the database bench_ingest.py leaves under the cache directory; built here if
   missing): ``SELECT id FROM manual WHERE knn(v_rec, 10, ?)`` with a section heading as the text,
   timed around ``execute(...).fetchall()``. "first" = a text this process has not embedded yet (the
   query embedding is part of it), "cached" = the same texts again (served by the model's query
   cache). The parts are timed too: the model alone on the same texts, and the ANN step alone.
   Also: knn() with the query's vector written in the SQL text vs bound as a parameter
   (interleaved), and the model's own p50 on the same texts, as ratios.
2. **The ANN step alone** (storage.vectors.VectorIndex.search, k=10, default ef) on N supplied
   384-dim vectors - clustered gaussian data as in bench_vectors.py (a cluster per 100 vectors,
   L2-normalised, cosine) - with recall@10 against exact search. The built index is kept under the
   cache directory, so a rerun skips the build.

3. **INSERT of 1,000 rows of 384-d vectors** written in the SQL text vs bound as parameters (each row
   its own execute; and one multi-row statement vs executemany), in fresh databases.

Writes tests/benchmarks/results/query.json.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_vectors  # noqa: E402
import common  # noqa: E402
from common import CACHE, log, percentile  # noqa: E402

from tesseradb.storage.vectors import VectorIndex  # noqa: E402


def timed_ms(fn) -> float:
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1000


def stats(ms: list[float]) -> dict:
    return {"p50": percentile(ms, 50), "p99": percentile(ms, 99), "mean": float(np.mean(ms)), "n": len(ms)}


def build_manual() -> None:
    """The database bench_ingest.py leaves, loaded by the engine alone (no bare model, no DIY)."""
    import tesseradb
    import bench_ingest
    log(f"loading the manual into {bench_ingest.DB_PATH} (the engine only)")
    con = tesseradb.connect(str(bench_ingest.DB_PATH))
    con.execute(bench_ingest.CREATE)
    pages = common.pages()
    for s in range(0, len(pages), 20):
        con.executemany(bench_ingest.INSERT, [(p.doc_id, p.path, p.text) for p in pages[s:s + 20]])
        con.commit()
        log(f"  {min(s + 20, len(pages))}/{len(pages)} pages")
    for col in ("v_trunc", "v_rec"):
        con.execute(bench_ingest.KNN.format(col=col), ("warm up the index",)).fetchall()
    con.close()


def interleaved(fns: dict, rounds: list) -> dict:
    """Time each of ``fns`` on every item of ``rounds``, taking turns (load falls on all alike)."""
    ms: dict[str, list[float]] = {name: [] for name in fns}
    for i, item in enumerate(rounds):
        names = list(fns)
        names = names[i % len(names):] + names[:i % len(names)]
        for name in names:
            ms[name].append(timed_ms(lambda: fns[name](item)))
    return {name: stats(v) for name, v in ms.items()}


def vector_sql(vec: np.ndarray) -> str:
    return "(" + ", ".join(repr(float(v)) for v in vec) + ")"


def literals_vs_parameters(con, col: str, vecs: np.ndarray) -> dict:
    """knn() with the query vector written in the SQL text vs passed as a parameter."""
    cur = con.cursor()
    param_sql = f"SELECT id FROM manual WHERE knn({col}, 10, ?)"
    texts = [f"SELECT id FROM manual WHERE knn({col}, 10, {vector_sql(v)})" for v in vecs]
    cur.execute(param_sql, (vecs[0].tolist(),)).fetchall()
    out = interleaved({"parameter": lambda i: cur.execute(param_sql, (vecs[i].tolist(),)).fetchall(),
                       "literal": lambda i: cur.execute(texts[i]).fetchall()}, list(range(len(vecs))))
    out["ratio_p50"] = out["literal"]["p50"] / out["parameter"]["p50"]
    return out


def insert_literals(rows: int = 1000, dims: int = 384) -> dict:
    """INSERT of ``rows`` 384-d vectors: written in SQL text vs bound as parameters, same rows."""
    import tempfile
    import tesseradb
    rng = np.random.default_rng(3)
    x = rng.standard_normal((rows, dims)).astype(np.float32)
    ddl = f"CREATE TABLE v (tag int, e float_vector knn_type='hnsw' knn_dims='{dims}' hnsw_similarity='cosine')"
    out: dict = {"rows": rows, "dims": dims}
    with tempfile.TemporaryDirectory() as folder:
        def run(name, load) -> float:
            con = tesseradb.connect(f"{folder}/{name}.db")
            con.execute(ddl)
            con.commit()
            started = time.perf_counter()
            load(con)
            con.commit()
            seconds = time.perf_counter() - started
            con.close()
            return seconds
        one_lit = [f"INSERT INTO v (id, tag, e) VALUES ({i + 1}, {i % 7}, {vector_sql(x[i])})" for i in range(rows)]
        many_lit = "INSERT INTO v (id, tag, e) VALUES " + ", ".join(
            f"({i + 1}, {i % 7}, {vector_sql(x[i])})" for i in range(rows))
        params = [(i + 1, i % 7, x[i].tolist()) for i in range(rows)]
        for rnd in range(2):       # twice, alternating the order; the second round counts
            out["execute_each_literal_s"] = run(f"a{rnd}", lambda c: [c.execute(sql) for sql in one_lit])
            out["execute_each_parameters_s"] = run(f"b{rnd}", lambda c: [c.execute(
                "INSERT INTO v (id, tag, e) VALUES (?, ?, ?)", p) for p in params])
            out["one_statement_literal_s"] = run(f"c{rnd}", lambda c: c.execute(many_lit))
            out["executemany_parameters_s"] = run(f"d{rnd}", lambda c: c.executemany(
                "INSERT INTO v (id, tag, e) VALUES (?, ?, ?)", params))
    out["ratio_each"] = out["execute_each_literal_s"] / out["execute_each_parameters_s"]
    out["ratio_batch"] = out["one_statement_literal_s"] / out["executemany_parameters_s"]
    log(f"insert {rows} x {dims}: per-row literal/params {out['ratio_each']:.2f}x, "
        f"one statement vs executemany {out['ratio_batch']:.2f}x")
    return out


def literal_only(args: argparse.Namespace, result: dict) -> None:
    """Only the literal-vs-parameter comparison, on the loaded manual (the rest of result kept)."""
    import tesseradb
    import bench_ingest
    queries = [q.text for q in common.heading_queries(common.pages())]
    rng = np.random.default_rng(7)
    texts = [queries[i] for i in rng.choice(len(queries), min(args.manual_queries, len(queries)), replace=False)]
    vecs = np.asarray(common.model().embed(texts[:100]))
    con = tesseradb.connect(str(bench_ingest.DB_PATH))
    for col in ("v_rec", "v_trunc"):
        out = literals_vs_parameters(con, col, vecs)
        out["loadavg"] = common.loadavg()
        result["manual"][col]["literal_vs_parameter"] = out
        log(f"manual {col}: literal/parameter p50 {out['ratio_p50']:.2f}x (load {out['loadavg']})")
    con.close()


def manual(args: argparse.Namespace) -> dict:
    import tesseradb
    import bench_ingest
    path = args.db or bench_ingest.DB_PATH
    if not path.exists():
        if not args.build_manual:
            raise SystemExit(f"{bench_ingest.DB_PATH} is missing: run bench_ingest.py first (or --build-manual)")
        build_manual()
    queries = [q.text for q in common.heading_queries(common.pages())]
    rng = np.random.default_rng(7)
    texts = [queries[i] for i in rng.choice(len(queries), min(args.manual_queries, len(queries)), replace=False)]
    model = common.model()
    con = tesseradb.connect(str(path))
    cur = con.cursor()
    out: dict = {"queries": len(texts), "loadavg_start": common.loadavg(), "database": path.name}
    for col in args.columns.split(","):
        sql = bench_ingest.KNN.format(col=col)
        open_ms = timed_ms(lambda: cur.execute(sql, ("open the index",)).fetchall())  # loads the index file
        idx = con.db.column_index(con.db.table("manual"), col).catch_up()
        model._queries.clear()  # "first" = not embedded yet in this process, also for the second column
        first, model_ms = [], []
        for t in texts:        # interleaved: the query (its text not embedded yet), then the model alone on it
            first.append(timed_ms(lambda t=t: cur.execute(sql, (t,)).fetchall()))
            model_ms.append(timed_ms(lambda t=t: model.embed([t])))
        cached = [timed_ms(lambda t=t: cur.execute(sql, (t,)).fetchall()) for t in texts for _ in range(args.repeats)]
        vecs = model.embed(texts)
        ann = [timed_ms(lambda v=v: idx.search(v, 10)) for v in vecs]
        out[col] = {"vectors": len(idx), "first_query_opens_index_ms": open_ms, "first": stats(first),
                    "cached": stats(cached), "model_alone": stats(model_ms), "ann_alone": stats(ann),
                    "plan": {k: v for k, v in idx.explain(10).items()},
                    "literal_vs_parameter": literals_vs_parameters(con, col, np.asarray(vecs)[:100])}
        out[col]["first_over_model_p50"] = out[col]["first"]["p50"] / out[col]["model_alone"]["p50"]
        log(f"manual {col}: first/model p50 {out[col]['first_over_model_p50']:.2f}x, literal/parameter p50 "
            f"{out[col]['literal_vs_parameter']['ratio_p50']:.2f}x")
        log(f"manual {col}: first p50 {out[col]['first']['p50']:.2f} ms p99 {out[col]['first']['p99']:.2f} | "
            f"cached p50 {out[col]['cached']['p50']:.2f} p99 {out[col]['cached']['p99']:.2f} | model p50 "
            f"{out[col]['model_alone']['p50']:.2f} | ann p50 {out[col]['ann_alone']['p50']:.3f}")
    con.close()
    out["loadavg_end"] = common.loadavg()
    return out


def ann(n: int, args: argparse.Namespace) -> dict:
    dims = 384
    rng = np.random.default_rng(n)
    centres = rng.standard_normal((max(1, n // 100), dims), dtype=np.float32)
    x = bench_vectors.clustered(n, dims, rng, centres)
    q = bench_vectors.clustered(args.ann_queries, dims, rng, centres)
    path = CACHE / f"ann-{n}-{dims}.idx"
    out: dict = {"n": n, "dims": dims, "queries": args.ann_queries, "data": "clustered gaussian (bench_vectors.py)",
                 "loadavg_start": common.loadavg()}
    loaded = VectorIndex.load(str(path)) if path.exists() else None
    if loaded is not None and loaded[1] == f"bench:{n}":
        index = loaded[0]
        out["build"] = "loaded from the cache directory (built by an earlier run)"
    else:
        index = VectorIndex(dims, "cosine")
        ids = np.arange(n, dtype=np.int64)
        started = time.perf_counter()
        for s in range(0, n, 10_000):
            index.add(ids[s:s + 10_000], ids[s:s + 10_000], x[s:s + 10_000])
            log(f"  ann {n}: added {min(s + 10_000, n)}")
        seconds = time.perf_counter() - started
        out["build"] = {"seconds": seconds, "vectors_per_s": n / seconds}
        CACHE.mkdir(parents=True, exist_ok=True)
        index.save(str(path), f"bench:{n}")
    truth = bench_vectors.exact_topk(x, q, 10)
    index.search(q[0], 10)  # warm
    ms = [timed_ms(lambda v=v: index.search(v, 10)) for v in q]
    found = [{d for d, _, _ in index.search(v, 10)} for v in q]
    out["recall@10"] = float(np.mean([len(f & t) / 10 for f, t in zip(found, truth)]))
    out["search"] = stats(ms)
    out["plan"] = index.explain(10)
    out["index_file_bytes"] = path.stat().st_size if path.exists() else None
    out["loadavg_end"] = common.loadavg()
    log(f"ann {n}: p50 {out['search']['p50']:.3f} ms p99 {out['search']['p99']:.3f} ms recall@10 {out['recall@10']:.3f}"
        f" (ef {out['plan']['ef']})")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100000", help="ANN sizes, comma-separated ('' = none)")
    ap.add_argument("--no-manual", action="store_true", help="skip the DB-API queries on the manual")
    ap.add_argument("--manual-queries", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=3, help="cached repeats of each manual query")
    ap.add_argument("--ann-queries", type=int, default=300)
    ap.add_argument("--build-manual", action="store_true", help="load the manual here when bench_ingest's database is missing")
    ap.add_argument("--no-insert", action="store_true", help="skip INSERT of literal vs parameter vectors")
    ap.add_argument("--literal-only", action="store_true", help="only rerun knn literal vs parameter on the manual")
    ap.add_argument("--db", type=Path, default=None, help="the manual database (default: bench_ingest's); its "
                    "table is `manual`")
    ap.add_argument("--columns", default="v_rec,v_trunc", help="the vector columns of `manual` to query")
    args = ap.parse_args()
    result = common.load_result("query") or {}
    if args.literal_only:
        literal_only(args, result)
        common.save_result("query", result)
        return
    if not args.no_manual:
        result["manual"] = manual(args)
        common.save_result("query", result)
    if not args.no_insert:
        result["insert_literals"] = insert_literals()
        common.save_result("query", result)
    for n in [int(s) for s in args.sizes.split(",") if s]:
        result.setdefault("ann", {})[str(n)] = ann(n, args)
        common.save_result("query", result)
    log(f"wrote {common.RESULTS / 'query.json'}")


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("query", "speed", "targets", "engine-notes")
