"""Passage-level retrieval (issue 32): does the FIRST passage hold the answer, not just the right page?

    TESSERA_BENCH_CORPUS=path/to/manticore_manual nice .venv/bin/python tests/benchmarks/bench_passages.py

Two sets of questions, each question with a **quote**: a short verbatim span of its page that answers it.

* **tuning** (passage_quotes.jsonl, the rows whose ``review`` is ``kept`` or ``corrected``): 63 questions
  of questions.jsonl on 37 pages (every 4th page it asks about, sorted by path). Their quotes were first
  picked automatically (``--make-quotes``: the page sentence sharing the most words with the question),
  then reviewed by reading each question and its page: 32 kept, 31 replaced by the span that answers
  (the automatic pick was often a sentence that repeats the question's words but does not answer it).
  The 180 other rows are still unreviewed and are not measured. The passage rule was chosen on this set.
* **held-out** (passage_quotes_heldout.jsonl): 57 questions written by reading 30 other pages (none of
  the tuning set's), in a user's words rather than the page's, each with the span that answers it.
  Never used to choose anything; the issue's targets are judged on it.

The pages of both sets (``--subset all``: the whole manual) are copied to a scratch folder and loaded
twice, the way ``tessera index`` loads a folder: ``LOAD DATA INFILE 'DIR/**/*' SYNC`` into its table
(``path, title, body, meta, modified``, ``chunk_strategy='markdown' max_tokens='256' overlap_tokens='32'``,
``from='title,body'``), and into the same layout with ``chunk_strategy='recursive'`` 256/32. The
databases are kept (tessera_passages_bench_*.db under tempfile.gettempdir()) and reused with ``--reuse``.

For each layout, set and each of ``hybrid_match(?, chunks)`` and ``knn(chunks, 5, ?)``, over the top five
documents with their passage each (``knn_chunk_text()``, what MCP ``search`` and ``chunks_per_doc=1``
return): passage@1 (the first passage holds the quote, whitespace and case folded), passage@5 (one of
the five does), page recall@1, the mean first-passage length in characters and the share of first
passages that are a bare title; the median query time with and without ``knn_chunk_text()`` (what
choosing the passages costs). Then the rules tried for choosing the first document's passage among
its chunks, on the same hits (``hybrid_match``, the ``tessera index`` layout): the nearest chunk by
vector (the rule before), the best BM25 chunk, reciprocal-rank fusion of the two, and similarity plus
w x BM25 / (the document's best BM25) for w in 0.5, 1, 2 with the BM25 of the chunk's own text, and
w = 1 with the heading field weighted 2 as hybrid_match() ranks documents (the engine's rule: w = 1,
the chunk's own text, engine/vectors/passage_words.py). Results go to results/passages.json and the section "passages" of
docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_hybrid  # noqa: E402
import common  # noqa: E402
from common import log  # noqa: E402

import tesseradb  # noqa: E402

QUOTES = Path(__file__).resolve().parent / "passage_quotes.jsonl"
HELD_OUT = Path(__file__).resolve().parent / "passage_quotes_heldout.jsonl"
TABLE = ("CREATE TABLE docs (path string UNIQUE, title text, body text, meta json, modified datetime, "
         "chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' "
         "from='title,body' chunk_strategy='{strategy}' max_tokens='256' overlap_tokens='32')")
LAYOUTS = {"tessera index (markdown 256/32)": "markdown", "recursive 256/32": "recursive"}
METHODS = {
    "hybrid_match": "SELECT path, title, knn_chunk_text() FROM docs WHERE hybrid_match(?, chunks) LIMIT 5",
    "knn": "SELECT path, title, knn_chunk_text() FROM docs WHERE knn(chunks, 5, ?) LIMIT 5",
}
QUOTE_CHARS = 100
STOP = set("a an the of to in on for and or is are be it do does i my how what which when where why who can "
           "if with as at by from that this there their them they not no you your we our will would should "
           "into its any all so than then get set use using used about after before need have has".split())


def fold(text: str) -> str:
    return " ".join(text.casefold().split())


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9_]+", text.casefold()) if w not in STOP and len(w) > 1}


def questions() -> list[dict]:
    return [json.loads(line) for line in bench_hybrid.QUESTIONS.read_text().splitlines() if line.strip()]


def make_quotes(docs: list[common.Page]) -> None:
    """passage_quotes.jsonl's automatic quotes (see the module docstring); reviewed rows are kept as they are."""
    from tesseradb.embed.chunking import sentence_spans
    by_path = {p.path: p.text for p in docs}
    reviewed = {(r["question"], r["page"]): r for r in _quotes(QUOTES)} if QUOTES.exists() else {}
    out = []
    for q in questions():
        if (q["question"], q["page"]) in reviewed:
            out.append(reviewed[q["question"], q["page"]])
            continue
        text = by_path[q["page"]]
        best, best_score = None, 0
        for start, end in sentence_spans(text):
            sentence = " ".join(text[start:end].split())
            if not 25 <= len(sentence) <= 240 or sentence.startswith(("#", "```", "|", "<", "-->")):
                continue
            score = len(words(sentence) & words(q["question"]))
            if score > best_score:
                best, best_score = sentence, score
        if best is None:
            continue
        quote = best if len(best) <= QUOTE_CHARS else best[:best.rfind(" ", 0, QUOTE_CHARS)]
        out.append({"question": q["question"], "page": q["page"], "quote": quote, "review": "unreviewed"})
    QUOTES.write_text("".join(json.dumps(o, ensure_ascii=False) + "\n" for o in out), encoding="utf-8")
    log(f"{len(out)} quotes written to {QUOTES.name} ({len(questions()) - len(out)} questions without one)")


