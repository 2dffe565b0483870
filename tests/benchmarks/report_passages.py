"""The docs/benchmarks.md section of bench_passages.py (results/passages.json); sections.py calls
:func:`section`."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"
INDEX = "tessera index (markdown 256/32)"
RECURSIVE = "recursive 256/32"
SETS = ("held-out", "tuning")


def _verdict(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.2f}" for v in x) if x else "?"


def _quality_rows(lay: dict) -> list[str]:
    out = ["| set | layout | query | passage@1 | passage@5 | page recall@1 | passage@1 / page recall@1 | mean first "
           "passage (chars) | bare-title first passages | median query ms, with passages / without |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for label in SETS:
        for name in (INDEX, RECURSIVE):
            for method, q in lay[name]["quality"][label].items():
                ratio = q["passage@1"] / q["page_recall@1"] if q["page_recall@1"] else 0.0
                out.append(f"| {label} | {name} | `{method}` | {q['passage@1']:.3f} | {q['passage@5']:.3f} | "
                           f"{q['page_recall@1']:.3f} | {ratio:.2f} | {q['mean_passage_chars']:.0f} | "
                           f"{q['bare_title_share']:.1%} | {q['median_ms']:.0f} / {q['median_ms_without_passage']:.0f} |")
    return out


def _rule_rows(rules: dict) -> list[str]:
    names = [k for k in rules["tuning"] if k not in ("page_recall@1", "answer_chunk_rank")]
    out = ["| rule for the first document's passage | " + " | ".join(f"passage@1, {s}" for s in SETS) + " |",
           "|---|" + "---|" * len(SETS)]
    for name in names:
        out.append(f"| {name} | " + " | ".join(f"{rules[s][name]:.3f}" for s in SETS) + " |")
    out.append("| (page recall@1 of that first document) | "
               + " | ".join(f"{rules[s]['page_recall@1']:.3f}" for s in SETS) + " |")
    return out


def section() -> list[str]:
    r = common.load_result("passages")
    if r is None:
        return []
    lay = r["layouts"]
    n = r["questions"]
    out = ["## Passages: does the first passage hold the answer (issue 32)", "",
           f"`TESSERA_BENCH_CORPUS=$MANUAL nice {PY}/bench_passages.py"
           + (" --subset all`" if r["subset"] == "all" else "` (the pages the two question sets ask about)"),
           "",
           f"{r['pages']} pages loaded as `tessera index` loads a folder (LOAD DATA ... SYNC into its table), and "
           "into the same layout chunked `recursive` 256/32. Two question sets, each question with a short verbatim "
           "span of its page that answers it: **tuning**, "
           f"{n['tuning']} questions of questions.jsonl whose quotes were reviewed by reading the page "
           "(tests/benchmarks/passage_quotes.jsonl: about half of the automatic picks were replaced), on which the "
           f"passage rule was chosen; **held-out**, {n['held-out']} questions written from 30 other pages "
           "(passage_quotes_heldout.jsonl), never used to choose anything. The top five documents, one passage "
           "each (`knn_chunk_text()`, as MCP `search` with `chunks_per_doc=1`). Measured "
           f"{r['when']}, load average {_load(r.get('loadavg_before'))} before and {_load(r.get('loadavg'))} after "
           "(query times are on that shared machine).",
           "", *_quality_rows(lay),
           "", "| layout | chunks | mean chunk (chars) | load (s) |", "|---|---|---|---|"]
    for name in (INDEX, RECURSIVE):
        b = lay[name]["build"]
        out.append(f"| {name} | {b['chunks']:,} | {b['mean_chunk_chars']:.0f} | {b['load_s']:.1f} |")
    if "rules" in lay[INDEX]:
        out += ["", "How a found document's passage is chosen, the rules tried on the same first documents "
                "(`hybrid_match`, `tessera index`'s table); the engine's rule is the vector similarity plus the "
                "chunk's BM25 over the document's best (docs/passages.md):", "", *_rule_rows(lay[INDEX]["rules"])]
        ranked = {s: lay[INDEX]["rules"][s].get("answer_chunk_rank") for s in SETS}
        if all(ranked.values()):
            out += ["", "Where the answer's chunk stands among the first document's chunks in the engine's order, "
                    "when that document is the right page (`knn_chunks(n)` order): "
                    + "; ".join(f"{s}: " + ", ".join(f"{k}: {v}" for k, v in ranked[s].items()) for s in SETS)
                    + ". The right chunk is most often first or second: two passages per document "
                    "(`knn_chunks(2)`, MCP's default `chunks_per_doc=2`) hold it far more often than one."]
    hi, hr = lay[INDEX]["quality"]["held-out"]["hybrid_match"], lay[RECURSIVE]["quality"]["held-out"]["hybrid_match"]
    out += ["", "Targets (issue 32), on `tessera index`'s table with `hybrid_match`, held-out set:", "",
            "| target | measured | |", "|---|---|---|",
            f"| passage@1 at least 0.75 x page recall@1 | {hi['passage@1']:.3f} vs 0.75 x {hi['page_recall@1']:.3f} = "
            f"{0.75 * hi['page_recall@1']:.3f} | {_verdict(hi['passage@1'] >= 0.75 * hi['page_recall@1'])} |",
            f"| mean first passage under 1,000 characters | {hi['mean_passage_chars']:.0f} | "
            f"{_verdict(hi['mean_passage_chars'] < 1000)} |",
            f"| no bare title as first passage | {hi['bare_title_share']:.1%} | {_verdict(hi['bare_title_share'] == 0)} |",
            f"| page recall@1 not below recursive 256/32's | {hi['page_recall@1']:.3f} vs {hr['page_recall@1']:.3f} | "
            f"{_verdict(hi['page_recall@1'] >= hr['page_recall@1'])} |"]
    return out
