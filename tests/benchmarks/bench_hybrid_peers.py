"""hybrid_match()'s defaults side by side with LanceDB, plus MMR, length penalty and linear fusion, in
one run, on Manticore's manual (issue 24).

    .venv/bin/python tests/benchmarks/bench_hybrid_peers.py [--db FILE]   # needs the `bench` extra (lancedb)

The database is built as bench_hybrid's (once, reused; recursive 256/32 chunks of all-MiniLM-L6-v2)
but with the table's default morphology (give it its own --db). Opening it with this release rebuilds its chunk-level index once if it
was built the previous release's way (logged). Everyone gets the same chunks and the same vectors:
LanceDB receives the engine's stored chunk vectors (checked equal to ``Connection.embed`` of a sample
of pages), each chunk's text, and builds its own full-text index (English stemming and stop words,
its defaults). Methods, each over the heading queries and the natural-language questions:

* ``knn``                        ``knn(v, 10, ?)``
* ``hybrid_match old defaults``  the previous release's hybrid_match rebuilt from its parts: knn top 10
                                 and chunk BM25 over an unstemmed (unicode61) copy of the chunk text,
                                 English stop words out of the query, 10 candidates per side, RRF k=60
* ``hybrid_match``               ``hybrid_match(?, v)`` (this release's defaults)
* ``hybrid_match no heading field``  this release's defaults but the chunk BM25 over the chunk text
                                 alone (no heading-path field): what the default was before that field
* ``hybrid_match rrf``           the defaults with ``OPTION fusion_method='rrf'`` (k=60)
* ``lancedb hybrid``             ``search(query_type='hybrid')``, 50 chunks per side, RRFReranker
                                 (k=60), chunks collapsed to pages in order
* ``knn mmr 0.5`` / ``knn length_penalty 0.25``  the knn options

Questions (questions.jsonl): "deep" = written against a passage past the page's first 1,200
characters (page and offset recorded), "head" = the earlier 50 without an offset. Also: the share of
distinct manual sections (top-level folders) in knn's top 10 with and without MMR, and the synthetic
length-penalty corpus (one ~150-chunk document among short ones). Results: results/hybrid_peers.json.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import warnings
from pathlib import Path

import apsw
import numpy as np

os.environ.setdefault("LANCE_LOG", "error")      # lance's deprecation notes on every hybrid search

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_hybrid  # noqa: E402
import common  # noqa: E402
from common import log  # noqa: E402

import tesseradb  # noqa: E402
from tesseradb.grammar.match_fts5 import to_fts5  # noqa: E402
from tesseradb.grammar.match_mysql import parse_against  # noqa: E402
from tesseradb.grammar.stopwords import ENGLISH  # noqa: E402
from tesseradb.storage.chunk_table import read_vectors  # noqa: E402
from tesseradb.vectors import score_fusion  # noqa: E402
from tesseradb.vectors.fusion import RankedList  # noqa: E402

MODEL = "Xenova/all-MiniLM-L6-v2"
# bench_hybrid's table with the default morphology: hybrid_match's chunk index stems whatever it says
CREATE = bench_hybrid.CREATE.replace(" morphology='stem_en'", "")
CHUNKING = {"chunk_strategy": "recursive", "max_tokens": 256, "overlap_tokens": 32}
SQL = {
    "knn": "SELECT id FROM manual WHERE knn(v, 10, ?) LIMIT 10",
    "hybrid_match": "SELECT id FROM manual WHERE hybrid_match(?, v) LIMIT 10",
    "hybrid_match rrf": "SELECT id FROM manual WHERE hybrid_match(?, v) LIMIT 10 OPTION fusion_method='rrf'",
    "hybrid_match rank_constant=20": "SELECT id FROM manual WHERE hybrid_match(?, v) LIMIT 10 OPTION rank_constant=20",
    "hybrid_match window_size=100": "SELECT id FROM manual WHERE hybrid_match(?, v) LIMIT 10 OPTION window_size=100",
    "knn mmr 0.5": "SELECT id FROM manual WHERE knn(v, 10, ?, {mmr=0.5}) LIMIT 10",
    "knn length_penalty 0.25": "SELECT id FROM manual WHERE knn(v, 10, ?, {length_penalty=0.25}) LIMIT 10",
}


def questions(docs) -> list[common.Query]:
    by_path = {p.path: p.doc_id for p in docs}
    out = []
    for line in bench_hybrid.QUESTIONS.read_text().splitlines():
        if line.strip():
            item = json.loads(line)
            if item["page"] not in by_path:         # a corpus of part of the manual (TESSERA_BENCH_CORPUS)
                continue
            offset = item.get("offset")
            out.append(common.Query(item["question"], by_path[item["page"]], offset or 0,
                                    offset is not None and offset >= common.DEEP_AFTER))
    return out


# -- the shared chunks -------------------------------------------------------------------------------
def chunks(con) -> tuple[list[tuple[int, int, str]], np.ndarray]:
    """(chunk_id, doc_id, text) of every chunk, and their stored vectors in the same order."""
    db = con.db
    table = db.table("manual")
    layout = table.layout("v")
    rows = list(db.store.execute(f'SELECT k.chunk_id, k.doc_id, substr(r.body, k.start + 1, k."end" - k.start) '
                                 f'FROM "{layout.chunks}" k JOIN manual r ON r.id = k.doc_id ORDER BY k.doc_id, k.ord'))
    ids, _, vectors = read_vectors(db.store, layout)
    row_of = {int(c): i for i, c in enumerate(ids.tolist())}
    return [(int(c), int(d), t) for c, d, t in rows], vectors[[row_of[c] for c, _, _ in rows]]


def check_same_vectors(con, docs, found: list[tuple[int, int, str]], vectors: np.ndarray) -> int:
    """The stored vectors are what Connection.embed gives for the page (three pages checked)."""
    sample = [p for p in docs if 2000 < len(p.text) < 8000][:3]
    for page in sample:
        mine = np.array([i for i, (_, d, _) in enumerate(found) if d == page.doc_id])
        embedded = con.embed(page.text, MODEL, **CHUNKING)
        assert embedded.shape == vectors[mine].shape and np.allclose(embedded, vectors[mine], atol=1e-4), page.path
    return len(sample)


# -- the previous release's hybrid_match, from its parts ---------------------------------------------
class OldHybrid:
    def __init__(self, found: list[tuple[int, int, str]]):
        self.mem = apsw.Connection(":memory:")
        self.mem.execute("CREATE VIRTUAL TABLE c USING fts5(body, tokenize=\"unicode61 tokenchars '_'\")")
        self.mem.execute("CREATE TABLE k (chunk_id INTEGER PRIMARY KEY, doc_id INTEGER)")
        with self.mem:
            self.mem.executemany("INSERT INTO c (rowid, body) VALUES (?, ?)", [(c, t) for c, _, t in found])
            self.mem.executemany("INSERT INTO k VALUES (?, ?)", [(c, d) for c, d, _ in found])

    def text_side(self, text: str, window: int) -> list[tuple[int, float, None]]:
        expression = to_fts5(parse_against(text, [], boolean=False), ["body"], ENGLISH)
        if expression is None:
            return []
        sql = ("WITH x AS MATERIALIZED (SELECT rowid AS chunk_id, -bm25(c) AS s FROM c(?)) SELECT k.doc_id, MAX(x.s) "
               "AS best FROM x JOIN k ON k.chunk_id = x.chunk_id GROUP BY k.doc_id ORDER BY best DESC, k.doc_id LIMIT ?")
        return [(int(d), float(s), None) for d, s in self.mem.execute(sql, (expression, window))]

    def rank(self, cur, text: str) -> list[int]:
        knn = [(int(d), float(s), None) for d, s in
               cur.execute("SELECT id, knn_dist() FROM manual WHERE knn(v, 10, ?) LIMIT 10", (text,))]
        fused = score_fusion.fuse([RankedList(None, "text", self.text_side(text, 10)), RankedList(None, "knn", knn)],
                                 "rrf", 60, "minmax")
        return [h.doc_id for h in fused[:10]]


class NoHeadingField(OldHybrid):
    """This release's hybrid_match without the chunk index's heading field: the chunk text alone,
    stemmed (``porter``), 50 candidates per side, linear min-max fusion."""
    def __init__(self, found: list[tuple[int, int, str]]):
        self.mem = apsw.Connection(":memory:")
        self.mem.execute("CREATE VIRTUAL TABLE c USING fts5(body, tokenize=\"porter unicode61 tokenchars '_'\")")
        self.mem.execute("CREATE TABLE k (chunk_id INTEGER PRIMARY KEY, doc_id INTEGER)")
        with self.mem:
            self.mem.executemany("INSERT INTO c (rowid, body) VALUES (?, ?)", [(c, t) for c, _, t in found])
            self.mem.executemany("INSERT INTO k VALUES (?, ?)", [(c, d) for c, d, _ in found])

    def rank(self, cur, text: str) -> list[int]:
        knn = [(int(d), float(s), None) for d, s in
               cur.execute("SELECT id, knn_dist() FROM manual WHERE knn(v, 50, ?) LIMIT 50", (text,))]
        lists = [RankedList(None, "text", self.text_side(text, 50)), RankedList(None, "knn", knn)]
        return [h.doc_id for h in score_fusion.fuse(lists, "linear", 0, "minmax")[:10]]


# -- LanceDB ---------------------------------------------------------------------------------------------
class Lance:
    def __init__(self, found: list[tuple[int, int, str]], vectors: np.ndarray, model):
        import lancedb
        import pyarrow as pa
        from lancedb.index import FTS
        from lancedb.rerankers import RRFReranker
        self.version, self.model, self.reranker = lancedb.__version__, model, RRFReranker(K=60)
        self.dir = tempfile.mkdtemp(prefix="lancedb-bench-")
        data = pa.table({"chunk_id": [c for c, _, _ in found], "doc_id": [d for _, d, _ in found],
                         "text": [t for _, _, t in found],
                         "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), vectors.shape[1])})
        started = time.perf_counter()
        self.table = lancedb.connect(self.dir).create_table("chunks", data=data)
        self.table.create_index("text", config=FTS(language="English", stem=True, remove_stop_words=True))
        self.build_seconds = time.perf_counter() - started

    def rank(self, text: str) -> list[int]:
        vector = self.model.embed_query(text).astype(np.float32).tolist()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            hits = (self.table.search(query_type="hybrid").vector(vector).text(text).limit(50)
                    .rerank(self.reranker).select(["doc_id"]).to_list())
        out = []
        for h in hits:
            if h["doc_id"] not in out:
                out.append(h["doc_id"])
        return out[:10]


# -- measuring ----------------------------------------------------------------------------------------------
def rank_all(cur, old: OldHybrid, plain: NoHeadingField, lance: Lance, queries) -> tuple[dict[str, list[list[int]]], dict[str, int]]:
    ranked = {m: [] for m in ["knn", "hybrid_match old defaults", "hybrid_match no heading field",
                              *[m for m in SQL if m != "knn"], "lancedb hybrid"]}
    errors = {m: 0 for m in ranked}
    for n, q in enumerate(queries):
        for method, sql in SQL.items():
            try:
                ranked[method].append([r[0] for r in cur.execute(sql, (q.text,))])
            except tesseradb.Error:
                errors[method] += 1
                ranked[method].append([])
        ranked["hybrid_match old defaults"].append(old.rank(cur, q.text))
        ranked["hybrid_match no heading field"].append(plain.rank(cur, q.text))
        ranked["lancedb hybrid"].append(lance.rank(q.text))
        if n % 100 == 99:
            log(f"  {n + 1}/{len(queries)}")
    return ranked, errors


def section_share(docs, ranked: list[list[int]]) -> float:
    """Mean share of distinct top-level folders of the manual among a top 10."""
    folder = {p.doc_id: p.path.split("/")[0] for p in docs}
    return float(np.mean([len({folder[d] for d in r}) / max(len(r), 1) for r in ranked if r]))


def synthetic_length(model_rounds: int = 1) -> dict:
    """One long document (~150 chunks of 64 tokens of manual text) among 60 short pages' openings (one
    chunk each); queries: each short page's first heading. How often the long one is in the top 10 / first, and recall, with and without."""
    docs = [p for p in common.pages() if common.headings(p)]
    short, rest = docs[::3][:60], [p for i, p in enumerate(docs) if i % 3][:80]
    long_text = "\n\n".join(p.text for p in rest)[:150 * 150]
    con = tesseradb.connect(":memory:")
    cur = con.cursor()
    cur.execute("CREATE TABLE s (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
                f"model_name='{MODEL}' from='body' chunk_strategy='recursive' max_tokens='64' overlap_tokens='8')")
    cur.executemany("INSERT INTO s (id, body) VALUES (?, ?)", [(i + 1, p.text[:200]) for i, p in enumerate(short)])
    cur.execute("INSERT INTO s (id, body) VALUES (1000, ?)", (long_text,))
    con.commit()
    long_chunks = cur.execute("SELECT LENGTH(v) FROM s WHERE id = 1000").fetchone()[0]
    queries = [common.Query(common.headings(p)[0][0], i + 1, 0, False) for i, p in enumerate(short)]
    out = {"short_documents": len(short), "long_document_chunks": long_chunks, "fair_share_top10": 10 / (len(short) + 1)}
    for name, opts in (("without", ""), ("length_penalty 0.25", ", {length_penalty=0.25}"),
                       ("length_penalty 1", ", {length_penalty=1}")):
        ranked = [[r[0] for r in cur.execute(f"SELECT id FROM s WHERE knn(v, 10, ?{opts}) LIMIT 10", (q.text,))]
                  for q in queries]
        out[name] = {"long_in_top10": sum(1000 in r for r in ranked) / len(ranked),
                     "long_first": sum(bool(r) and r[0] == 1000 for r in ranked) / len(ranked),
                     "scores": common.score(queries, ranked)["all"]}
    con.close()
    return out