def folder_of(docs: list[common.Page]) -> Path:
    root = Path(tempfile.gettempdir()) / "tessera_passages_bench_pages"
    if root.exists():
        shutil.rmtree(root)
    for page in docs:
        target = root / page.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page.text, encoding="utf-8")
    return root


def _count(pages_dir: Path) -> int:
    return sum(1 for f in pages_dir.rglob("*") if f.is_file())


def build(strategy: str, pages_dir: Path, reuse: bool) -> dict:
    path = os.path.join(tempfile.gettempdir(), f"tessera_passages_bench_{strategy}.db")
    done = Path(path + ".built.json")
    if reuse and done.exists() and json.loads(done.read_text()).get("pages") == _count(pages_dir):
        return {"path": path, **json.loads(done.read_text())}
    for leftover in (path, path + "-wal", path + "-shm", done):
        if os.path.exists(leftover):
            os.remove(leftover)
    con = tesseradb.connect(path, autocommit=True)
    con.execute(TABLE.format(strategy=strategy))
    started = time.perf_counter()
    con.execute("LOAD DATA INFILE ? SYNC INTO TABLE docs", (os.path.join(str(pages_dir), "**", "*"),))
    seconds = time.perf_counter() - started
    chunks = con.execute("SHOW CHUNKS FROM docs.chunks").fetchall()
    con.close()
    built = {"load_s": round(seconds, 1), "chunks": len(chunks), "pages": _count(pages_dir),
             "mean_chunk_chars": round(statistics.mean(len(c[5]) for c in chunks), 1)}
    done.write_text(json.dumps(built))
    return {"path": path, **built}


def _quotes(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if r.get("review", "kept") != "unreviewed"]


def sets() -> dict[str, list[dict]]:
    return {"tuning": _quotes(QUOTES), "held-out": _quotes(HELD_OUT)}


def _contains(passage: str | None, quote: str) -> bool:
    return fold(quote) in fold(passage or "")


