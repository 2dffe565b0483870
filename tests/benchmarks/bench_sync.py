"""LOAD DATA ... SYNC of the manual's 189 pages (docs/benchmarks.md#folders-of-documents-sync).

    .venv/bin/python tests/benchmarks/bench_sync.py [--dir FOLDER]   # default: a folder under tempfile.gettempdir()

On a copy of the manual (without SOURCE.md) in ``--dir``, each into the table
``manual (path string UNIQUE, title text, body text, meta json, modified timestamp, chunks recursive 256/32)``:

1. ``jsonl``: the same rows the SYNC stores (path, title, body, meta, modified; written from the
   documents reader) loaded with ``LOAD DATA INFILE 'manual.jsonl'`` into a fresh database;
2. ``first``: ``LOAD DATA INFILE 'copy/**/*.md' SYNC`` into another fresh database (target: within
   1.05x of jsonl);
3. ``nochange``: the same SYNC again (target: at most 2% of first);
4. ``edited``: 10 pages get a paragraph, 2 are deleted, 2 new ones added, SYNC again (target: at most
   10% of first); then a fresh SYNC into a second table of the same database (its vectors come from
   chunk reuse, bit-identical to the model's) must give the same rows and vectors.

Each time is the statement plus its commit, through the DB-API. Results: results/sync.json.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import log  # noqa: E402

import tesseradb  # noqa: E402
from tesseradb.io import documents, globs  # noqa: E402

TABLE = ("CREATE TABLE {name} (path string UNIQUE, title text, body text, meta json, modified timestamp, "
         "chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
         "model_name='Xenova/all-MiniLM-L6-v2' from='title,body' chunk_strategy='recursive' "
         "max_tokens='256' overlap_tokens='32')")
PARAGRAPH = ("\n\nNote added in the sync benchmark: this paragraph was inserted to change the page, "
             "as an editor would when a behaviour changes between releases.\n")
NEW_PAGE = ("# Page {n} added by the benchmark\n\nThis page did not exist when the folder was first synced. "
            "It describes an imaginary feature number {n}: a queue that drains every {n} minutes, and how "
            "an operator would watch its length, raise an alert when it grows, and replay what it held.\n")


def timed(con, sql: str, params=()) -> tuple[float, list]:
    cur = con.cursor()
    start = time.perf_counter()
    cur.execute(sql, params)
    con.commit()
    return time.perf_counter() - start, con.warnings


def jsonl_of(folder: Path, out: Path) -> int:
    """The rows SYNC stores, as JSON lines (read with the same documents reader)."""
    pattern = globs.split(str(folder / "**" / "*.md"))
    n = 0
    with open(out, "w", encoding="utf-8") as f:
        for file in globs.expand(pattern.text):
            doc = documents.parse(file, globs.relative(pattern, file), documents.snapshot(file))
            f.write(json.dumps({"path": doc.path, "title": doc.title, "body": doc.body, "meta": doc.front,
                                "modified": doc.modified}) + "\n")
            n += 1
    return n


def edit(folder: Path) -> dict:
    files = sorted(folder.rglob("*.md"))
    step = len(files) // 14
    chosen = files[::step][:14]
    for f in chosen[:10]:
        text = f.read_text(encoding="utf-8")
        cut = text.find("\n\n", len(text) // 2)
        f.write_text(text[:cut] + PARAGRAPH + text[cut:] if cut > 0 else text + PARAGRAPH, encoding="utf-8")
    for f in chosen[10:12]:
        f.unlink()
    for n in (1, 2):
        (folder / f"Added_page_{n}.md").write_text(NEW_PAGE.format(n=n), encoding="utf-8")
    return {"edited": [str(f.relative_to(folder)) for f in chosen[:10]],
            "deleted": [str(f.relative_to(folder)) for f in chosen[10:12]]}


def same_tables(con) -> bool:
    cols = "path, title, body, meta, modified, chunks"
    a = con.cursor().execute(f"SELECT {cols} FROM manual ORDER BY path").fetchall()
    b = con.cursor().execute(f"SELECT {cols} FROM fresh ORDER BY path").fetchall()
    return len(a) == len(b) and all(
        ra[:5] == rb[:5] and json.dumps(ra[5]) == json.dumps(rb[5]) for ra, rb in zip(a, b))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", default=str(Path(tempfile.gettempdir()) / "tessera_bench_sync"))
    ap.add_argument("--no-jsonl", action="store_true", help="skip the JSONL load (its time comes from another run)")
    args = ap.parse_args()
    work = Path(args.dir)
    shutil.rmtree(work, ignore_errors=True)
    copy = work / "manual"
    shutil.copytree(common.corpus(), copy, ignore=shutil.ignore_patterns("SOURCE.md"))
    pages = len(list(copy.rglob("*.md")))
    result: dict = {"pages": pages, "load_start": os.getloadavg()}
    rows = jsonl_of(copy, work / "manual.jsonl")
    log(f"{pages} pages, {rows} JSON lines")

    if not args.no_jsonl:
        con = tesseradb.connect(str(work / "jsonl.db"))
        con.cursor().execute(TABLE.format(name="manual"))
        con.commit()
        result["jsonl_s"], _ = timed(con, "LOAD DATA INFILE ? INTO TABLE manual", (str(work / "manual.jsonl"),))
        result["load_after_jsonl"] = os.getloadavg()
        con.close()
        log(f"jsonl {result['jsonl_s']:.1f} s")

    con = tesseradb.connect(str(work / "sync.db"))
    con.cursor().execute(TABLE.format(name="manual"))
    con.commit()
    sync = "LOAD DATA INFILE ? SYNC INTO TABLE manual"
    pattern = str(copy / "**" / "*.md")
    result["first_s"], notes = timed(con, sync, (pattern,))
    result["first_note"] = [w[2] for w in notes if "SYNC" in w[2]]
    result["load_after_first"] = os.getloadavg()
    log(f"first SYNC {result['first_s']:.1f} s  {result['first_note']}")
    result["nochange_s"], notes = timed(con, sync, (pattern,))
    result["nochange_note"] = [w[2] for w in notes if "SYNC" in w[2]]
    log(f"no-change SYNC {result['nochange_s']:.2f} s  {result['nochange_note']}")
    result["changes"] = edit(copy)
    result["edited_s"], notes = timed(con, sync, (pattern,))
    result["edited_notes"] = [w[2] for w in notes]
    result["load_after_edited"] = os.getloadavg()
    log(f"edited SYNC {result['edited_s']:.1f} s  {result['edited_notes']}")
    con.cursor().execute(TABLE.format(name="fresh"))
    con.commit()
    result["fresh_s"], _ = timed(con, "LOAD DATA INFILE ? SYNC INTO TABLE fresh", (pattern,))
    result["equals_fresh_sync"] = same_tables(con)
    con.close()
    result["ratios"] = {"nochange_vs_first": result["nochange_s"] / result["first_s"],
                        "edited_vs_first": result["edited_s"] / result["first_s"]}
    result["load_end"] = os.getloadavg()
    if "jsonl_s" in result:
        result["ratios"]["first_vs_jsonl"] = result["first_s"] / result["jsonl_s"]
    log(json.dumps(result["ratios"]) + f" equals fresh: {result['equals_fresh_sync']}")
    common.RESULTS.mkdir(exist_ok=True)
    # the scratch folder is this machine's: the results name it symbolically
    text = json.dumps(result, indent=2).replace(str(work), "$SCRATCH")
    (common.RESULTS / "sync.json").write_text(text + "\n")


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the sections this benchmark's results feed
    sections.write_sections("sync")
