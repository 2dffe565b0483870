"""The "Full-text and hybrid search" section of docs/benchmarks.md, from results/hybrid.json.

    .venv/bin/python tests/benchmarks/report_hybrid.py      # rewrites the section between its markers

sections.py calls :func:`section` when it writes the whole page; run alone, this script replaces
only the text between ``<!-- hybrid:start -->`` and ``<!-- hybrid:end -->`` (appending it the first time).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

PAGE = common.REPO / "docs" / "benchmarks.md"
ORDER = ["knn", "match page", "match chunk", "hybrid page", "hybrid page w50", "hybrid chunk", "hybrid chunk w50",
         "hybrid chunk w100", "match page +stopwords", "hybrid chunk +stopwords", "hybrid chunk w50 +stopwords"]
LABELS = {
    "knn": "knn() alone", "match page": "MATCH ... AGAINST (page BM25)", "match chunk": "chunk BM25 alone (every query word; best chunk per page)",
    "hybrid page": "RRF: knn + page BM25", "hybrid page w50": "RRF: knn + page BM25, window_size=50",
    "hybrid chunk": "**hybrid_match** (RRF: knn + chunk BM25)", "hybrid chunk w50": "hybrid_match, window_size=50",
    "hybrid chunk w100": "hybrid_match, window_size=100", "match page +stopwords": "page BM25, stopwords='en'",
    "hybrid chunk +stopwords": "hybrid_match, stopwords='en'",
    "hybrid chunk w50 +stopwords": "hybrid_match, window_size=50, stopwords='en'",
}


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def quality_table(methods: dict, groups: tuple[str, ...]) -> list[str]:
    head = "| method | " + " | ".join(f"{g} r@1 | {g} r@5 | {g} r@10 | {g} MRR" for g in groups) + " |"
    out = [head, "|---|" + "---:|" * (4 * len(groups))]
    for name in [n for n in ORDER if n in methods] + [n for n in methods if n not in ORDER]:
        s = methods[name]["scores"]
        cells = " | ".join(f"{_pct(s[g]['recall@1'])} | {_pct(s[g]['recall@5'])} | {_pct(s[g]['recall@10'])} | "
                           f"{s[g]['mrr']:.3f}" for g in groups)
        errors = f" ({methods[name]['errors']} errors)" if methods[name].get("errors") else ""
        out.append(f"| {LABELS.get(name, name)}{errors} | {cells} |")
    return out


def reading(h: dict, q: dict) -> list[str]:
    """What the tables say, computed from them."""
    def s(group: dict, m: str, g: str) -> dict:
        return group[m]["scores"][g]
    out = []
    if all(m in q for m in ("hybrid page", "hybrid chunk", "knn")):
        out.append(f"- Page-level BM25 fused with knn lifts the headings (deep r@1 {_pct(s(h, 'hybrid page', 'deep')['recall@1'])}) "
                   f"but less the questions ({_pct(s(q, 'hybrid page', 'all')['recall@1'])}); BM25 over the same chunks "
                   f"as knn, each page by its best chunk, lifts both (questions {_pct(s(q, 'knn', 'all')['recall@1'])} → "
                   f"{_pct(s(q, 'hybrid chunk', 'all')['recall@1'])}, MRR {s(q, 'knn', 'all')['mrr']:.3f} → "
                   f"{s(q, 'hybrid chunk', 'all')['mrr']:.3f}). That is why `hybrid_match()` uses the chunks.")
    if "hybrid chunk" in h:
        out.append(f"- Head queries: knn {_pct(s(h, 'knn', 'head')['recall@1'])} / {s(h, 'knn', 'head')['mrr']:.3f}, "
                   f"hybrid_match {_pct(s(h, 'hybrid chunk', 'head')['recall@1'])} / {s(h, 'hybrid chunk', 'head')['mrr']:.3f} "
                   f"(r@1 / MRR): better too, though page-level fusion does best on them (a head section's words are "
                   f"near the top of its page, where page BM25 weighs them fully).")
    out.append("- `hybrid_match()`'s text side ignores English stop words (natural language, as MySQL): on this run's "
               "tables it is the 'hybrid_match' row; the `+stopwords` rows come from a copy of the database whose table "
               "has `stopwords='en'`, which changes MATCH ... AGAINST too (the same list) and so measures the same.")
    out.append("- Speed: both text queries embed the text once (the model's time is most of a knn query); hybrid_match "
               "adds the chunk BM25 query (FTS5 `bm25()` over every chunk holding a query word), the fusion and the TEMP "
               "table the rewritten query joins. Its plan is reused across executes of the same statement (the "
               "statement cache remakes only the sides), and the chunk BM25 query runs in a worker thread while the "
               "model embeds the text (it needs no vector). The ratio moved a lot between runs on the overloaded "
               "machine. A cProfile of 40 repeated hybrid_match queries (query embeddings cached, so the model is "
               "out of the picture, and before the worker thread) put hybrid_match's own work at about 11 ms: the knn "
               "side 4.8 ms (exact search over 5,414 vectors), the chunk BM25 query 4.4 ms, fusion, TEMP table and "
               "SQLite about 2 ms; a knn query's own work beside its embedding is about 4 ms. Where embedding is cheap "
               "(an idle machine, a few ms) the ratio is therefore about 1.3x at best: the target is met on this "
               "machine's median, not shown for an idle one. A cheaper chunk BM25 (FTS5 scores every chunk holding "
               "any query word) is what is left to gain.")
    return out + [""]


def median_run(result: dict) -> dict:
    """The speed run with the median hybrid/knn ratio (the runs are noisy on a shared machine)."""
    runs = sorted(result.get("speed_runs") or [result["speed"]], key=lambda r: r["hybrid_over_knn"])
    return runs[len(runs) // 2]


def section(result: dict | None) -> list[str]:
    if not result:
        return []
    h, q = result["methods"]["headings"], result["methods"].get("questions", {})
    knn, hy = h["knn"]["scores"]["deep"], h["hybrid chunk"]["scores"]["deep"]
    b, sp = result["build"], median_run(result)
    lines = ["## Full-text and hybrid search", "",
             "Command: `.venv/bin/python tests/benchmarks/bench_hybrid.py` (the manual loaded once through the "
             "DB-API into `body text` + a recursive 256/32 model column, `morphology='stem_en'`; the database is "
             "kept in the temporary folder and reused). "
             f"Speed run {result['when']}, load average {', '.join(f'{x:.1f}' for x in result.get('loadavg', []))} "
             "on the 2 shared cores.", "",
             f"**Heading queries** ({result['queries']}: deep and head as above):", ""]
    lines += quality_table(h, ("deep", "head"))
    lines += ["", f"**Natural-language questions** ({result['questions']}, written by hand about specific passages, "
                  "not using the headings' words: `tests/benchmarks/questions.jsonl`):", ""]
    lines += quality_table(q, ("all",))
    lines += ["", f"Target for the default hybrid form (hybrid_match): deep recall@1 +8 points and MRR +0.07 over knn "
                  f"alone — measured {100 * (hy['recall@1'] - knn['recall@1']):+.1f} points "
                  f"({_pct(knn['recall@1'])} → {_pct(hy['recall@1'])}) and {hy['mrr'] - knn['mrr']:+.3f} "
                  f"({knn['mrr']:.3f} → {hy['mrr']:.3f}).", ""]
    share = b["fulltext_share_of_load"]
    trig = result.get("trigger_cost")
    lines += ["**Speed** (the run with the median hybrid/knn ratio of those below; absolute times are inflated "
              "by the shared machine):", "",
              "| target | measured | |", "|---|---|---|",
              f"| full-text indexes add <= 5% to loading the manual | bulk build of both indexes {b['fulltext_build_seconds']:.2f} s "
              f"of a {b['load_seconds']:.0f} s load = {100 * share:.3f}%"
              + (f"; row-index triggers at insert: {trig['insert_seconds_with_index']:.2f} s vs "
                 f"{trig['insert_seconds_without_index']:.4f} s without, for all 189 pages" if trig else "")
              + f" | {'**met**' if share <= 0.05 else '**not met**'} |",
              f"| MATCH top-10 p50 <= the model's time to embed a short query | {sp['p50_ms']['match']:.1f} ms vs "
              f"{sp['p50_ms']['embed']:.1f} ms ({sp['match_over_embed']:.2f}x) | "
              f"{'**met**' if sp['match_over_embed'] <= 1 else '**not met**'} |",
              f"| hybrid text query p50 <= 1.3x the knn-only text query (embedding included) | hybrid_match "
              f"{sp['p50_ms']['hybrid']:.1f} ms vs knn {sp['p50_ms']['knn']:.1f} ms ({sp['hybrid_over_knn']:.2f}x) | "
              f"{'**met**' if sp['hybrid_over_knn'] <= 1.3 else '**not met**'} |", ""]
    runs = result.get("speed_runs", [])
    if len(runs) > 1:
        lines += ["Speed runs (`.venv/bin/python tests/benchmarks/bench_hybrid.py --speed-only`, "
                  "minutes apart; load average in brackets): " + "; ".join(
            f"hybrid/knn {r['hybrid_over_knn']:.2f}x, MATCH/embed {r['match_over_embed']:.2f}x "
            f"[{', '.join(f'{x:.0f}' for x in (r.get('loadavg') or []))}]" for r in runs) + ".", ""]
    lines += reading(h, q)
    lines += result.get("notes", [])
    return lines


def main() -> None:
    import sections
    sections.write_section("hybrid")


if __name__ == "__main__":
    main()