def rerank_speed(queries, rounds: dict[str, int]) -> dict:
    """Reranking 50 candidates per cross-encoder size: the model scoring 50 (question, passage) pairs,
    passages of about 256 tokens of the manual (what hybrid_match's best chunks are here), p50 over a
    few questions. Random-weight BERTs of each published shape (tests/vectors/cross_encoder.py): the time
    does not depend on the weights."""
    sys.path.insert(0, str(common.REPO / "tests" / "vectors"))
    import cross_encoder
    from tesseradb.vectors import rerank
    text = "\n".join(p.text for p in common.pages()[40:80])
    passages = [text[i:i + 1000] for i in range(0, 50 * 1000, 1000)]
    out = {}
    for name, shape in (("tiny (2 layers, 32 wide)", cross_encoder.TINY),
                        ("MiniLM-L6 size (6 layers, 384 wide)", cross_encoder.MINILM_L6),
                        ("base size (12 layers, 768 wide)", cross_encoder.BASE)):
        if not rounds[name.split(" ")[0]]:
            continue
        directory = cross_encoder.build(Path(tempfile.mkdtemp(prefix="xenc-")) / "m", passages, shape=shape)
        t0 = time.perf_counter()
        model = rerank.get(str(directory))
        load_ms = (time.perf_counter() - t0) * 1000
        times = []
        for q in queries[:rounds[name.split(" ")[0]]]:
            t0 = time.perf_counter()
            model.scores(q.text, passages)
            times.append((time.perf_counter() - t0) * 1000)
        out[name] = {"queries": len(times), "candidates": len(passages), "p50_ms": float(np.median(times)),
                     "load_ms": load_ms, "loadavg": common.loadavg()}
        log(f"  rerank {name}: {json.dumps(out[name])}")
    return out


