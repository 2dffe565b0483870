"""Passage-level retrieval (issue 32): does the FIRST passage hold the answer, not just the right page?

    TESSERA_BENCH_CORPUS=path/to/manticore_manual nice .venv/bin/python tests/benchmarks/bench_passages.py [--trials] [--final]

Four sets of questions, each question with a **quote**: a short verbatim span of its page that answers it.

* **tuning** (passage_quotes.jsonl, the rows whose ``review`` is ``kept`` or ``corrected``): 96 questions
  of questions.jsonl on 53 pages. Their quotes were first picked automatically (``--make-quotes``: the
  page sentence sharing the most words with the question), then reviewed by reading each question and
  its page (51 replaced by the span that answers, 45 kept). The other rows are still unreviewed and are
  not measured. Passage rules and chunk layouts are chosen on this set only.
* **held-out** (passage_quotes_heldout.jsonl): 57 questions written by reading 30 other pages, in a
  user's words rather than the page's, each with the span that answers it. Looked at once, when the
  previous rule was compared.
* **held-out 2** (passage_quotes_heldout2.jsonl): 79 questions written the same way from 19 pages no
  other set uses, before the rules and layouts below were tried; since seen by rule trials.
* **held-out 3** (passage_quotes_heldout3.jsonl): 92 questions on 31 pages no other set uses, for one
  honest read of a frozen rule: 39 questions of questions.jsonl whose automatic quotes on those pages
  were reviewed by reading the page (37 replaced by the span that answers, 2 kept; the other automatic
  questions there, duplicates or unnatural, dropped) and 53 written in a user's words. Measured only
  with ``--final``; its pages are loaded on every run, so the final read uses the same databases.

A page in two sets stops the run; ``--check-sets`` checks the sets (every quote verbatim in its page,
as passage@1 finds it) and prints their sizes, measuring nothing. The pages of the sets (``--subset
all``: the whole manual) are copied to a scratch folder and loaded the way ``tessera index`` loads a folder:
``LOAD DATA INFILE 'DIR/**/*' SYNC`` into the table it creates (``index_cmd.create_table_sql``), and into
the same columns chunked ``recursive`` 256/32. The databases are kept under the bench cache
(``~/.cache/tesseradb-bench/passages``, ``TESSERA_BENCH_CACHE``), named by a hash of the DDL and of the
chunking code: a later run SYNCs them (only pages added since are embedded; ``--fresh`` loads again),
and a change to the chunking gives a new database, while a change to the passage rule, applied at
query time, needs none.

For each layout, set and each of ``hybrid_match(?, chunks)`` and ``knn(chunks, 5, ?)``, over the top five
documents with their passage each (``knn_chunk_text()``, what MCP ``search`` and ``chunks_per_doc=1``
return): passage@1 (the first passage holds the quote, whitespace and case folded), passage@5 (one of
the five does), page recall@1, the mean first-passage length in characters and the share of first
passages that are a bare title; the median query time with and without ``knn_chunk_text()``. Then the
rules tried for choosing the first document's passage among its chunks, on the same hits
(``hybrid_match``, the ``tessera index`` layout): the nearest chunk by vector, the best BM25 chunk,
reciprocal-rank fusion of the two, similarity plus w x BM25 / (the document's best BM25) for w in 0.5,
1, 2 (w = 1 is the engine's rule, engine/vectors/passage_words.py), w = 1 with the heading field
weighted 2, and the engine's chunk widened with its neighbours of the same section up to 600, 800 and
1,000 characters (:func:`widen`). ``--trials`` also loads TRIALS (other chunk sizes) and compares the
rules there. Results go to results/passages.json and the section "passages" of docs/benchmarks.md.
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
from tesseradb.clients.shell import index_cmd  # noqa: E402

QUOTES = Path(__file__).resolve().parent / "passage_quotes.jsonl"
HELD_OUT = Path(__file__).resolve().parent / "passage_quotes_heldout.jsonl"
HELD_OUT_2 = Path(__file__).resolve().parent / "passage_quotes_heldout2.jsonl"
HELD_OUT_3 = Path(__file__).resolve().parent / "passage_quotes_heldout3.jsonl"
# held-out set -> its file; the FINAL ones are measured only with --final (their pages are always loaded)
HELD_OUT_SETS = {"held-out": HELD_OUT, "held-out 2": HELD_OUT_2, "held-out 3": HELD_OUT_3}
FINAL = ("held-out 3",)
# the code whose output the kept databases hold: a change to it builds them again (a passage rule
# change does not: it is applied at query time)
CHUNKING_CODE = ("embed/chunking.py", "embed/markdown_chunks.py", "embed/spans.py", "embed/chunk_context.py",
                 "embed/texts.py", "io/documents.py")
RECURSIVE = ("CREATE TABLE docs (path string UNIQUE, title text, body text, meta json, modified datetime, "
             "chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
             "model_name='Xenova/all-MiniLM-L6-v2' from='title,body' chunk_strategy='recursive' max_tokens='256' "
             "overlap_tokens='32')")
# layout -> (its CREATE TABLE, a short name for its kept database): `tessera index`'s own table, and the
# same columns chunked recursive 256/32
LAYOUTS = {"tessera index": (index_cmd.create_table_sql("docs"), "markdown"),
           "recursive 256/32": (RECURSIVE, "recursive")}
# --trials: other chunk sizes for `tessera index`'s table, tried for the rules only (smaller chunks rank
# more finely, and a passage widened in its section gives the reader the text around them)
TRIALS = {f"markdown {size}/{size // 8}": (RECURSIVE.replace("'recursive' max_tokens='256' overlap_tokens='32'",
                                                           f"'markdown' max_tokens='{size}' overlap_tokens='{size // 8}'"),
                                            f"markdown{size}") for size in (128,)}
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
    held = held_out_pages()
    out = []
    for q in questions():
        if q["page"] in held:       # a held-out page is in no other set
            continue
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


def _key(ddl: str) -> str:
    """What a kept database depends on: the table's DDL and the chunking code."""
    import hashlib
    h = hashlib.sha256(ddl.encode())
    engine = Path(tesseradb.__file__).resolve().parent
    for name in CHUNKING_CODE:
        f = engine / name
        h.update(name.encode() + (f.read_bytes() if f.exists() else b"-"))
    return h.hexdigest()[:12]


