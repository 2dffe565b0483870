"""The docs/benchmarks.md section of bench_manual_minute.py (results/manual_minute.json); sections.py
calls :func:`section`."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"
ANCHOR = "## The manual in a minute (issue 37)"
COMMAND = f"TESSERA_BENCH_CORPUS=$MANUAL nice {PY}/bench_manual_minute.py"
TARGET_SECONDS = 60.0


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.1f}" for v in x) if x else "?"


def _verdict(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def section() -> list[str]:
    r = common.load_result("manual_minute")
    if not r:
        return []
    s, rounds = r["summary"], r["rounds"]
    what = "the whole manual" if r["every"] == 1 else f"every {r['every']}th page of the manual"
    loads = [x["engine"]["load_start"][0] for x in rounds] + [x["engine"]["load_end"][0] for x in rounds]
    quiet = max(loads) <= r["cpus"] + 0.5
    wall_ok = s["engine_best_seconds"] <= 60
    if wall_ok:
        wall_verdict = _verdict(True)
    elif quiet:
        wall_verdict = _verdict(False)
    else:
        wall_verdict = ("**not shown here** (the machine was not quiet: load "
                        f"{min(loads):.1f}-{max(loads):.1f} on {r['cpus']} cores); by CPU time "
                        + ("within it" if s["engine_cpu_per_core"] <= 60 else "not within it"))
    if quiet:
        share_verdict = _verdict(max(s["share_wall"], s["share_cpu"]) <= 0.05)
    else:       # the load moved between the engine's turn and the model's: only CPU time compares them
        share_verdict = (f"{_verdict(s['share_cpu'] <= 0.05)} by CPU time (the wall times followed the other work "
                         "on the machine)")
    out = [
        ANCHOR, "",
        f"`{' '.join([COMMAND, *r.get('args', [])])}`", "",
        f"`LOAD DATA INFILE '<copy>/**/*.md' INTO TABLE manual` of {what} "
        f"({r['pages']} pages; a copy without SOURCE.md) into `(path string, title string, body text, v float_vector_array "
        f"... model_name='{r['model']}' from='body' chunk_strategy='recursive' max_tokens='256' overlap_tokens='32')`, "
        "then commit, the first knn() (the FAISS index) and close: that is the engine's time. The bare model is the "
        "same model object embedding exactly the texts of each `Model.embed` call the statement made (the same "
        f"batches), in the same process; the two take turns, the order alternating by round. The bulk batches ran on "
        f"{r['workers']} single-thread sessions at once (`embed/runner.py`). CPU time is user + sys of the process "
        "(all threads). Engine share = engine / bare - 1.", "",
        "| target | measured | | load average at the start (1/5/15 min) |",
        "|---|---|---|---|",
        f"| the whole manual with the int8 model in <= 60 s on this 2-core machine when it is quiet | "
        f"{s['engine_best_seconds']:.1f} s wall (median {s['engine_seconds']:.1f}); CPU time {s['engine_cpu']:.1f} s, "
        f"{s['engine_cpu_per_core']:.1f} s per core | {wall_verdict} | {_load(rounds[0]['engine']['load_start'])} |",
        f"| the engine's own share <= 5% of the model's time | CPU **{100 * s['share_cpu']:.1f}%**, "
        f"wall {100 * s['share_wall']:.1f}% (medians over {len(rounds)} round(s)) | {share_verdict} | |",
        "",
        "| round | order | engine s | engine CPU s | bare s | bare CPU s | share (wall) | share (CPU) | load: engine start -> end | load: bare start -> end |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---|---|",
    ]
    for n, x in enumerate(rounds, start=1):
        e, b = x["engine"], x["bare"]
        out.append(f"| {n} | {', '.join(x['order'])} | {e['seconds']:.1f} | {e['cpu']:.1f} | {b['seconds']:.1f} | "
                   f"{b['cpu']:.1f} | {100 * x['share_wall']:.1f}% | {100 * x['share_cpu']:.1f}% | "
                   f"{_load(e['load_start'])} -> {_load(e['load_end'])} | {_load(b['load_start'])} -> {_load(b['load_end'])} |")
    c = r["check"]
    out += ["", f"{r['chunks_embedded']:,} chunk texts embedded ({r['tokens']:,} model tokens) in "
            f"{len(rounds[0]['calls'])} `Model.embed` call(s); stored vs bare: {c['rows']} rows, {c.get('chunks', 0):,} chunks, "
            f"same chunks {c['same_chunks']}, max |stored - bare| {c.get('max_abs_diff')}."]
    cores = max(1, r["workers"])
    per_cpu_s = r["tokens"] / s["bare_cpu"]
    needed = r["tokens"] * (1 + s["share_cpu"]) / (TARGET_SECONDS * cores)
    out += ["", f"By CPU time, which the other work on the machine moves much less than wall time: the bare model ran "
            f"**{per_cpu_s:,.0f} model tokens per CPU second** (median); the engine's {s['engine_cpu']:.1f} CPU s are "
            f"**{s['engine_cpu'] / cores:.1f} s on {cores} free cores** if its work were spread evenly over them. "
            f"{TARGET_SECONDS:.0f} s on {cores} cores needs about {needed:,.0f} tokens per CPU second at this engine share "
            "(the model's recipe, measured step by step: [the int8 model's CPU per token]"
            "(#the-int8-models-cpu-per-token-issue-37))."]
    prof = r.get("profile")
    if prof:
        total = prof["total_seconds"]
        out += ["", f"Where the engine's time goes: cProfile of one more load ({r.get('profile_pages', r['pages'])} pages), "
                f"its clock the process's CPU time ({total:.1f} s under the profiler). The worker threads' batches "
                "count inside `Model.embed`, where the main thread waits for them. The profiler's own cost falls "
                "on code that makes many small Python calls (markdown-it, the chunk planner): their shares here "
                "are several times what they cost without it; the engine share above is measured without it.", "",
                "| part | seconds | share |", "|---|---:|---:|"]
        out += [f"| {part} | {sec:.2f} | {100 * sec / total:.1f}% |" for part, sec in prof["parts"].items()]
        out += ["", "Top entries by own time:", "", "| entry | calls | own s | cumulative s | part |", "|---|---:|---:|---:|---|"]
        out += [f"| `{e['where']}` | {e['calls']:,} | {e['tottime']:.2f} | {e['cumtime']:.2f} | {e['part'].split(' (')[0]} |"
                for e in prof["top"][:15]]
    out += ["", *[f"- {note}" for note in r.get("notes", [])]] if r.get("notes") else []
    return out + _subset(common.load_result("manual_minute_subset"))


def _subset(r: dict | None) -> list[str]:
    """A shorter run (``--every N --out manual_minute_subset``): its rounds, for the code it measured."""
    if not r:
        return []
    s = r["summary"]
    out = ["", f"A shorter run: `{' '.join([COMMAND, *r.get('args', [])])}` ({r['pages']} pages, "
           f"{r['chunks_embedded']:,} chunk texts; stored vs bare: same chunks {r['check']['same_chunks']}, "
           f"max |stored - bare| {r['check'].get('max_abs_diff')}); engine share by CPU time "
           f"**{100 * s['share_cpu']:.1f}%**, by wall time {100 * s['share_wall']:.1f}% (medians):", "",
           "| round | order | engine s | engine CPU s | bare s | bare CPU s | share (wall) | share (CPU) | load: engine start -> end |",
           "|---:|---|---:|---:|---:|---:|---:|---:|---|"]
    for n, x in enumerate(r["rounds"], start=1):
        e, b = x["engine"], x["bare"]
        out.append(f"| {n} | {', '.join(x['order'])} | {e['seconds']:.1f} | {e['cpu']:.1f} | {b['seconds']:.1f} | "
                   f"{b['cpu']:.1f} | {100 * x['share_wall']:.1f}% | {100 * x['share_cpu']:.1f}% | "
                   f"{_load(e['load_start'])} -> {_load(e['load_end'])} |")
    return out + ["", *[f"- {note}" for note in r.get("notes", [])]] if r.get("notes") else out
