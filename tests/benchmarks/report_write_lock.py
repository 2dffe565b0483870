"""The docs/benchmarks.md section of bench_write_lock.py (results/write_lock.json)."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.1f}" for v in x) if x else "?"


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:,.0f}"


def section() -> list[str]:
    r = common.load_result("write_lock")
    if not r:
        return []
    rows = []
    for kind, label in (("insert", "INSERT (embeds 2-8 sentences)"), ("knn", "knn() of a question"),
                        ("match", "MATCH of a word")):
        k = r[kind]
        errors = ", ".join(f"{n}x {code}" for code, n in k["errors"].items()) or "none"
        rows.append(f"| {label} | {k['ok']:,} | {k['per_second']:.1f} | {errors} | {_ms(k['p50_ms'])} | "
                    f"{_ms(k['p95_ms'])} | {_ms(k['max_ms'])} |")
    inserts_ok = r["insert"]["errors"] == {} and r["all_acknowledged_stored_once"]
    return [
        "## Writers that embed, beside readers: the write lock", "",
        f"`{PY}/bench_write_lock.py`: {r['clients']} PyMySQL clients against one `tessera serve` for "
        f"{r['seconds']:.0f} s, each looping 40% INSERT (the server embeds the row), 30% knn(), 30% MATCH "
        "(tests/server/write_mix.py, the mix tests/server/test_embedding_writers.py checks). An INSERT runs "
        "the model before it takes SQLite's write lock (docs/durability.md), so a writer waits for the "
        "others' SQLite writes, not for their embedding. Load average (1/5/15 min) before "
        f"{_load(r.get('load_before'))}, after {_load(r.get('load_after'))}; run {r['when']}.", "",
        "| call | went through | per second | MySQL errors | p50 ms | p95 ms | max ms |",
        "|---|---|---|---|---|---|---|",
        *rows, "",
        f"Target: no `ERROR 1205` for an INSERT under the 5 s lock wait, and every acknowledged row stored "
        f"once: {'**met**' if inserts_ok else '**not met**'} ({r['acknowledged']:,} acknowledged; stored "
        f"once each: {'yes' if r['all_acknowledged_stored_once'] else 'no'}).",
        *_compared(r), *[""] + r.get("page_notes", []),
    ]


def _share(k: dict) -> str:
    failed = sum(k["errors"].values())
    return f"{100 * failed / max(failed + k['ok'], 1):.0f}% of INSERTs got 1205 ({failed} of {failed + k['ok']})"


def _compared(r: dict) -> list[str]:
    lines = []
    base = r.get("baseline")
    if base:
        lines += ["", f"This run: {_share(r['insert'])}, INSERT p50 {_ms(r['insert']['p50_ms'])} ms. Before the change "
                  f"({base['code']}; run {base['when']}, load average {_load(base['load_before'])} before): "
                  f"{_share(base['insert'])}, INSERT p50 {_ms(base['insert']['p50_ms'])} ms."]
    for other in r.get("other_runs", []):
        lines += [f"Another run of this code ({other['when']}, load average {_load(other['load_before'])} before): "
                  f"{_share(other['insert'])}, INSERT p50 {_ms(other['insert']['p50_ms'])} ms."]
    return lines
