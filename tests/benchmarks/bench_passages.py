"""Passage-level retrieval (issue 32): does the FIRST passage hold the answer, not just the right page?

    TESSERA_BENCH_CORPUS=path/to/manticore_manual nice .venv/bin/python tests/benchmarks/bench_passages.py

The pages questions.jsonl asks about (145 of the manual's 189; ``--every N``: every Nth of them, sorted by
path, and their questions, for a busy machine; ``--subset all`` loads the whole manual) are copied to a scratch folder and loaded twice, the way ``tessera index`` loads a
folder: ``LOAD DATA INFILE 'DIR/**/*' SYNC`` into its table (``path, title, body, meta, modified``,
``chunk_strategy='markdown' max_tokens='256' overlap_tokens='32'``, ``from='title,body'``: the title is
the page's first heading, as the loader finds it), and into the same layout with
``chunk_strategy='recursive'`` 256/32. The databases are kept (tessera_passages_bench_*.db under
tempfile.gettempdir()) and reused with ``--reuse``.

Each question of questions.jsonl gets a **quote**: a short piece of its page that answers it, read from
passage_quotes.jsonl (question, page, quote). Those quotes were picked automatically, once, by
``--make-quotes``: the sentence of the page (UAX #29, ICU; neither a heading nor a code line; 25 to 240
characters) sharing the most content words with the question (ties: the earlier sentence), cut to its
first 100 characters at a word. That is a lexical proxy for a human's choice of the answering
sentence, the same for both layouts; the file is committed so the set can be reviewed and corrected.

For each layout and each of ``hybrid_match(?, chunks)`` and ``knn(chunks, 5, ?)``, over the top five
documents with their best passage each (``knn_chunk_text()``, what MCP ``search`` and
``chunks_per_doc=1`` return): passage@1 (the first passage holds the quote, whitespace and case
folded), passage@5 (one of the five does), page recall@1, the mean first-passage length in characters
and the share of first passages that are a bare title. Results go to results/passages.json and the
section "passages" of docs/benchmarks.md.
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
    """passage_quotes.jsonl, once (see the module docstring)."""
    from tesseradb.embed.chunking import sentence_spans
    by_path = {p.path: p.text for p in docs}
    out = []
    for q in questions():
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
        out.append({"question": q["question"], "page": q["page"], "quote": quote})
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


def build(strategy: str, pages_dir: Path, reuse: bool) -> dict:
    path = os.path.join(tempfile.gettempdir(), f"tessera_passages_bench_{strategy}.db")
    done = Path(path + ".built.json")
    if reuse and done.exists():
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
    built = {"load_s": round(seconds, 1), "chunks": len(chunks),
             "mean_chunk_chars": round(statistics.mean(len(c[5]) for c in chunks), 1)}
    done.write_text(json.dumps(built))
    return {"path": path, **built}


def measure(path: str, quotes: list[dict]) -> dict:
    con = tesseradb.connect(path, read_only=True)
    out = {}
    for method, sql in METHODS.items():
        p1 = p5 = page1 = bare = 0
        lengths = []
        for q in quotes:
            rows = con.execute(sql, (q["question"],)).fetchall()
            if not rows:
                continue
            quote = fold(q["quote"])
            passages = [fold(r[2] or "") for r in rows]
            p1 += quote in passages[0]
            p5 += any(quote in p for p in passages)
            page1 += rows[0][0] == q["page"]
            lengths.append(len(rows[0][2] or ""))
            bare += fold(rows[0][2] or "") == fold(rows[0][1] or "")
        n = len(quotes)
        out[method] = {"passage@1": round(p1 / n, 3), "passage@5": round(p5 / n, 3), "page_recall@1": round(page1 / n, 3),
                       "mean_passage_chars": round(statistics.mean(lengths), 1) if lengths else None,
                       "bare_title_share": round(bare / n, 3), "questions": n}
    con.close()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--subset", choices=("questions", "all"), default="questions")
    ap.add_argument("--reuse", action="store_true", help="reuse the databases a previous run built")
    ap.add_argument("--every", type=int, default=1, metavar="N",
                    help="only every Nth page asked about (sorted by path) and its questions: a busy machine")
    ap.add_argument("--make-quotes", action="store_true", help="(re)write passage_quotes.jsonl and stop")
    args = ap.parse_args()
    docs = common.pages()
    if args.make_quotes:
        make_quotes(docs)
        return
    asked = sorted({q["page"] for q in questions()})[::args.every]
    docs = docs if args.subset == "all" else [p for p in docs if p.path in set(asked)]
    quotes = [json.loads(line) for line in QUOTES.read_text(encoding="utf-8").splitlines() if line.strip()]
    quotes = [q for q in quotes if q["page"] in set(asked)]
    pages_dir = folder_of(docs)
    load_before = common.loadavg()
    results = {}
    for name, strategy in LAYOUTS.items():
        log(f"loading {len(docs)} pages as '{name}'")
        built = build(strategy, pages_dir, args.reuse)
        log(f"  {built['chunks']} chunks, {built['load_s']} s; measuring {len(quotes)} questions")
        results[name] = {"build": {k: v for k, v in built.items() if k != "path"}, "quality": measure(built["path"], quotes)}
        log(f"  {json.dumps(results[name]['quality'])}")
    shutil.rmtree(pages_dir, ignore_errors=True)
    common.save_result("passages", {"subset": args.subset, "every": args.every, "pages": len(docs),
                                    "questions": len(quotes),
                                    "loadavg_before": load_before, "loadavg": common.loadavg(),
                                    "layouts": results})
    import sections
    sections.write_sections("passages")


if __name__ == "__main__":
    main()
