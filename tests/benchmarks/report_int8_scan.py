"""The docs/benchmarks.md section of bench_int8_scan.py (results/int8_scan.json); sections.py calls
:func:`section`."""
from __future__ import annotations

import common

COMMAND = "TESSERA_BENCH_CORPUS=$MANUAL nice .venv/bin/python tests/benchmarks/bench_int8_scan.py --rounds 400"


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.1f}" for v in x) if x else "?"


def section() -> list[str]:
    r = common.load_result("int8_scan")
    if not r:
        return []
    out = ["## knn's 8-bit first pass, paired with the float32 scan (issue 37)", "", f"`{COMMAND}`", "",
           f"The whole manual's table of bench_query_limit.py ({r['chunks']:,} chunks, 384 dims). Chunks left: for each "
           f"of its {r['headings']:,} section headings. Timing: {r['queries']} of them as cached query vectors, "
           "each call right after a bare model run on a text never embedded before, the two paths in turns (one switch, `int8_scan.MIN_CHUNKS`), their results "
           f"equal call by call; {r['rounds']} calls a side. Load average {_load(r.get('loadavg_start'))} at the "
           f"start, {_load(r.get('loadavg_end'))} at the end. How the pass bounds its error: docs/vector_index.md.", "",
           "| chunks left for float64 rescoring | p50 | p90 | mean | more than 128 |", "|---|---:|---:|---:|---:|"]
    for k, d in r["chunks_left"].items():
        out.append(f"| {k.replace('k', 'k ')} | {d['p50']:.0f} | {d['p90']:.0f} | {d['mean']:.0f} | "
                   f"{d['share_over_rank_at_once']:.0%} |")
    out += ["", "| right after a model run, ms | 8-bit pass p50 | float32 scan p50 | 8-bit pass p90 | float32 scan p90 |",
            "|---|---:|---:|---:|---:|"]
    for side, p50 in r["cold_p50_ms"].items():
        p90 = r["cold_p90_ms"][side]
        out.append(f"| {side} | {p50['8-bit pass']:.3f} | {p50['float32 scan']:.3f} | {p90['8-bit pass']:.3f} | "
                   f"{p90['float32 scan']:.3f} |")
    out += [""] + r.get("page_notes", [])
    return out
