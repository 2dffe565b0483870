"""The docs/benchmarks.md section of bench_sync_lock.py (results/sync_lock.json)."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"
STEPS = (("first", "first SYNC (every page new)"), ("edited", "{edited} pages edited"), ("nochange", "no change"))
MODES = (("autocommit", "autocommit: first pass before the lock"), ("begin", "inside BEGIN: all under the lock"))


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.1f}" for v in x) if x else "?"


def section() -> list[str]:
    r = common.load_result("sync_lock")
    if not r:
        return []
    rows = []
    for key, label in STEPS:
        for mode, how in MODES:
            x = r["runs"][mode][key]
            rows.append(f"| {label.format(edited=r['edited'])} | {how} | {x['rows']} | {x['seconds']:.2f} | "
                        f"{x['writer_ok']:,} | {x['writer_1205']:,} | {x['longest_gap_s']:.2f} |")
    return [
        "## SYNC beside another writer", "",
        f"`{PY}/bench_sync_lock.py --pages {r['pages']}`: {r['pages']} pages of the manual "
        f"({r['text_bytes'] / 1024:.0f} kB of markdown) synced into the table of bench_sync.py, while another "
        f"connection with a lock wait of 0 tries a one-row INSERT every {r['poke_ms']:.0f} ms (a failure is "
        "`ERROR 1205`: the SYNC holds SQLite's write lock). In autocommit a SYNC reads and embeds its new and "
        "changed files before it takes the lock, then compares, reads and writes under it (docs/durability.md); "
        "inside `BEGIN` everything runs under the lock, as every SYNC did before. Load average (1/5/15 min) "
        f"before {_load(r.get('load_before'))}, after {_load(r.get('load_after'))}; run {r['when']}.", "",
        "| step | how | rows | statement s | writer's INSERTs through | writer's 1205s | longest wait between its writes, s |",
        "|---|---|---|---|---|---|---|",
        *rows, *[""] + r.get("page_notes", []),
    ]