def build(ddl: str, short: str, pages_dir: Path, fresh: bool) -> dict:
    """The layout's database under the bench cache, keyed by :func:`_key`: made by ``LOAD DATA ... SYNC``
    of the pages folder once, then SYNCed again on later runs (only pages added since are embedded)."""
    folder = common.CACHE / "passages"
    folder.mkdir(parents=True, exist_ok=True)
    path = str(folder / f"{short}-{_key(ddl)}.db")
    done = Path(path + ".built.json")
    if fresh or not done.exists():
        for leftover in (path, path + "-wal", path + "-shm", done):
            if os.path.exists(leftover):
                os.remove(leftover)
    first = not os.path.exists(path)
    con = tesseradb.connect(path, autocommit=True)
    if first:
        con.execute(ddl)
    started = time.perf_counter()
    con.execute("LOAD DATA INFILE ? SYNC INTO TABLE docs", (os.path.join(str(pages_dir), "**", "*"),))
    seconds = time.perf_counter() - started
    chunks = con.execute("SHOW CHUNKS FROM docs.chunks").fetchall()
    con.close()
    built = json.loads(done.read_text()) if done.exists() else {}
    if first:
        built["load_s"] = round(seconds, 1)
    built.update({"last_sync_s": round(seconds, 1), "chunks": len(chunks), "pages": _count(pages_dir),
                  "mean_chunk_chars": round(statistics.mean(len(c[5]) for c in chunks), 1)})
    done.write_text(json.dumps(built))
    return {"path": path, **built}


def _quotes(path: Path) -> list[dict]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if r.get("review", "kept") != "unreviewed"]


def sets(final: bool = True) -> dict[str, list[dict]]:
    """label -> its questions: the tuning set and the held-out ones (the FINAL ones only if ``final``).
    A page in two sets stops the run: a reviewed tuning quote on a held-out page would let the tuning
    see that page."""
    every = {"tuning": _quotes(QUOTES), **{label: _quotes(path) for label, path in HELD_OUT_SETS.items()}}
    owner: dict[str, str] = {}
    for label, quotes in every.items():
        for page in sorted({q["page"] for q in quotes}):
            if owner.setdefault(page, label) != label:
                raise SystemExit(f"page {page} is in two question sets: {owner[page]} and {label}")
    return {label: quotes for label, quotes in every.items() if final or label not in FINAL}


def held_out_pages() -> set[str]:
    return {q["page"] for path in HELD_OUT_SETS.values() for q in _quotes(path)}


