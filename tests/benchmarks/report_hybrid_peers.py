"""The "Hybrid search against LanceDB, reranking, MMR, length penalty" section of docs/benchmarks.md,
from results/hybrid_peers.json (bench_hybrid_peers.py).

    .venv/bin/python tests/benchmarks/report_hybrid_peers.py    # rewrites the section between its markers

sections.py calls :func:`section` when it writes the whole page.
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

PAGE = common.REPO / "docs" / "benchmarks.md"
ORDER = ["knn", "hybrid_match old defaults", "hybrid_match no heading field", "hybrid_match", "hybrid_match rrf",
         "hybrid_match rank_constant=20", "hybrid_match window_size=100", "lancedb hybrid", "knn mmr 0.5",
         "knn length_penalty 0.25"]
LABELS = {"knn": "knn() alone",
          "hybrid_match old defaults": "hybrid_match, previous release's defaults (rebuilt from its parts)",
          "hybrid_match no heading field": "hybrid_match, this release without the heading field (linear, min-max; "
                                           "rebuilt from its parts)",
          "hybrid_match": "**hybrid_match** (this release's defaults: heading field, linear, min-max)",
          "hybrid_match rrf": "hybrid_match, RRF k=60 (`fusion_method='rrf'`)",
          "hybrid_match rank_constant=20": "hybrid_match, RRF k=20",
          "hybrid_match window_size=100": "hybrid_match, window_size=100",
          "lancedb hybrid": "**LanceDB** hybrid (its FTS + RRF, same chunks and vectors)",
          "knn mmr 0.5": "knn {mmr=0.5}", "knn length_penalty 0.25": "knn {length_penalty=0.25}"}


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _table(methods: dict, groups: list[tuple[str, str]]) -> list[str]:
    head = "| method | " + " | ".join(f"{label} r@1 | {label} r@5 | {label} MRR" for _, label in groups) + " |"
    out = [head, "|---|" + "---:|" * (3 * len(groups))]
    for name in [n for n in ORDER if n in methods]:
        s = methods[name]["scores"]
        cells = " | ".join(f"{_pct(s[g]['recall@1'])} | {_pct(s[g]['recall@5'])} | {s[g]['mrr']:.3f}" for g, _ in groups)
        errors = f" ({methods[name]['errors']} errors)" if methods[name].get("errors") else ""
        out.append(f"| {LABELS[name]}{errors} | {cells} |")
    return out


def _verdict(methods: dict, group: str) -> str:
    ours, lance, old = (methods[m]["scores"][group] for m in ("hybrid_match linear", "lancedb hybrid",
                                                                "hybrid_match old defaults"))

    def word(a: float, b: float) -> str:
        return "ahead" if a > b + 1e-9 else ("level" if abs(a - b) <= 1e-9 else "behind")
    return (f"hybrid_match {_pct(ours['recall@1'])} / {ours['mrr']:.4f} against LanceDB {_pct(lance['recall@1'])} / "
            f"{lance['mrr']:.4f} (r@1 / MRR): **{word(ours['recall@1'], lance['recall@1'])} on recall@1, "
            f"{word(ours['mrr'], lance['mrr'])} on MRR**; "
            f"{100 * (ours['recall@1'] - old['recall@1']):+.1f} points r@1 over the previous defaults "
            f"({_pct(old['recall@1'])})")


def _synthetic(s: dict) -> list[str]:
    rows = ["| knn on the synthetic corpus | long document in the top 10 | long document first | recall@1 | MRR |",
            "|---|---:|---:|---:|---:|"]
    for name in ("without", "length_penalty 0.25", "length_penalty 1"):
        r = s[name]
        rows.append(f"| {name} | {_pct(r['long_in_top10'])} | {_pct(r['long_first'])} | "
                    f"{_pct(r['scores']['recall@1'])} | {r['scores']['mrr']:.3f} |")
    return [f"Synthetic corpus (markdown-vault-mcp's case): one document of {s['long_document_chunks']} chunks "
            f"(64-token recursive chunks of manual text) among {s['short_documents']} one-chunk pages' openings; "
            f"each query is a short page's first heading, its answer that page. Its fair share of a top 10 is "
            f"{_pct(s['fair_share_top10'])} of the queries.", ""] + rows + [""]


def section(result: dict | None) -> list[str]:
    """The tables and the synthetic and rerank figures come from the run's numbers; what the person who
    ran it wrote about the run (its command and corpus, the reading of the tables, the rerank run's
    circumstances) is kept with them in results/hybrid_peers.json under ``page``."""
    if not result:
        return []
    text = result.get("page", {})
    lines = ["## Hybrid search against LanceDB, reranking, MMR, length penalty", ""]
    if "methods" in result:
        q, h = result["methods"]["questions"], result["methods"]["headings"]
        lines += [*text.get("run", []), "",
                  f"**Natural-language questions** ({result['questions']}: deep = {result['deep_questions']} written "
                  "against a passage past the page's first 1,200 characters, page and offset in "
                  "`tests/benchmarks/questions.jsonl`; earlier = the 50 of the previous set, no offset):", ""]
        lines += _table(q, [("deep", "deep"), ("head", "earlier"), ("all", "all")])
        deep = h["knn"]["scores"]["deep"]["n"]
        lines += ["", f"**Heading queries** ({result['headings']:,}" + (
            f", every {result['headings_every']}th of bench_recall's" if result.get("headings_every", 1) > 1
            else ", every heading of bench_recall's") + f"; deep = {deep:,} past 1,200 characters):", ""]
        lines += _table(h, [("deep", "deep"), ("head", "head"), ("all", "all")])
        lines += ["", *text.get("reading", []), ""]
    if "synthetic_length" in result:
        lines += [text.get("synthetic_command", ""), ""]
        lines += _synthetic(result["synthetic_length"])
    if "rerank_speed" in result:
        lines += ["Reranking 50 candidates (`--extras`: the cross-encoder scoring 50 (question, ~256-token manual "
                  "passage) pairs; random-weight BERTs of each published shape, built by tests/vectors/cross_encoder.py — "
                  "the time does not depend on the weights):", "",
                  "| cross-encoder size | questions | p50 for 50 candidates | load once | load average |",
                  "|---|---:|---:|---:|---|"]
        for name, r in result["rerank_speed"].items():
            lines.append(f"| {name} | {r['queries']} | {r['p50_ms']:,.0f} ms | {r['load_ms']:,.0f} ms | "
                         f"{', '.join(f'{x:.1f}' for x in r.get('loadavg', []))} |")
        lines += ["", *text.get("rerank", [])]
    return lines


def main() -> None:
    import sections
    sections.write_section("hybrid-peers")


if __name__ == "__main__":
    main()
