"""docs/benchmarks.md: the retrieval-quality section (results/recall.json, recall_stripped.json; bench_recall.py,
bench_ingest.py) and its chart (``make_report.py --chart``)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from report_base import CHART, PY, MANTICORE, pct, num, config_sort, _results  # noqa: E402


def recall_table(recall: dict, ingest: dict | None) -> list[str]:
    s = (ingest or {}).get("summary", {})
    rate = s.get("engine_tokens_per_s")
    measured = {"truncate": s.get("engine_column_seconds", {}).get("v_trunc"),
                "recursive 256/32": s.get("engine_column_seconds", {}).get("v_rec")}
    out = ["| configuration | vectors | model tokens | load (s) | deep r@1 | deep r@5 | deep r@10 | deep MRR "
           "| head r@1 | head r@5 | head r@10 | head MRR |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, c in sorted(recall["configs"].items(), key=lambda kv: config_sort(*kv)):
        d, h = c["scores"]["deep"], c["scores"]["head"]
        if measured.get(name) is not None:
            load = f"{measured[name]:,.0f} (measured)"
        elif rate:
            load = f"~{c['model_tokens'] / rate:,.0f} (est.)"
        else:
            load = "-"
        out.append(f"| {name} | {c['vectors']:,} | {c['model_tokens']:,} | {load} | {pct(d['recall@1'])} | "
                   f"{pct(d['recall@5'])} | {pct(d['recall@10'])} | {d['mrr']:.3f} | {pct(h['recall@1'])} | "
                   f"{pct(h['recall@5'])} | {pct(h['recall@10'])} | {h['mrr']:.3f} |")
    return out


def crosscheck_table(ingest: dict, recall: dict | None) -> list[str]:
    out = ["| | vectors | deep r@1 | deep r@5 | deep r@10 | deep MRR | head r@1 | head r@5 | head r@10 | head MRR |",
           "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def row(label: str, sc: dict, vectors) -> str:
        d, h = sc["deep"], sc["head"]
        return (f"| {label} | {num(vectors)} | {pct(d['recall@1'])} | {pct(d['recall@5'])} | {pct(d['recall@10'])} | "
                f"{d['mrr']:.3f} | {pct(h['recall@1'])} | {pct(h['recall@5'])} | {pct(h['recall@10'])} | {h['mrr']:.3f} |")
    cols = {"truncate": "v_trunc", "recursive 256/32": "v_rec"}
    for name, sc in ingest.get("engine_recall", {}).items():
        out.append(row(f"engine, {name}, knn() through the DB-API", sc, ingest.get("vectors_stored", {}).get(cols[name])))
        if recall and name in recall.get("configs", {}):
            c = recall["configs"][name]
            out.append(row(f"same vectors, exact search (bench_recall)", c["scores"], c["vectors"]))
    if ingest.get("diy_recall"):
        out.append(row("DIY: langchain 256/32 tokens + sentence-transformers + Chroma", ingest["diy_recall"],
                       ingest.get("diy_vectors")))
    return out


def chart(recall: dict, ingest: dict | None) -> bool:
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is missing (pip install -e '.[bench]'): chart not drawn", file=sys.stderr)
        return False
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharex=True)
    styles = {"fixed": ("tab:orange", "s"), "recursive": ("tab:blue", "o"), "sentence": ("tab:green", "^"),
              "truncate": ("tab:red", "D"), "mean": ("tab:purple", "P")}
    configs = recall["configs"]
    for ax, group in zip(axes, ("deep", "head")):
        for strategy, (color, marker) in styles.items():
            for overlap, fill in ((32, True), (0, False)):
                pts = sorted((c["vectors"], c["scores"][group]["recall@5"], c["max_tokens"])
                             for c in configs.values() if c["strategy"] == strategy
                             and (c["overlap"] == overlap or strategy in ("truncate", "mean")))
                if not pts or (strategy in ("truncate", "mean") and overlap == 0):
                    continue
                label = strategy if strategy in ("truncate", "mean") else f"{strategy} /{overlap}"
                ax.plot([p[0] for p in pts], [100 * p[1] for p in pts], marker=marker, color=color,
                        linestyle="-" if fill else ":", markerfacecolor=color if fill else "white", label=label)
                for x, y, m in pts:
                    if m:
                        ax.annotate(str(m), (x, 100 * y), textcoords="offset points", xytext=(4, -10), fontsize=7,
                                    color=color)
        if ingest and ingest.get("diy_recall"):
            ax.plot([ingest.get("diy_vectors", 0)], [100 * ingest["diy_recall"][group]["recall@5"]], marker="*",
                    markersize=12, color="black", linestyle="none", label="DIY 256/32 (Chroma)")
        for name, m in MANTICORE.items():
            key = "deep_r5" if group == "deep" else "head_r5"
            ax.plot([m["vectors"]], [100 * m[key]], marker="x", color="grey", linestyle="none",
                    label="Manticore (older manual)" if name == "truncate" else None)
        ax.set_xscale("log")
        ax.set_xlabel("vectors stored (log)")
        ax.set_ylabel(f"{group} recall@5 (%)")
        ax.set_title(f"{group} queries (n={configs[next(iter(configs))]['scores'][group]['n']})")
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7, loc="lower right")
    fig.suptitle("Manticore manual, 189 pages: recall@5 vs vectors stored (all-MiniLM-L6-v2)", fontsize=10)
    fig.tight_layout()
    CHART.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(CHART, dpi=110)
    return True


def recall_section() -> list[str]:
    ingest, recall, stripped, _ = _results()
    lines: list[str] = []
    if recall:
        lines += ["## Retrieval quality", "",
                  f"Queries: the {recall['queries']:,} section headings that occur once across the manual "
                  f"({recall['deep']:,} deep: the heading starts at or after character 1,200 of its page; "
                  f"{recall['head']:,} head: the rest). A query hits when its page is among the top k pages; MRR is "
                  "over the top 10. Pages are used **as they are, headings included**, like Manticore's write-up, so "
                  "the heading text is in the page it should find. That is the easy half of the task for a chunked "
                  "column (the chunk holding the heading nearly repeats the query) and the hard half for truncate "
                  "(a deep heading is past the window, or drowned in a long page's average).", "",
                  "Vectors are the engine model's (`Model.embed`) on the engine planner's chunks "
                  "(`tesseradb.embed.chunking.plan_chunks`); each page is scored by its best chunk, exactly, as knn() ranks. "
                  "'load' is the engine's measured chunking+embedding time for the two columns bench_ingest loaded, "
                  "otherwise the model tokens divided by the engine's measured load rate.", ""]
        lines += recall_table(recall, ingest) + [""]
        lines += recall_reading(recall)
        if CHART.exists():          # drawn by `make_report.py --chart` (matplotlib, the 'bench' extra)
            lines += ["![recall@5 vs vectors stored](img/recall_vs_vectors.png)", ""]
        if ingest and ingest.get("engine_recall"):
            lines += ["Through the engine itself (bench_ingest: the real `knn(col, 10, ?)`, HNSW at the default ef) "
                      "and the DIY pipeline, same queries:", ""] + crosscheck_table(ingest, recall) + [""]
        lines += manticore_notes(recall)
        lines += left_out(recall) + [""]
    if recall and not stripped:
        lines += [f"Not run here either: `{PY}/bench_recall.py --strip-headings`, the same queries against pages whose "
                  "heading lines are blanked (a harder task, closer to a question whose words are not in the page; "
                  "it embeds every configuration again).", ""]
    if stripped:
        lines += ["### With the heading lines blanked", "",
                  f"`{PY}/bench_recall.py --strip-headings --configs ...`: the same queries against pages whose "
                  "heading lines are blanked, so the heading text no longer appears verbatim.", ""]
        lines += recall_table(stripped, None) + [""]
    return lines


def recall_reading(recall: dict) -> list[str]:
    """A few sentences on what the recall table says, computed from it."""
    c = recall["configs"]
    r5 = {n: v["scores"]["deep"]["recall@5"] for n, v in c.items()}
    h5 = {n: v["scores"]["head"]["recall@5"] for n, v in c.items()}
    out = []
    best = max(r5, key=r5.get)
    out.append(f"- Deep sections need chunks: the best deep recall@5 is {best}'s {pct(r5[best])}"
               + (f", against {pct(r5['truncate'])} for truncate, which sees only the first 510 tokens of a page"
                  if "truncate" in r5 else "") +
               (f", and {pct(r5['mean'])} for mean, whose one vector per page blurs a long page into its average"
                if "mean" in r5 else "") + ".")
    sweep = [n for n in ("recursive 512/0", "recursive 512/32", "recursive 256/32", "recursive 128/32") if n in c]
    if len(sweep) >= 2:
        out.append("- Smaller chunks find deep sections more often, at the price of more vectors: "
                   + " -> ".join(f"{n.split()[1]}: {pct(r5[n])} ({c[n]['vectors']:,} vectors)" for n in sweep) + ".")
    at256 = [n for n in ("fixed 256/32", "recursive 256/32", "sentence 256/32") if n in c]
    if len(at256) >= 2:
        out.append("- At 256/32 the three splitters are within a point or two of each other: "
                   + ", ".join(f"{n.split()[0]} {pct(r5[n])}" for n in at256) + " deep recall@5.")
    if "truncate" in h5:
        others = [n for n in h5 if n != "truncate"]
        if others:
            out.append(f"- Head queries (a heading in a page's first 1,200 characters) are truncate's ground: "
                       f"{pct(h5['truncate'])} head recall@5, against {pct(min(h5[n] for n in others))} to "
                       f"{pct(max(h5[n] for n in others))} for the others; a page's opening is in its one vector, "
                       "while a chunked page competes with every chunk of every other page.")
    return out + [""]


def manticore_notes(recall: dict) -> list[str]:
    c = recall["configs"]
    out = ["Manticore's write-up (an older copy of this manual, 4,664 vectors for recursive 256/32): deep recall@5 "
           "55.1% truncate -> 83.3% recursive 256/32, MRR 0.44 -> 0.70; head 86.4% for both."]
    if "truncate" in c and "recursive 256/32" in c:
        t, r = c["truncate"]["scores"], c["recursive 256/32"]["scores"]
        out[0] += (f" Here: deep recall@5 {pct(t['deep']['recall@5'])} -> {pct(r['deep']['recall@5'])}, MRR "
                   f"{t['deep']['mrr']:.2f} -> {r['deep']['mrr']:.2f}; head {pct(t['head']['recall@5'])} -> "
                   f"{pct(r['head']['recall@5'])}, with {c['recursive 256/32']['vectors']:,} vectors.")
    return out + [""]


def left_out(recall: dict) -> list[str]:
    grid = ["truncate", "mean"] + [f"{s} {m}/{o}" for s in ("fixed", "recursive", "sentence")
                                   for m in (128, 256, 512) for o in (0, 32)]
    missing = [g for g in grid if g not in recall["configs"]]
    if not missing:
        return ["All 20 configurations of the grid were run."]
    done = len(grid) - len(missing)
    return [f"**Not run here:** {', '.join(missing)}. Each configuration embeds one to one and a half million "
            "model tokens. The first seven ran while other work loaded the 2 cores (load average 4 to 10: 700 to "
            "1,500 tokens/s, 15 to 25 minutes each); the machine then went quiet (about 6,600 tokens/s, 3 minutes "
            f"each) and {done - 7} more ran before the time set aside for benchmarks was used up. The "
            f"{len(missing)} left would take about {3 * len(missing)} minutes on a quiet machine. Those run were "
            "chosen as the most telling: the default, the mean, each strategy at 256/32, the size sweep, and "
            "overlap 0 vs 32. `recursive 512/0` has exactly the chunks `mean` averages (512 is clamped to the "
            "510-token window; mean splits with overlap 0), so it cost nothing extra. To run the rest: "
            f"`{PY}/bench_recall.py --grid` (chunks already in the cache are not embedded again)."]