def measure(path: str, quotes: list[dict]) -> dict:
    con = tesseradb.connect(path, read_only=True)
    out = {}
    for method, sql in METHODS.items():
        p1 = p5 = page1 = bare = 0
        lengths, with_passage, without = [], [], []
        bare_sql = sql.replace(", knn_chunk_text()", "")
        for q in quotes:
            started = time.perf_counter()
            rows = con.execute(sql, (q["question"],)).fetchall()
            with_passage.append(time.perf_counter() - started)
            started = time.perf_counter()
            con.execute(bare_sql, (q["question"],)).fetchall()
            without.append(time.perf_counter() - started)
            if not rows:
                continue
            passages = [r[2] for r in rows]
            p1 += _contains(passages[0], q["quote"])
            p5 += any(_contains(p, q["quote"]) for p in passages)
            page1 += rows[0][0] == q["page"]
            lengths.append(len(rows[0][2] or ""))
            bare += fold(rows[0][2] or "") == fold(rows[0][1] or "")
        n = len(quotes)
        out[method] = {"passage@1": round(p1 / n, 3), "passage@5": round(p5 / n, 3), "page_recall@1": round(page1 / n, 3),
                       "mean_passage_chars": round(statistics.mean(lengths), 1) if lengths else None,
                       "bare_title_share": round(bare / n, 3), "questions": n,
                       "median_ms": round(1000 * statistics.median(with_passage), 1),
                       "median_ms_without_passage": round(1000 * statistics.median(without), 1)}
    con.close()
    return out


# rule name -> (how to choose, which BM25: "body" the chunk's own text, "heading+body" the heading
# field weighted 2 as hybrid_match() ranks documents)
RULES = {"nearest chunk (vector)": (None, "body"), "best BM25 chunk": ("bm25", "body"),
         "RRF of the two (k=60)": ("rrf", "body"),
         "similarity + 0.5 x BM25/max": (0.5, "body"), "similarity + 1 x BM25/max (engine)": (1.0, "body"),
         "similarity + 2 x BM25/max": (2.0, "body"),
         "similarity + 1 x BM25/max, heading field weighted 2": (1.0, "heading+body")}
WEIGHTS = {"body": (0.0, 1.0), "heading+body": (2.0, 1.0)}


def _bm25(path: str, question: str, doc: int, weights: tuple[float, float]) -> dict[int, float]:
    """A document's chunks' BM25 for the question (chunk number -> score > 0), read with plain SQLite
    from the column's chunk full-text index, the query written as the engine writes it."""
    import apsw
    expression = _expression(question)
    if expression is None:
        return {}
    raw = apsw.Connection(path, flags=apsw.SQLITE_OPEN_READONLY)
    try:
        chunks = next(r[0] for r in raw.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                                "AND name LIKE '!_tessera!_chunks!_%' ESCAPE '!'"))
        fts = "_tessera_ftsc_" + chunks[len("_tessera_chunks_"):]
        rows = raw.execute(f'WITH x AS MATERIALIZED (SELECT rowid AS c, -bm25("{fts}", {weights[0]}, {weights[1]}) AS s '
                           f'FROM "{fts}"(?)) '
                           f'SELECT k.ord + 1, x.s FROM x JOIN "{chunks}" k ON k.chunk_id = x.c WHERE k.doc_id = ?',
                           (expression, doc))
        return {int(o): float(v) for o, v in rows if v > 0}
    finally:
        raw.close()


def _expression(question: str) -> str | None:
    """hybrid_match()'s text side's FTS5 query (the table has no stopwords option: English ones only)."""
    from tesseradb.vectors import passage_words
    return passage_words.expression(_NO_OPTIONS, question)


class _NoOptions:
    options: dict = {}


_NO_OPTIONS = _NoOptions()


