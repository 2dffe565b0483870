"""The docs/benchmarks.md section of bench_sync.py (results/sync.json); sections.py calls :func:`section`."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"
ANCHOR = "## Folders of documents: LOAD DATA ... SYNC"


def _verdict(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.1f}" for v in x) if x else "?"


def section() -> list[str]:
    r = common.load_result("sync")
    if not r:
        return []
    q = r["ratios"]
    return [
        ANCHOR, "",
        f"`{PY}/bench_sync.py`: a copy of the manual's {r['pages']} pages (SOURCE.md left out) into "
        "`(path string UNIQUE, title text, body text, meta json, modified timestamp, chunks recursive 256/32)`; "
        "each time is the statement and its commit through the DB-API, one run each, on the shared 2-core "
        "machine (load averages below).", "",
        "| target | measured | | load average (1/5/15 min) after |",
        "|---|---|---|---|",
        f"| first SYNC within 1.05x of LOAD DATA of the same rows from JSONL | {r['first_s']:.1f} s vs "
        f"{r['jsonl_s']:.1f} s: **{q['first_vs_jsonl']:.3f}x** | {_verdict(q['first_vs_jsonl'] <= 1.05)} | "
        f"{_load(r.get('load_after_first'))} (JSONL: {_load(r.get('load_after_jsonl'))}) |",
        f"| second SYNC, nothing changed: <= 2% of the first | {r['nochange_s']:.2f} s: "
        f"**{100 * q['nochange_vs_first']:.2f}%** | {_verdict(q['nochange_vs_first'] <= 0.02)} | "
        f"{_load(r.get('load_after_first'))} |",
        f"| 10 pages edited, 2 deleted, 2 added: <= 10% of the first | {r['edited_s']:.1f} s: "
        f"**{100 * q['edited_vs_first']:.1f}%** | {_verdict(q['edited_vs_first'] <= 0.10)} | "
        f"{_load(r.get('load_after_edited'))} |",
        f"| the table then equals a fresh SYNC (rows and vectors) | "
        f"{'equal' if r['equals_fresh_sync'] else 'NOT equal'} | {_verdict(r['equals_fresh_sync'])} | |",
        "",
        "Notes of the runs: " + "; ".join(r.get("first_note", []) + r.get("nochange_note", [])
                                           + [n for n in r.get("edited_notes", []) if "SYNC" in n or "reused" in n]),
        "",
        "The JSONL file holds exactly the rows the SYNC stores (written by the same documents reader), so "
        "both runs embed the same chunk texts; the first SYNC adds reading, hashing and parsing each file and "
        "its bookkeeping row. The fresh SYNC of the check goes into a second table of the same database, so its "
        "vectors come from chunk reuse (bit-identical to the model's, docs/chunk_reuse.md).", "",
        *r.get("page_notes", []),   # what the person who ran it wrote about the run, kept with its figures
    ]
