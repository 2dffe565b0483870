"""The docs/benchmarks.md section of bench_markdown.py (results/markdown.json); sections.py calls
:func:`section`."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"
ANCHOR = "## Markdown chunks and sections"


def _verdict(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.1f}" for v in x) if x else "?"


def _q(r: dict, strategy: str, name: str, method: str, group: str) -> dict:
    return r["quality"][strategy][name][method][group]


def _targets(r: dict) -> list[str]:
    md = lambda name, method, group: _q(r, "markdown", name, method, group)  # noqa: E731
    rec = lambda name, method, group: _q(r, "recursive", name, method, group)  # noqa: E731
    deep_h, deep_k = md("headings", "hybrid_match", "deep"), md("headings", "knn", "deep")
    q_md, q_rec = md("questions", "knn", "all"), rec("questions", "knn", "all")
    ratio, cpu_ratio = r["load_ratio_markdown_over_recursive"], r.get("load_cpu_ratio_markdown_over_recursive")
    cost = r.get("section_cost") or {}
    out = ["| target | measured | | load average (1/5/15 min) |", "|---|---|---|---|",
           f"| heading queries, deep: `hybrid_match` recall@1 >= 0.80 and MRR >= 0.87 | recall@1 "
           f"{deep_h['recall@1']:.3f}, MRR {deep_h['mrr']:.3f} (recursive 256/32: "
           f"{rec('headings', 'hybrid_match', 'deep')['recall@1']:.3f}, {rec('headings', 'hybrid_match', 'deep')['mrr']:.3f}) | "
           f"{_verdict(deep_h['recall@1'] >= 0.80 and deep_h['mrr'] >= 0.87)} | {_load(r.get('loadavg'))} |",
           f"| heading queries, deep: knn alone recall@1 >= 0.70 | {deep_k['recall@1']:.3f} (recursive: "
           f"{rec('headings', 'knn', 'deep')['recall@1']:.3f}) | {_verdict(deep_k['recall@1'] >= 0.70)} | "
           f"{_load(r.get('loadavg'))} |",
           f"| natural-language questions: knn recall@1 not below recursive 256/32 | {q_md['recall@1']:.3f} vs "
           f"{q_rec['recall@1']:.3f} (MRR {q_md['mrr']:.3f} vs {q_rec['mrr']:.3f}) | "
           f"{_verdict(q_md['recall@1'] >= q_rec['recall@1'])} | {_load(r.get('loadavg'))} |",
           f"| loading with `markdown` <= 1.15x `recursive` 256/32 in the same run | wall {ratio:.3f}x"
           + (f", CPU {cpu_ratio:.3f}x" if cpu_ratio else "") + f" | {_verdict(ratio <= 1.15)} (wall)"
           + (f", {_verdict(cpu_ratio <= 1.15)} (CPU)" if cpu_ratio else "") + " | "
           f"{_load(r['builds']['markdown'].get('loadavg_after'))} |"]
    if cost:
        p50, cpu = cost["p50_ms"], cost.get("cpu_p50_ms", {})
        out.append(f"| `knn_chunk_section()` adds <= 10% to a k=10 text query's p50 | wall p50 {p50['knn']:.2f} -> "
                   f"{p50['knn + knn_chunk_section()']:.2f} ms (**{100 * (cost['section_over_knn'] - 1):+.1f}%**)"
                   + (f"; CPU p50 {cpu['knn']:.2f} -> {cpu['knn + knn_chunk_section()']:.2f} ms "
                      f"(**{100 * (cost['section_over_knn_cpu'] - 1):+.1f}%**)" if cpu else "")
                   + f" | {_verdict(cost['section_over_knn'] <= 1.10)} | {_load(cost.get('loadavg'))} |")
    for run in r.get("section_cost_runs", [])[:-1]:        # earlier runs, reported beside the last one
        out.append(f"| (an earlier run, {run['queries']} queries) | wall p50 {run['p50_ms']['knn']:.2f} -> "
                   f"{run['p50_ms']['knn + knn_chunk_section()']:.2f} ms (**{100 * (run['section_over_knn'] - 1):+.1f}%**); "
                   f"CPU **{100 * (run['section_over_knn_cpu'] - 1):+.1f}%** | {_verdict(run['section_over_knn'] <= 1.10)} | "
                   f"{_load(run.get('loadavg'))} |")
    return out


def _table(r: dict) -> list[str]:
    out = ["| strategy | queries | method | deep r@1 | deep MRR | all r@1 | all r@10 | all MRR |",
           "|---|---|---|---|---|---|---|---|"]
    for strategy in ("recursive", "markdown"):
        for name in ("headings", "questions"):
            for method in ("knn", "hybrid_match"):
                d, a = _q(r, strategy, name, method, "deep"), _q(r, strategy, name, method, "all")
                deep = (f"{d['recall@1']:.3f} | {d['mrr']:.3f}") if d["n"] else "- | -"
                out.append(f"| {strategy} | {name} | {method} | {deep} | {a['recall@1']:.3f} | {a['recall@10']:.3f} | "
                           f"{a['mrr']:.3f} |")
    return out


def section() -> list[str]:
    r = common.load_result("markdown")
    if not r:
        return []
    b = r["builds"]
    subset = r.get("subset", "all")
    scope = ("the whole manual" if subset == "all" else
             f"the {r['pages']} pages that questions.jsonl asks about (a fifth of the manual's text; the machine "
             "was too busy to embed the whole manual twice in the time left, so retrieval is among these pages only)")
    return [ANCHOR, "", f"`{PY}/bench_markdown.py" + (" --subset questions" if subset != "all" else "") + "`", "",
            f"On {scope}: one table per strategy, `from='title,body'` (the title is the page's file name in words), "
            f"max_tokens 256, overlap 32, `markdown` with its default `chunk_context='heading'`. "
            f"{r['queries']} heading queries, {r['questions']} questions, one run.", ""]\
        + _targets(r) + ["", f"Chunks: recursive {b['recursive']['chunks']:,}, markdown {b['markdown']['chunks']:,}; "
                             f"load {b['recursive']['load_seconds']:.0f} s vs {b['markdown']['load_seconds']:.0f} s "
                             f"(CPU {b['recursive'].get('load_cpu_seconds', 0):.0f} s vs "
                             f"{b['markdown'].get('load_cpu_seconds', 0):.0f} s).", ""] + _table(r) + [""]\
        + r.get("page_notes", [])    # what the person who ran it wrote about the run, kept with its figures