def _choose(chunks: list[dict], bm25: dict[int, float], rule) -> dict:
    by_vector = sorted(chunks, key=lambda c: (c["dist"], c["chunk"]))
    if rule is None or not bm25:
        return by_vector[0]
    if rule == "bm25":
        return max(chunks, key=lambda c: (bm25.get(c["chunk"], 0.0), -c["dist"], -c["chunk"]))
    if rule == "rrf":
        rv = {c["chunk"]: i for i, c in enumerate(by_vector, start=1)}
        by_words = sorted((c for c in chunks if c["chunk"] in bm25), key=lambda c: (-bm25[c["chunk"]], c["chunk"]))
        rw = {c["chunk"]: i for i, c in enumerate(by_words, start=1)}
        return max(chunks, key=lambda c: (1 / (60 + rv[c["chunk"]]) + (1 / (60 + rw[c["chunk"]]) if c["chunk"] in rw else 0),
                                          -c["chunk"]))
    top = max(bm25.values())
    return max(chunks, key=lambda c: (1 - c["dist"] + rule * bm25.get(c["chunk"], 0.0) / top, -c["chunk"]))


def rules(path: str, quotes: list[dict]) -> dict:
    """passage@1 of each rule in RULES on the same first documents (hybrid_match)."""
    con = tesseradb.connect(path, read_only=True)
    hits = 0
    found = {name: 0 for name in RULES}
    ranks = {"1": 0, "2": 0, "3": 0, "4+": 0}     # right page: where the answer's chunk is in the engine's order
    for q in quotes:
        rows = con.execute("SELECT id, path, knn_chunks(100000) FROM docs WHERE hybrid_match(?, chunks) LIMIT 1",
                           (q["question"],)).fetchall()
        if not rows:
            continue
        doc, page, listed = rows[0]
        chunks = json.loads(listed)
        bm25 = {kind: _bm25(path, q["question"], doc, w) for kind, w in WEIGHTS.items()}
        hits += page == q["page"]
        if page == q["page"]:
            at = next((i for i, c in enumerate(chunks, start=1) if _contains(c["text"], q["quote"])), None)
            ranks["1" if at == 1 else "2" if at == 2 else "3" if at == 3 else "4+"] += 1
        for name, (rule, kind) in RULES.items():
            found[name] += _contains(_choose(chunks, bm25[kind], rule)["text"], q["quote"])
    con.close()
    n = len(quotes)
    return {"page_recall@1": round(hits / n, 3), **{name: round(v / n, 3) for name, v in found.items()},
            "answer_chunk_rank": ranks}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subset", choices=("sets", "all"), default="sets",
                    help="sets: the pages the two question sets ask about; all: the whole manual")
    ap.add_argument("--reuse", action="store_true", help="reuse the databases a previous run built")
    ap.add_argument("--make-quotes", action="store_true", help="(re)write passage_quotes.jsonl and stop")
    args = ap.parse_args()
    docs = common.pages()
    if args.make_quotes:
        make_quotes(docs)
        return
    measured = sets()
    asked = {q["page"] for quotes in measured.values() for q in quotes}
    docs = docs if args.subset == "all" else [p for p in docs if p.path in asked]
    pages_dir = folder_of(docs)
    load_before = common.loadavg()
    results = {}
    for name, strategy in LAYOUTS.items():
        log(f"loading {len(docs)} pages as '{name}'")
        built = build(strategy, pages_dir, args.reuse)
        log(f"  {built['chunks']} chunks, {built['load_s']} s")
        results[name] = {"build": {k: v for k, v in built.items() if k != "path"},
                         "quality": {label: measure(built["path"], quotes) for label, quotes in measured.items()}}
        if strategy == "markdown":
            results[name]["rules"] = {label: rules(built["path"], quotes) for label, quotes in measured.items()}
        log(f"  {json.dumps(results[name])}")
    shutil.rmtree(pages_dir, ignore_errors=True)
    common.save_result("passages", {"subset": args.subset, "pages": len(docs),
                                    "questions": {label: len(q) for label, q in measured.items()},
                                    "loadavg_before": load_before, "loadavg": common.loadavg(),
                                    "layouts": results})
    import sections
    sections.write_sections("passages")


if __name__ == "__main__":
    main()