def check_sets(docs: list[common.Page]) -> None:
    """--check-sets: every set loads, no page is in two sets, and every quote is verbatim in its page
    (as :func:`_contains` finds it: whitespace and case folded); counts only, nothing is measured."""
    by_path = {p.path: p.text for p in docs}
    missing = []
    for label, quotes in sets().items():
        for q in quotes:
            if not _contains(by_path.get(q["page"]), q["quote"]):
                missing.append(f"{label}: {q['page']}: {q['quote']!r}")
        log(f"{label}: {len(quotes)} questions on {len({q['page'] for q in quotes})} pages")
    if missing:
        raise SystemExit("quotes not found in their page:\n" + "\n".join(missing))
    log("every quote is verbatim in its page; no page is in two sets")


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
# field weighted 2 as hybrid_match() ranks documents, widened to how many characters: 0 not widened)
RULES = {"nearest chunk (vector)": (None, "body", 0), "best BM25 chunk": ("bm25", "body", 0),
         "RRF of the two (k=60)": ("rrf", "body", 0),
         "similarity + 0.5 x BM25/max": (0.5, "body", 0), "similarity + 1 x BM25/max": (1.0, "body", 0),
         "similarity + 2 x BM25/max": (2.0, "body", 0),
         "similarity + 1 x BM25/max, heading field weighted 2": (1.0, "heading+body", 0),
         "similarity + 1 x BM25/max, widened in its section to 600 chars": (1.0, "body", 600),
         "similarity + 1 x BM25/max, widened in its section to 800 chars": (1.0, "body", 800),
         "similarity + 1 x BM25/max, widened in its section to 1,000 chars": (1.0, "body", 1000),
         # the engine's own choice, knn_chunks(n)'s first: with passage_units='windows' (tessera index's
         # table), its best 8 chunks by similarity + 1 x BM25/max rescored + 6 x the best cosine of their
         # stored units (engine/vectors/passage_units.py). (Its query-time twin, the best 5 + 4 x the units
         # embedded per query, was measured in session 41 at 1.6-1.8 s a query, and is no longer kept.)
         "similarity + 1 x BM25/max, its best 8 chunks + 6 x best cosine of their stored ~200-char "
         "windows (the engine with passage_units='windows')": ("engine", "body", 0)}
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


def _score(chunks: list[dict], bm25: dict[int, float], rule) -> dict[int, float]:
    """chunk number -> the rule's score (higher is better)."""
    if rule is None or not bm25:
        return {c["chunk"]: -c["dist"] for c in chunks}
    if rule == "bm25":
        return {c["chunk"]: bm25.get(c["chunk"], 0.0) - 1e-6 * c["dist"] for c in chunks}
    if rule == "rrf":
        by_vector = sorted(chunks, key=lambda c: (c["dist"], c["chunk"]))
        rv = {c["chunk"]: i for i, c in enumerate(by_vector, start=1)}
        by_words = sorted((c for c in chunks if c["chunk"] in bm25), key=lambda c: (-bm25[c["chunk"]], c["chunk"]))
        rw = {c["chunk"]: i for i, c in enumerate(by_words, start=1)}
        return {c["chunk"]: 1 / (60 + rv[c["chunk"]]) + (1 / (60 + rw[c["chunk"]]) if c["chunk"] in rw else 0)
                for c in chunks}
    top = max(bm25.values())
    return {c["chunk"]: 1 - c["dist"] + rule * bm25.get(c["chunk"], 0.0) / top for c in chunks}


def widen(best: int, rows: dict[int, tuple], score: list[float], limit: int) -> tuple[int, int]:
    """(first, last) chunk of a passage widened from chunk ``best`` (a rule tried, not the engine's): of
    the chunk just before and the one just after the span, those with the same heading path that keep
    the span within ``limit`` characters, the higher-scoring one joins (ties: the one after), until
    neither fits. ``rows``: chunk -> (chunk, start, end, heading)."""
    first = last = best
    heading = rows[best][3]
    while True:
        options = []
        for n in (first - 1, last + 1):
            row = rows.get(n)
            if row is None or row[3] != heading:
                continue
            start, end = (rows[first][1], row[2]) if n > last else (row[1], rows[last][2])
            if end - start <= limit:
                options.append((score[n], n))
        if not options:
            return first, last
        _, n = max(options)
        first, last = min(first, n), max(last, n)


def _choose(chunks: list[dict], bm25: dict[int, float], rule, chars: int, full_text: str) -> str:
    """The passage text the rule gives: the best chunk (ties to the lower number), with ``chars``
    widened in its section (:func:`widen`)."""
    score = _score(chunks, bm25, rule)
    best = max(chunks, key=lambda c: (score[c["chunk"]], -c["chunk"]))
    if not chars:
        return best["text"]
    rows = {c["chunk"] - 1: (c["chunk"] - 1, c["start"], c["end"], c["heading"]) for c in chunks}
    scores = [score.get(i + 1, float("-inf")) for i in range(max(rows) + 1)]
    first, last = widen(best["chunk"] - 1, rows, scores, chars)
    return full_text[rows[first][1]:rows[last][2]]


