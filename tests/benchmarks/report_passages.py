"""The docs/benchmarks.md section of bench_passages.py (results/passages.json); sections.py calls
:func:`section`."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"
INDEX = "tessera index"
RECURSIVE = "recursive 256/32"
SETS = ("held-out", "held-out 2", "held-out 3", "tuning")      # those a run measured are reported, in this order
HELD_OUT = ("held-out", "held-out 2", "held-out 3")
ENGINE_RULE = "similarity + 1 x BM25/max"


def _verdict(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.2f}" for v in x) if x else "?"


def _sets(measured: dict) -> list[str]:
    """The sets of SETS a run measured (held-out 3 only with --final)."""
    return [s for s in SETS if s in measured]


def _quality_rows(lay: dict) -> list[str]:
    out = ["| set | layout | query | passage@1 | passage@5 | page recall@1 | passage@1 / page recall@1 | mean first "
           "passage (chars) | bare-title first passages | median query ms, with passages / without |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for label in _sets(lay[INDEX]["quality"]):
        for name in (INDEX, RECURSIVE):
            for method, q in lay[name]["quality"][label].items():
                ratio = q["passage@1"] / q["page_recall@1"] if q["page_recall@1"] else 0.0
                out.append(f"| {label} | {name} | `{method}` | {q['passage@1']:.3f} | {q['passage@5']:.3f} | "
                           f"{q['page_recall@1']:.3f} | {ratio:.2f} | {q['mean_passage_chars']:.0f} | "
                           f"{q['bare_title_share']:.1%} | {q['median_ms']:.0f} / {q['median_ms_without_passage']:.0f} |")
    return out


def _rule_rows(rules: dict) -> list[str]:
    labels = _sets(rules)
    names = [k for k in rules["tuning"] if k not in ("page_recall@1", "answer_chunk_rank", "mean_chars",
                                                    "rescore_median_ms")]
    out = ["| rule for the first document's passage | " + " | ".join(f"passage@1, {s}" for s in labels) + " |",
           "|---|" + "---|" * len(labels)]
    for name in names:
        out.append(f"| {name} | " + " | ".join(f"{rules[s][name]:.3f}" + (f" ({rules[s]['mean_chars'][name]:.0f} chars)"
                                                  if "mean_chars" in rules[s] else "") for s in labels) + " |")
    out.append("| (page recall@1 of that first document) | "
               + " | ".join(f"{rules[s]['page_recall@1']:.3f}" for s in labels) + " |")
    return out


def _units_cost(u: dict | None) -> list[str]:
    """What passage_units='windows' costs (bench_passage_units.py), when it was measured."""
    if not u:
        return []
    b, q = u["build"], u["query"]
    return ["", f"`passage_units='windows'` (`tessera index`'s table; {PY}/bench_passage_units.py): its units were "
            f"added to the kept table of the same pages without them by `ALTER TABLE docs MODIFY COLUMN` (every chunk "
            f"vector reused), so the model ran on the units alone: {b['units_model_texts']:,} texts of "
            f"{b['units_model_tokens']:,} model tokens, against {u['chunks']:,} chunks of {u['chunk_model_tokens']:,} "
            f"tokens ({b['units_model_tokens'] / max(u['chunk_model_tokens'], 1):.1f} x), in {b['units_s']:,.0f} s "
            f"({b['units_cpu_s']:,.0f} CPU s; load average {_load(b.get('loadavg_before'))} before, "
            f"{_load(b.get('loadavg_after'))} after, niced, on a machine shared with other jobs). Query time, median of "
            f"`hybrid_match(...) LIMIT 5` with `knn_chunk_text()` over the {q['questions']} tuning questions (two "
            f"rounds, alternating; load {_load(q['loadavg'][0])} before, {_load(q['loadavg'][1])} after): {q['before']['median_ms']:.1f} ms without units, "
            f"{q['after']['median_ms']:.1f} ms with (without `knn_chunk_text()`: {q['before']['median_ms_without_passage']:.1f} / "
            f"{q['after']['median_ms_without_passage']:.1f} ms)."]


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
           f"256/32. {'Four' if 'held-out 3' in n else 'Three'} question sets, each question with a short verbatim span of its page that answers it: "
           f"**tuning**, {n['tuning']} questions of questions.jsonl whose quotes were reviewed by reading the page "
           "(tests/benchmarks/passage_quotes.jsonl: about half of the automatic picks were replaced), on which rules "
           f"and layouts are compared; **held-out**, {n['held-out']} questions written from 30 other "
           "pages (passage_quotes_heldout.jsonl), looked at once when the previous rule was chosen; **held-out 2**, "
           f"{n.get('held-out 2', 0)} questions written from 19 further pages (passage_quotes_heldout2.jsonl) "
           "before the widened passages and the trial layout below were tried, never used to choose anything."
           + (f" **held-out 3**, {n['held-out 3']} questions on 31 pages no other set uses "
              "(passage_quotes_heldout3.jsonl), measured once (`--final`) to read the frozen rule."
              if "held-out 3" in n else "")
           + " The top five documents, one passage "
           "each (`knn_chunk_text()`, as MCP `search` with `chunks_per_doc=1`). Measured "
           f"{r['when']}, load average {_load(r.get('loadavg_before'))} before and {_load(r.get('loadavg'))} after "
           "(query times are on that shared machine).",
           "", *_quality_rows(lay),
           "", "| layout | chunks | mean chunk (chars) | first load (s) |", "|---|---|---|---|"]
    for name in (INDEX, RECURSIVE):
        b = lay[name]["build"]
        load = f"{b['load_s']:.1f}" if b.get("load_s") is not None else "kept from earlier runs"
        out.append(f"| {name} | {b['chunks']:,} | {b['mean_chunk_chars']:.0f} | {load} |")
    out += _units_cost(common.load_result("passage_units"))
    if "rules" in lay[INDEX]:
        out += ["", "How a found document's passage is chosen, the rules tried on the same first documents "
                "(`hybrid_match`, `tessera index`'s table), passage@1 and the mean passage length; the engine's rule "
                "is the vector similarity plus the chunk's BM25 over the document's best (docs/passages.md), and on "
                "a column with `passage_units='windows'`, as `tessera index`'s table now has, its 8 best chunks by "
                "that rescored by their stored units (the last rule, frozen before any held-out figure of it was read). "
                "\"Widened\": the chosen chunk joined by its neighbours of the same section, the better-scoring "
                "first, while the passage stays within that many characters (a passage for a reader around a "
                "small chunk). Rules and layouts were compared on the tuning set only; the held-out columns were "
                "read after the choice:", "", *_rule_rows(lay[INDEX]["rules"])]
        ranked = {s: lay[INDEX]["rules"][s].get("answer_chunk_rank") for s in _sets(lay[INDEX]["rules"])}
        if all(ranked.values()):
            out += ["", "Where the answer's chunk stands among the first document's chunks in the engine's order, "
                    "when that document is the right page (`knn_chunks(n)` order): "
                    + "; ".join(f"{s}: " + ", ".join(f"{k}: {v}" for k, v in ranked[s].items()) for s in ranked)
                    + ". The right chunk is most often first or second: two passages per document "
                    "(`knn_chunks(2)`, MCP's default `chunks_per_doc=2`) hold it far more often than one."]
    for name, trial in (r.get("trials") or {}).items():
        b = trial["build"]
        out += ["", f"A trial layout, `tessera index`'s table chunked `{name}` ({b['chunks']:,} chunks, mean "
                f"{b['mean_chunk_chars']:.0f} characters), the same rules on its first documents:", "",
                *_rule_rows(trial["rules"])]
    out += ["", "Targets (issue 32), on `tessera index`'s table with `hybrid_match`, on each held-out set:", "",
            "| target | set | measured | |", "|---|---|---|---|"]
    for label in (s for s in HELD_OUT if s in lay[INDEX]["quality"]):
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
