"""The docs/benchmarks.md section of bench_int8_cpu.py (results/int8_cpu.json); sections.py calls
:func:`section`."""
from __future__ import annotations

import common

COMMAND = "TESSERA_BENCH_CORPUS=$MANUAL nice .venv/bin/python tests/benchmarks/bench_int8_cpu.py"


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.1f}" for v in x) if x else "?"


def section() -> list[str]:
    r = common.load_result("int8_cpu")
    if not r:
        return []
    variants = r["variants"]
    first = next(iter(variants.values()))
    rounds = len(first["cpu_seconds"])
    v1 = next((v for n, v in variants.items() if n.startswith("int8 v1:")), None)
    v2 = next((v for n, v in variants.items() if n.startswith("int8 v2: one text")), None)
    out = ["## The int8 model's CPU per token (issue 37)", "", f"`{COMMAND}`", "",
           f"{r['chunks']} recursive 256/32 chunks of every 7th page of the manual ({first['tokens']:,} model tokens), "
           "embedded by `Model.embed` on one single-thread onnxruntime session, batches one after another, with "
           "each variant of the graph; CPU time of the process, best of "
           f"{rounds} rounds whose order alternates (the median beside it). Load average {_load(r.get('loadavg_start'))} "
           f"at the start, {_load(r.get('loadavg_end'))} at the end. What the whole manual in 60 s needs per CPU second is in "
           "[the manual in a minute](#the-manual-in-a-minute-issue-37); docs/models.md says what the shipped recipe is.", "",
           "| variant | padded tokens | tokens / CPU s (best) | (median) | vs int8 v1 | vs int8 v2 | "
           "cosine to float32: mean / min |",
           "|---|---:|---:|---:|---:|---:|---:|"]

    def ratio(v: dict, base: dict | None) -> str:
        return f"{v['tokens_per_cpu_s'] / base['tokens_per_cpu_s']:.2f}x" if base else "-"

    for name, v in variants.items():
        out.append(f"| {name} | {v['padded_tokens']:,} | {v['tokens_per_cpu_s']:,.0f} | {v['tokens_per_cpu_s_median']:,.0f} | "
                   f"{ratio(v, v1)} | {ratio(v, v2)} | {v['cos_mean']:.4f} / {v['cos_min']:.4f} |")
    return out