def summary(name: str, scores: dict, groups=("deep", "head", "all")) -> str:
    return f"  {name:28s} " + " | ".join(
        f"{g} r@1 {scores[g]['recall@1']:.3f} r@5 {scores[g]['recall@5']:.3f} mrr {scores[g]['mrr']:.3f}"
        for g in groups if scores[g]["n"])


def _save(part: dict) -> None:
    """Merge this run's part into results/hybrid_peers.json (--extras and the main run are separate)."""
    result = common.load_result("hybrid_peers") or {}
    for key in ("benchmark", "when", "machine"):
        result.pop(key, None)
    result.update(part)
    common.save_result("hybrid_peers", result)


def extras(rerank_rounds: dict[str, int]) -> None:
    """The parts that need no manual database: the synthetic length-penalty corpus and rerank speed."""
    started = time.perf_counter()
    log("synthetic length-penalty corpus")
    part = {"synthetic_length": synthetic_length()}
    log(json.dumps(part["synthetic_length"]))
    if any(rerank_rounds.values()):
        log("rerank speed")
        part["rerank_speed"] = rerank_speed(questions(common.pages()), rerank_rounds)
    part["extras_loadavg"], part["extras_seconds"] = common.loadavg(), time.perf_counter() - started
    _save(part)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=str(Path(tempfile.gettempdir()) / "tessera_hybrid_peers_bench.db"))
    ap.add_argument("--extras", action="store_true", help="only the synthetic length-penalty corpus and rerank speed")
    ap.add_argument("--headings-every", type=int, default=1, help="use every n-th heading query (a shorter run)")
    ap.add_argument("--rerank-rounds", default="10,3,2", help="--extras: questions timed per cross-encoder size "
                    "(tiny, MiniLM-L6, base); 0 skips a size")
    args = ap.parse_args()
    if args.extras:
        return extras(dict(zip(("tiny", "MiniLM-L6", "base"), (int(x) for x in args.rerank_rounds.split(",")))))
    started = time.perf_counter()
    info = bench_hybrid.build(args.db, CREATE)
    docs = common.pages()
    heads, asked = common.heading_queries(docs)[::args.headings_every], questions(docs)
    model = common.model()
    opened = time.perf_counter()
    con = tesseradb.connect(args.db)            # rebuilds an old chunk index once (logged by tesseradb.fulltext)
    result = {"build": info, "open_seconds": time.perf_counter() - opened, "headings": len(heads),
              "headings_every": args.headings_every,
              "questions": len(asked), "deep_questions": sum(q.deep for q in asked), "methods": {}}
    found, vectors = chunks(con)
    result["chunks"], result["vectors_checked_against_embed"] = len(found), check_same_vectors(con, docs, found, vectors)
    old, plain, lance = OldHybrid(found), NoHeadingField(found), Lance(found, vectors, model)
    result["lancedb"] = {"version": lance.version, "build_seconds": lance.build_seconds}
    cur = con.cursor()
    for name, queries in (("headings", heads), ("questions", asked)):
        log(f"{name}: {len(queries)} queries")
        ranked, errors = rank_all(cur, old, plain, lance, queries)
        result["methods"][name] = {m: {"scores": common.score(queries, r), "errors": errors[m]} for m, r in ranked.items()}
        result.setdefault("section_share", {})[name] = {m: section_share(docs, ranked[m]) for m in ("knn", "knn mmr 0.5")}
        for m, r in result["methods"][name].items():
            log(summary(m, r["scores"]))
    log("speed (bench_hybrid.speed: hybrid_match vs knn p50, query cache cleared)")
    result["speed"] = bench_hybrid.speed(cur, model, heads[::7])
    log(json.dumps(result["speed"]))
    result["loadavg"], result["seconds"] = common.loadavg(), time.perf_counter() - started
    _save(result)
    con.close()


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("hybrid-peers")