def rules(path: str, quotes: list[dict]) -> dict:
    """passage@1 (and mean passage length) of each rule in RULES on the same first documents (hybrid_match)."""
    con = tesseradb.connect(path, read_only=True)
    hits = 0
    found = {name: 0 for name in RULES}
    chars = {name: [] for name in RULES}
    ranks = {"1": 0, "2": 0, "3": 0, "4+": 0}     # right page: where the answer's chunk is in the engine's order
    for q in quotes:
        rows = con.execute("SELECT id, path, knn_chunks(100000), CONCAT(title, CHAR(10), CHAR(10), body), title "
                           "FROM docs WHERE hybrid_match(?, chunks) LIMIT 1", (q["question"],)).fetchall()
        if not rows:
            continue
        doc, page, listed, full_text, title = rows[0]
        chunks = json.loads(listed)
        bm25 = {kind: _bm25(path, q["question"], doc, w) for kind, w in WEIGHTS.items()}
        hits += page == q["page"]
        if page == q["page"]:
            at = next((i for i, c in enumerate(chunks, start=1) if _contains(c["text"], q["quote"])), None)
            ranks["1" if at == 1 else "2" if at == 2 else "3" if at == 3 else "4+"] += 1
        for name, (rule, kind, width) in RULES.items():
            if rule == "engine":              # the engine's first passage (knn_chunks order)
                text = chunks[0]["text"]
            else:
                text = _choose(chunks, bm25[kind], rule, width, full_text)
            found[name] += _contains(text, q["quote"])
            chars[name].append(len(text))
    con.close()
    n = len(quotes)
    return {"page_recall@1": round(hits / n, 3), **{name: round(v / n, 3) for name, v in found.items()},
            "mean_chars": {name: round(statistics.mean(v), 1) for name, v in chars.items() if v},
            "answer_chunk_rank": ranks}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subset", choices=("sets", "all"), default="sets",
                    help="sets: the pages the two question sets ask about; all: the whole manual")
    ap.add_argument("--trials", action="store_true", help="also load the TRIALS layouts and compare the rules on them")
    ap.add_argument("--fresh", action="store_true",
                    help="build the databases again (by default the kept ones are SYNCed with the pages)")
    ap.add_argument("--make-quotes", action="store_true", help="(re)write passage_quotes.jsonl and stop")
    ap.add_argument("--check-sets", action="store_true",
                    help="check the question sets against the pages (counts only, nothing measured) and stop")
    ap.add_argument("--final", action="store_true",
                    help="also measure " + ", ".join(FINAL) + " (read once, with the frozen rule)")
    args = ap.parse_args()
    docs = common.pages()
    if args.make_quotes:
        make_quotes(docs)
        return
    if args.check_sets:
        check_sets(docs)
        return
    asked = {q["page"] for quotes in sets().values() for q in quotes}
    measured = sets(final=args.final)
    docs = docs if args.subset == "all" else [p for p in docs if p.path in asked]
    pages_dir = folder_of(docs)
    load_before = common.loadavg()
    results = {}
    for name, (ddl, short) in LAYOUTS.items():
        log(f"loading {len(docs)} pages as '{name}'")
        built = build(ddl, short, pages_dir, args.fresh)
        log(f"  {built['chunks']} chunks, {built['load_s']} s")
        results[name] = {"build": {k: v for k, v in built.items() if k != "path"},
                         "quality": {label: measure(built["path"], quotes) for label, quotes in measured.items()}}
        if short == "markdown":
            results[name]["rules"] = {label: rules(built["path"], quotes) for label, quotes in measured.items()}
        log(f"  {json.dumps(results[name])}")
    trials = {}
    for name, (ddl, short) in (TRIALS.items() if args.trials else ()):
        log(f"loading {len(docs)} pages as '{name}' (a trial)")
        built = build(ddl, short, pages_dir, args.fresh)
        trials[name] = {"build": {k: v for k, v in built.items() if k != "path"},
                        "rules": {label: rules(built["path"], quotes) for label, quotes in measured.items()}}
    shutil.rmtree(pages_dir, ignore_errors=True)
    m = re.search(r"chunk_strategy='(\w+)' max_tokens='(\d+)' overlap_tokens='(\d+)'(?: passage_chars='(\d+)')?",
                  LAYOUTS["tessera index"][0])
    layout = f"{m[1]} {m[2]}/{m[3]}" + (f", passage_chars {m[4]}" if m[4] else "")
    common.save_result("passages", {"subset": args.subset, "pages": len(docs), "index_layout": layout,
                                    "questions": {label: len(q) for label, q in measured.items()},
                                    "loadavg_before": load_before, "loadavg": common.loadavg(),
                                    "layouts": results, "trials": trials})
    import sections
    sections.write_sections("passages")


if __name__ == "__main__":
    main()
