"""The docs/benchmarks.md section of bench_query_limit.py (results/query_limit.json and, for the whole
manual, query_limit_manual.json); sections.py calls :func:`section`."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"
TARGETS = {"knn / model": 1.2, "hybrid / knn": 1.3, "wire / in-process knn": 1.25}


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.1f}" for v in x) if x else "?"


def _run(r: dict, label: str, command: str) -> list[str]:
    p, q = r["p50_ms"], r["ratios"]
    out = [f"**{label}** (`{command}`; {r['pages']} pages, {r['rounds']} rounds; load average {_load(r['loadavg_start'])} "
           f"at the start, {_load(r['loadavg_end'])} at the end). p50: model {p['model']:.2f} ms, knn {p['knn']:.2f} ms, "
           f"hybrid_match {p['hybrid']:.2f} ms, knn over the wire {p['knn over the wire']:.2f} ms.", "",
           "| ratio of p50s, one run | measured | target | |", "|---|---:|---:|---|"]
    for name, target in TARGETS.items():
        out.append(f"| {name} | {q[name]:.3f} | <= {target} | {'**met**' if q[name] <= target else '**not met**'} |")
    out += ["", "cProfile of the engine's first-time queries, top entries by own time:", "",
            "| query | function | calls | own s | share |", "|---|---|---:|---:|---:|"]
    for query, rows in r["profiles"].items():
        for row in rows[:8]:
            out.append(f"| {query} | `{row['function']}` | {row['calls']} | {row['own_s']:.3f} | {100 * row['share']:.1f}% |")
    return out + [""]


def section() -> list[str]:
    sub, whole = common.load_result("query_limit"), common.load_result("query_limit_manual")
    if not sub and not whole:
        return []
    out = ["## Queries at the model's limit (issue 37)", "",
           "First-time query texts (the manual's section headings, each used once in the run: the engine caches "
           "query vectors), the sides taking turns round by round so that load falls on all alike. On this shared "
           "2-core machine the model's own time grows with the load, which narrows every ratio: read them with "
           "the load average beside them.", ""]
    if sub:
        out += _run(sub, f"Every {sub['every']}th page", f"{PY}/bench_query_limit.py --every {sub['every']} --rounds {sub['rounds']}")
    if whole:
        out += _run(whole, "The whole manual", f"{PY}/bench_query_limit.py --every 1 --rounds {whole['rounds']}")
    else:
        out += ["The whole manual: not measured in this session (its database takes the manual's full load with "
                "the model, over 15 minutes on the shared machine at the time).", ""]
    return out
