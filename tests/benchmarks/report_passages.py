"""The docs/benchmarks.md section of bench_passages.py (results/passages.json); sections.py calls
:func:`section`."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"
INDEX = "tessera index"
RECURSIVE = "recursive 256/32"
SETS = ("held-out", "held-out 2", "tuning")
HELD_OUT = ("held-out", "held-out 2")


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
    names = [k for k in rules["tuning"] if k not in ("page_recall@1", "answer_chunk_rank", "mean_chars")]
    out = ["| rule for the first document's passage | " + " | ".join(f"passage@1, {s}" for s in SETS) + " |",
           "|---|" + "---|" * len(SETS)]
    for name in names:
        out.append(f"| {name} | " + " | ".join(f"{rules[s][name]:.3f}" + (f" ({rules[s]['mean_chars'][name]:.0f} chars)"
                                                  if "mean_chars" in rules[s] else "") for s in SETS) + " |")
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
           + (" --subset all`" if r["subset"] == "all" else "` (the pages the question sets ask about)"),
           "",
           f"{r['pages']} pages loaded as `tessera index` loads a folder (LOAD DATA ... SYNC into the table it "
           f"creates: `{r.get('index_layout', 'markdown 256/32')}`), and into the same columns chunked `recursive` "
           "256/32. Three question sets, each question with a short verbatim span of its page that answers it: "
           f"**tuning**, {n['tuning']} questions of questions.jsonl whose quotes were reviewed by reading the page "
           "(tests/benchmarks/passage_quotes.jsonl: about half of the automatic picks were replaced), on which rules "
           f"and layouts are compared; **held-out**, {n['held-out']} questions written from 30 other "
           "pages (passage_quotes_heldout.jsonl), looked at once when the previous rule was chosen; **held-out 2**, "
           f"{n.get('held-out 2', 0)} questions written from 19 further pages (passage_quotes_heldout2.jsonl) "
           "before the widened passages and the trial layout below were tried, never used to choose anything. The top five documents, one passage "
           "each (`knn_chunk_text()`, as MCP `search` with `chunks_per_doc=1`). Measured "
           f"{r['when']}, load average {_load(r.get('loadavg_before'))} before and {_load(r.get('loadavg'))} after "
           "(query times are on that shared machine).",
           "", *_quality_rows(lay),
           "", "| layout | chunks | mean chunk (chars) | first load (s) |", "|---|---|---|---|"]
    for name in (INDEX, RECURSIVE):
        b = lay[name]["build"]
        load = f"{b['load_s']:.1f}" if b.get("load_s") is not None else "kept from earlier runs"
        out.append(f"| {name} | {b['chunks']:,} | {b['mean_chunk_chars']:.0f} | {load} |")
    if "rules" in lay[INDEX]:
        out += ["", "How a found document's passage is chosen, the rules tried on the same first documents "
                "(`hybrid_match`, `tessera index`'s table), passage@1 and the mean passage length; the engine's rule "
                "is the vector similarity plus the chunk's BM25 over the document's best (docs/passages.md). "
                "\"Widened\": the chosen chunk joined by its neighbours of the same section, the better-scoring "
                "first, while the passage stays within that many characters (a passage for a reader around a "
                "small chunk). Rules and layouts were compared on the tuning set only; the held-out columns were "
                "read after the choice:", "", *_rule_rows(lay[INDEX]["rules"])]
        ranked = {s: lay[INDEX]["rules"][s].get("answer_chunk_rank") for s in SETS}
        if all(ranked.values()):
            out += ["", "Where the answer's chunk stands among the first document's chunks in the engine's order, "
                    "when that document is the right page (`knn_chunks(n)` order): "
                    + "; ".join(f"{s}: " + ", ".join(f"{k}: {v}" for k, v in ranked[s].items()) for s in SETS)
                    + ". The right chunk is most often first or second: two passages per document "
                    "(`knn_chunks(2)`, MCP's default `chunks_per_doc=2`) hold it far more often than one."]
    for name, trial in (r.get("trials") or {}).items():
        b = trial["build"]
        out += ["", f"A trial layout, `tessera index`'s table chunked `{name}` ({b['chunks']:,} chunks, mean "
                f"{b['mean_chunk_chars']:.0f} characters), the same rules on its first documents:", "",
                *_rule_rows(trial["rules"])]
    out += ["", "Targets (issue 32), on `tessera index`'s table with `hybrid_match`, on each held-out set:", "",
            "| target | set | measured | |", "|---|---|---|---|"]
    for label in HELD_OUT:
        hi, hr = lay[INDEX]["quality"][label]["hybrid_match"], lay[RECURSIVE]["quality"][label]["hybrid_match"]
        out += [f"| passage@1 at least 0.75 x page recall@1 | {label} | {hi['passage@1']:.3f} vs 0.75 x "
                f"{hi['page_recall@1']:.3f} = {0.75 * hi['page_recall@1']:.3f} | "
                f"{_verdict(hi['passage@1'] >= 0.75 * hi['page_recall@1'])} |",
                f"| mean first passage under 1,000 characters | {label} | {hi['mean_passage_chars']:.0f} | "
                f"{_verdict(hi['mean_passage_chars'] < 1000)} |",
                f"| no bare title as first passage | {label} | {hi['bare_title_share']:.1%} | "
                f"{_verdict(hi['bare_title_share'] == 0)} |",
                f"| page recall@1 not below recursive 256/32's | {label} | {hi['page_recall@1']:.3f} vs "
                f"{hr['page_recall@1']:.3f} | {_verdict(hi['page_recall@1'] >= hr['page_recall@1'])} |"]
    return out
