"""The docs/benchmarks.md section of bench_passages.py (results/passages.json); sections.py calls
:func:`section`."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"
INDEX = "tessera index (markdown 256/32)"
RECURSIVE = "recursive 256/32"


def _verdict(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.2f}" for v in x) if x else "?"


def section() -> list[str]:
    r = common.load_result("passages")
    if r is None:
        return []
    lay = r["layouts"]
    out = ["## Passages: does the first passage hold the answer (issue 32)", "",
           f"`TESSERA_BENCH_CORPUS=$MANUAL nice {PY}/bench_passages.py"
           + (f" --every {r['every']}" if r.get("every", 1) > 1 else "") + "`"
           + ("" if r["subset"] == "all" else " (the pages questions.jsonl asks about"
              + (f", every {r['every']}th of them by path" if r.get("every", 1) > 1 else "") + ")"),
           "",
           f"{r['pages']} pages loaded as `tessera index` loads a folder (LOAD DATA ... SYNC into its table), and "
           f"into the same layout chunked `recursive` 256/32; {r['questions']} questions (questions.jsonl), each "
           "with a short quote of its page (tests/benchmarks/passage_quotes.jsonl: picked automatically, the page's "
           "sentence sharing the most content words with the question, first 100 characters; a lexical proxy for "
           "a reader's choice, the same for both layouts). The top five documents, one best passage each "
           "(`knn_chunk_text()`, as MCP `search` with `chunks_per_doc=1`). Measured "
           f"{r['when']}, load average {_load(r.get('loadavg_before'))} before and {_load(r.get('loadavg'))} after.",
           "", "| layout | query | passage@1 | passage@5 | page recall@1 | passage@1 / page recall@1 | mean first "
           "passage (chars) | bare-title first passages |", "|---|---|---|---|---|---|---|---|"]
    for name in (INDEX, RECURSIVE):
        for method, q in lay[name]["quality"].items():
            ratio = q["passage@1"] / q["page_recall@1"] if q["page_recall@1"] else 0.0
            out.append(f"| {name} | `{method}` | {q['passage@1']:.3f} | {q['passage@5']:.3f} | "
                       f"{q['page_recall@1']:.3f} | {ratio:.2f} | {q['mean_passage_chars']:.0f} | "
                       f"{q['bare_title_share']:.1%} |")
    out += ["", "| layout | chunks | mean chunk (chars) | load (s) |", "|---|---|---|---|"]
    for name in (INDEX, RECURSIVE):
        b = lay[name]["build"]
        out.append(f"| {name} | {b['chunks']:,} | {b['mean_chunk_chars']:.0f} | {b['load_s']:.1f} |")
    hi, hr = lay[INDEX]["quality"]["hybrid_match"], lay[RECURSIVE]["quality"]["hybrid_match"]
    out += ["", "Targets (issue 32), on `tessera index`'s table with `hybrid_match`:", "",
            "| target | measured | |", "|---|---|---|",
            f"| passage@1 at least 0.75 x page recall@1 | {hi['passage@1']:.3f} vs 0.75 x {hi['page_recall@1']:.3f} = "
            f"{0.75 * hi['page_recall@1']:.3f} | {_verdict(hi['passage@1'] >= 0.75 * hi['page_recall@1'])} |",
            f"| mean first passage under 1,000 characters | {hi['mean_passage_chars']:.0f} | "
            f"{_verdict(hi['mean_passage_chars'] < 1000)} |",
            f"| no bare title as first passage | {hi['bare_title_share']:.1%} | {_verdict(hi['bare_title_share'] == 0)} |",
            f"| page recall@1 not below recursive 256/32's | {hi['page_recall@1']:.3f} vs {hr['page_recall@1']:.3f} | "
            f"{_verdict(hi['page_recall@1'] >= hr['page_recall@1'])} |"]
    return out
