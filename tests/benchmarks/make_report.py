"""docs/benchmarks.md and its chart, from the results the benchmarks wrote.

    .venv/bin/python tests/benchmarks/make_report.py

Reads tests/benchmarks/results/{ingest,recall,recall_stripped,query}.json (whatever exists) and
writes docs/benchmarks.md and docs/img/recall_vs_vectors.png (matplotlib, from the 'bench' extra).
Nothing is measured here; rerun the benchmarks to refresh the figures (commands in the page).
"""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
import report_hybrid  # noqa: E402
import report_hybrid_peers  # noqa: E402
import report_int8  # noqa: E402
import report_speed  # noqa: E402
import report_chunk_reuse  # noqa: E402
import report_markdown  # noqa: E402
import report_sync  # noqa: E402
import report_mcp  # noqa: E402

DOCS = common.REPO / "docs"
PAGE = DOCS / "benchmarks.md"
CHART = DOCS / "img" / "recall_vs_vectors.png"
PY = ".venv/bin/python tests/benchmarks"
ORDER = {"truncate": 0, "mean": 1, "fixed": 2, "recursive": 3, "sentence": 4}

# Manticore's published figures (shared/MANTICORE_NOTES.md section 7), on an older copy of the manual.
MANTICORE = {"truncate": {"deep_r5": 0.551, "deep_mrr": 0.44, "head_r5": 0.864, "vectors": 189},
             "recursive 256/32": {"deep_r5": 0.833, "deep_mrr": 0.70, "head_r5": 0.864, "vectors": 4664}}


def pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def num(x: float | None, fmt: str = ",.0f") -> str:
    return "-" if x is None else format(x, fmt)


def mib(b: float | None) -> str:
    return "-" if b is None else f"{b / 2**20:.1f} MiB"


def config_sort(name: str, c: dict) -> tuple:
    return ORDER.get(c["strategy"], 9), c["max_tokens"], c["overlap"]


def verdict(ok: bool | None) -> str:
    return "not measured" if ok is None else ("**met**" if ok else "**not met**")


def notes() -> dict:
    """results/notes.json: what the person who ran the benchmarks recorded about a run (kept with it)."""
    import json
    path = common.RESULTS / "notes.json"
    return json.loads(path.read_text()) if path.exists() else {}


def bare_ratio(ingest: dict) -> dict | None:
    """Engine vs bare model tokens/s on the slices where both ran, without the slices notes.json excludes.

    The engine's index build and close are charged to those slices by their share of the tokens."""
    excluded = {int(k) for k in notes().get("ingest", {}).get("exclude_bare_slices", {})}
    rows = [(i, r) for i, r in enumerate(ingest["per_slice"], start=1) if "bare" in r and i not in excluded]
    if not rows:
        return None
    s = ingest["summary"]
    tok = sum(sum(r["tokens"].values()) for _, r in rows)
    extra = (s["engine_index_build_seconds"] + s["engine_close_seconds"]) * tok / s["tokens"]
    eng = sum(r["engine"] for _, r in rows) + extra
    bare = sum(r["bare"] for _, r in rows)
    return {"slices": [i for i, _ in rows], "tokens": tok, "engine_s": eng, "bare_s": bare,
            "engine_tps": tok / eng, "bare_tps": tok / bare, "ratio": bare / eng,
            "model_only_ratio": bare / sum(r["engine_model"] for _, r in rows), "excluded": sorted(excluded)}


# -- sections ---------------------------------------------------------------------------------------
def targets(ingest: dict | None, recall: dict | None, query: dict | None) -> list[str]:
    s = (ingest or {}).get("summary", {})
    rows = []
    br = bare_ratio(ingest) if ingest else None
    share = s["engine_model_seconds"] / s["engine_load_seconds"] if s else None
    rows.append(("Ingest: engine >= 0.9x the bare model's tokens/s on the same chunks (its own work <= 10%)",
                 (f"{share:.3f}x: the model was {100 * share:.1f}% of the engine's load time, the engine's own work "
                  f"{100 * (1 - share):.1f}%" + (f"; interleaved against the bare model: {br['ratio']:.2f}x (slices "
                  f"{', '.join(map(str, br['slices']))})" if br else "")) if share else "-",
                 verdict(None if share is None else share >= 0.9),
                 f"{PY}/bench_ingest.py"))
    d = s.get("engine_vs_diy_pages")
    rows.append(("Ingest: engine >= 2x the DIY pipeline's pages/s",
                 f"{d:.2f}x (recursive column alone: {s.get('engine_rec_only_vs_diy_pages', 0):.2f}x)" if d else "-",
                 verdict(None if d is None else d >= 2), f"{PY}/bench_ingest.py"))
    m = (query or {}).get("manual", {}).get("v_rec")
    rows.append(("Query: text knn p50 <= 5 ms end to end on the manual (embedding included)",
                 f"{m['first']['p50']:.1f} ms (cached repeats {m['cached']['p50']:.2f} ms)" if m else "-",
                 verdict(None if not m else m["first"]["p50"] <= 5), f"{PY}/bench_query.py"))
    ann = (query or {}).get("ann", {})
    big = ann.get("1000000")
    if big:
        ok = big["search"]["p50"] <= 1 and big["recall@10"] >= 0.95
        rows.append(("ANN step <= 1 ms at 1M vectors, recall@10 >= 0.95",
                     f"p50 {big['search']['p50']:.2f} ms, recall@10 {big['recall@10']:.3f}", verdict(ok),
                     f"{PY}/bench_query.py --sizes 1000000"))
    else:
        h = ann.get("100000")
        got = f"not run at 1M (see below); at 100k: p50 {h['search']['p50']:.2f} ms, recall@10 {h['recall@10']:.3f}" if h else "-"
        rows.append(("ANN step <= 1 ms at 1M vectors, recall@10 >= 0.95", got, verdict(None),
                     f"{PY}/bench_query.py --sizes 1000000"))
    rec = (recall or {}).get("configs", {}).get("recursive 256/32")
    r5 = rec["scores"]["deep"]["recall@5"] if rec else None
    rows.append(("Recall: recursive 256/32 deep recall@5 >= 78%", pct(r5), verdict(None if r5 is None else r5 >= 0.78),
                 f"{PY}/bench_recall.py"))
    diy = (ingest or {}).get("diy_recall")
    eng = (ingest or {}).get("engine_recall", {}).get("recursive 256/32")
    if diy and eng:
        a, b = eng["deep"]["recall@5"], diy["deep"]["recall@5"]
        rows.append(("Recall: at least the DIY pipeline's at equal chunk size (256 tokens)",
                     f"deep recall@5 {pct(a)} vs {pct(b)}; MRR {eng['deep']['mrr']:.3f} vs {diy['deep']['mrr']:.3f}",
                     verdict(a >= b) if (a >= b) == (eng["deep"]["mrr"] >= diy["deep"]["mrr"]) else
                     f"**met on recall@5, not on MRR / recall@1** ({pct(eng['deep']['recall@1'])} vs "
                     f"{pct(diy['deep']['recall@1'])})", f"{PY}/bench_ingest.py"))
    hwm = (ingest or {}).get("engine_hwm_mib")
    mem = (common.load_result("memory") or {}).get("runs", {})
    extra = "; ".join(f"{k}: {v['peak_rss_mib']:.0f} MiB" for k, v in mem.items())
    rows.append(("Memory: loading the manual under 1 GB peak RSS",
                 (f"{hwm:.0f} MiB (bench_ingest)" if hwm else "-") + (f"; bench_memory {extra}" if extra else ""),
                 verdict(None if hwm is None else hwm < 1024), f"{PY}/bench_ingest.py, {PY}/bench_memory.py"))
    out = ["| target | measured | | command |", "|---|---|---|---|"]
    out += [f"| {a} | {b} | {c} | `{d}` |" for a, b, c, d in rows]
    return out


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


def ingest_section(ingest: dict) -> list[str]:
    s = ingest["summary"]
    cols = s["engine_column_seconds"]
    other = s["engine_slices_seconds"] - s["engine_model_seconds"]
    out = [
        "| system | what it did | seconds | model tokens/s | pages/s | vectors |",
        "|---|---|---:|---:|---:|---:|",
        f"| engine | 189 pages into a truncate + a recursive 256/32 column, indexes built and saved | "
        f"{s['engine_load_seconds']:,.0f} | {s['engine_tokens_per_s']:,.0f} | {s['engine_pages_per_s']:.3f} | "
        f"{sum(ingest['vectors_stored'].values()):,} |",
    ]
    br = bare_ratio(ingest)
    if br:
        out.append(f"| bare model, same process | `Model.embed` of the same chunk strings, slices "
                   f"{', '.join(map(str, br['slices']))} ({br['tokens']:,} of {s['tokens']:,} tokens) | "
                   f"{br['bare_s']:,.0f} | {br['bare_tps']:,.0f} | - | - |")
        if br["tokens"] < s["tokens"]:
            out.append(f"| engine on those same slices | index build and close charged by token share | "
                       f"{br['engine_s']:,.0f} | {br['engine_tps']:,.0f} | - | - |")
    if s.get("diy_seconds"):
        out.append(f"| DIY | langchain split 256/32 tokens, sentence-transformers (PyTorch CPU), Chroma add | "
                   f"{s['diy_seconds']:,.0f} | {s['diy_tokens_per_s']:,.0f} | {s['diy_pages_per_s']:.3f} | "
                   f"{s['diy_chunks']:,} |")
    out += ["", "Where the engine's time went:", "",
            "| part | seconds | share |", "|---|---:|---:|"]
    total = s["engine_load_seconds"]
    parts = [("model (`Model.embed` inside the engine)", s["engine_model_seconds"]),
             ("tokenizing for the planner, chunk planning, SQLite rows, commit (which catches the FAISS indexes up)",
              other),
             ("first knn() of each column (index build left for it)", s["engine_index_build_seconds"]),
             ("close (index files written)", s["engine_close_seconds"])]
    out += [f"| {a} | {b:,.1f} | {100 * b / total:.1f}% |" for a, b in parts]
    out += ["", f"Per column (chunk planning + embedding): truncate {cols['v_trunc']:,.0f} s, "
                f"recursive 256/32 {cols['v_rec']:,.0f} s."]
    if s.get("diy_seconds"):
        out += [f"DIY split {s['diy_split_seconds']:.1f} s, encode {s['diy_encode_seconds']:,.0f} s, "
                f"Chroma add {s['diy_add_seconds']:.1f} s."]
    if br:
        out += ["", f"Engine vs bare model on those slices: **{br['ratio']:.2f}x** the bare model's tokens/s; the model "
                    f"calls inside the engine alone ran at {br['model_only_ratio']:.2f}x the bare calls (the same work: the "
                    "difference is the machine's load at the time)."]
        for k, why in notes().get("ingest", {}).get("exclude_bare_slices", {}).items():
            out += [f"Slice {k}'s bare-model time is left out of the ratio: {why}"]
    chk = ingest.get("stored_vs_bare", {})
    if chk:
        out += ["", "Same chunks: " + "; ".join(
            f"{c}: {v['compared']:,} vectors compared, counts equal {v['same_count']}, max |stored - bare| "
            f"{v['max_abs_diff']}" for c, v in chk.items()) + "."]
    out += ["", "Per slice (seconds; the order rotates; load average when the slice started):", "",
            "| slice | pages | tokens | order | engine | bare | DIY | load avg |", "|---:|---:|---:|---|---:|---:|---:|---|"]
    for i, r in enumerate(ingest["per_slice"], start=1):
        out.append(f"| {i} | {r['pages']} | {sum(r['tokens'].values()):,} | {', '.join(r['order'])} | {r['engine']:,.0f} | "
                   f"{num(r.get('bare'))} | {num(r['diy']['seconds']) if 'diy' in r else '-'} | "
                   f"{' '.join(str(x) for x in r['loadavg'])} |")
    return out


def query_section(query: dict, ingest: dict | None) -> list[str]:
    out = []
    m = query.get("manual")
    if m:
        out += [f"Through the DB-API on the loaded manual ({m['queries']} headings; cached = 3 repeats each):", "",
                "| column | vectors | first: p50 / p99 ms | cached: p50 / p99 ms | model alone p50 ms | ANN alone p50 ms |",
                "|---|---:|---:|---:|---:|---:|"]
        for col, label in (("v_rec", "recursive 256/32"), ("v_trunc", "truncate")):
            if col in m:
                c = m[col]
                out.append(f"| {label} | {c['vectors']:,} | {c['first']['p50']:.2f} / {c['first']['p99']:.2f} | "
                           f"{c['cached']['p50']:.2f} / {c['cached']['p99']:.2f} | {c['model_alone']['p50']:.2f} | "
                           f"{c['ann_alone']['p50']:.3f} |")
        if ingest and ingest.get("diy_query_ms"):
            d = ingest["diy_query_ms"]
            out += ["", f"DIY (sentence-transformers encode + Chroma query of 100 chunks + folding), every heading once: "
                        f"p50 {d['p50']:.1f} ms, p99 {d['p99']:.1f} ms."]
    ann = query.get("ann")
    if ann:
        out += ["", "The ANN step alone (`VectorIndex.search`, k=10, default ef; clustered 384-dim vectors):", "",
                "| vectors | build | ef | p50 ms | p99 ms | recall@10 vs exact |", "|---:|---|---:|---:|---:|---:|"]
        for n, a in sorted(ann.items(), key=lambda kv: int(kv[0])):
            b = a["build"]
            build = f"{b['seconds']:,.0f} s ({b['vectors_per_s']:,.0f}/s)" if isinstance(b, dict) else "an earlier run's"
            out.append(f"| {int(n):,} | {build} | {a['plan']['ef']} | {a['search']['p50']:.3f} | {a['search']['p99']:.3f} | "
                       f"{a['recall@10']:.3f} |")
    return out


def main() -> None:
    ingest, recall = common.load_result("ingest"), common.load_result("recall")
    stripped, query = common.load_result("recall_stripped"), common.load_result("query")
    lines = ["# Benchmarks", "",
             "<!-- Generated by tests/benchmarks/make_report.py from tests/benchmarks/results/*.json; edit the script,",
             "     not this page. -->", "",
             "Three questions decide a retrieval engine: does the right document come back, how long does loading "
             "take, how fast does a query answer. The benchmarks below measure them on Manticore Search's English "
             "manual (189 markdown pages, 976k model tokens), which is read at run time from the folder "
             "`TESSERA_BENCH_CORPUS` names and never copied here (`bash scripts/get_bench_corpus.sh DEST` clones it "
             "on a machine with internet). In the commands and notes below, `$MANUAL` stands for that folder and "
             "`$SCRATCH` for a scratch folder under the system's temporary directory (`tempfile.gettempdir()`). Every figure on this page comes from the JSON files in "
             "`tests/benchmarks/results/`, written by the commands below.", "",
             "## Commands", "",
             "```sh",
             ".venv/bin/pip install -e '.[bench]'                     # PyTorch CPU, sentence-transformers, langchain, Chroma, matplotlib",
             f"{PY}/bench_ingest.py                   # ingest: engine vs bare model vs DIY; memory; recall via the DB-API",
             f"{PY}/bench_recall.py                   # recall per chunking configuration (--grid: all 20)",
             f"{PY}/bench_query.py --sizes 100000,1000000   # query latency: the manual, the ANN step at 100k and 1M",
             f"{PY}/bench_memory.py                   # peak RSS over time while the engine loads the manual",
             f"{PY}/bench_index_build.py              # index catch-up: read_vectors as shipped vs one blob read per page",
             f"{PY}/bench_quantize.py --recall        # int8 candidates of the model: speed, vectors, recall",
             f"{PY}/bench_chunk_reuse.py              # chunk reuse: re-sync, MODIFY COLUMN, knn_chunk_text() cost",
             f"{PY}/bench_markdown.py --subset questions   # markdown vs recursive: heading queries, questions, load, knn_chunk_section() cost",
             f"{PY}/bench_quantize_index.py --sizes 100000,1000000   # quantized indexes: memory, build, latency, recall",
             f"{PY}/bench_int8.py --ingest-every 3   # the int8 model: speed, engine ingest vs float32",
             f"{PY}/bench_int8.py --no-speed --recall --out int8_recall   # its recall (embeds the manual)",
             f"{PY}/bench_int8.py --no-speed --ingest-every 6 --out int8_ingest_quieter   # a second ingest run",
             f"{PY}/bench_int8.py --no-speed --ingest-every 3 --out int8_ingest_3   # a third",
             f"{PY}/bench_int8.py --no-speed --ingest-every 3 --out int8_ingest_quiet   # a fourth, quieter",
             f"{PY}/bench_memory.py --big-document 20   # one 20 MB document with max_chunks",
             f"{PY}/bench_ray_ingest.py --every 6 --workers 1,2   # Ray ingest (tessera embed's pipeline) per worker",
             f"{PY}/bench_mcp.py                      # tessera mcp: search over stdio vs in-process",
             f"{PY}/make_report.py                               # this page and its chart",
             "```", "",
             "Vectors and the loaded database are kept in `~/.cache/tesseradb-bench` (`TESSERA_BENCH_CACHE`): "
             "bench_recall embeds each distinct chunk once across configurations and runs, and bench_query uses "
             "the database bench_ingest loaded. The benchmarks are not collected by pytest.", ""]
    if ingest or recall or query:
        mach = (ingest or recall or query)["machine"]
        lines += ["## The machine", "",
                  f"{mach.get('cpus')} cores ({mach.get('cpu', '?')}), Python {mach.get('python')}, onnxruntime "
                  f"{mach.get('onnxruntime', '?')}"
                  + (f"; PyTorch {ingest['diy_init']['torch']}, sentence-transformers "
                     f"{ingest['diy_init']['sentence_transformers']}, Chroma {ingest['diy_init']['chromadb']}"
                     if ingest and ingest.get("diy_init") else "") + ".", "",
                  "**Read the absolute times with care.** The runs shared the 2 cores with other work (the load "
                  "averages are recorded with every figure; they were far above 2), so the seconds and milliseconds "
                  "here are slower and noisier than on an idle machine. The ratios are sturdier: the three ingest "
                  "systems ran interleaved, slice by slice in a rotating order, so the load fell on all of them "
                  "alike.", ""]
    lines += ["## Targets", ""] + targets(ingest, recall, query) + [""]
    if recall:
        drew = chart(recall, ingest)
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
        if drew:
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
    if ingest:
        every = ingest.get("bare_every", 1)
        lines += ["## Ingest", "", f"`{PY}/bench_ingest.py" + (f" --bare-every {every}`" if every != 1 else "`"), "",
                  "The engine (executemany of 189 rows per slice + commit, then the FAISS indexes, then close) against "
                  "the bare model embedding exactly the chunk strings the engine embedded, in the same process on the "
                  "same model object, and against the pipeline a user would otherwise write, in a child process. "
                  f"Pages were dealt into {ingest['slices']} slices of similar size; each slice ran all systems in a "
                  "rotating order (`--bare-every 2` runs the bare model on every other slice only, to save time; the "
                  "ratio then compares the engine and the model on those slices). Model tokens = content tokens cut "
                  "to the window + [CLS]/[SEP].", ""]
        if notes().get("ingest", {}).get("run"):
            lines += ["How this run was made: " + notes()["ingest"]["run"], ""]
        lines += ingest_section(ingest) + [""]
        lines += ["## Memory and disk", "",
                  f"Peak RSS of the process that loaded the manual (VmHWM; it also ran the bare-model slices, on the "
                  f"same model session): **{ingest['engine_hwm_mib']:.0f} MiB** "
                  f"({ingest['hwm_before_load_mib']:.0f} MiB before the load, model session ready). "
                  f"The DIY worker peaked at {num(ingest.get('diy_hwm_mib'))} MiB.", "",
                  f"On disk after loading: SQLite file {mib(ingest['disk_bytes']['sqlite'])} (page text, vectors, "
                  f"chunk rows), index files {mib(ingest['disk_bytes']['indexes'])}"
                  + (f"; Chroma's directory {mib(ingest.get('diy_disk_bytes'))}." if ingest.get("diy_disk_bytes") else "."),
                  ""]
    if query:
        lines += ["## Query latency", "", f"`{PY}/bench_query.py --sizes 100000,1000000`", ""] + query_section(query, ingest) + [""]
    lines += report_chunk_reuse.section()
    lines += report_speed.section()
    lines += report_int8.section()
    lines += report_hybrid.section(common.load_result("hybrid")) + [""]
    lines += report_hybrid_peers.section(common.load_result("hybrid_peers")) + [""]
    lines += report_markdown.section()
    lines += report_mcp.section()
    lines += engine_notes(ingest, query)
    lines += [""] + report_sync.section()
    PAGE.write_text("\n".join(lines).rstrip() + "\n")
    print(f"wrote {PAGE}" + (f" and {CHART}" if CHART.exists() else ""))


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


def engine_notes(ingest: dict | None, query: dict | None) -> list[str]:
    """Where the time and memory go, from the results of the probes that measured them."""
    out = ["## Where the time and memory go", ""]
    s = (ingest or {}).get("summary", {})
    quant = common.load_result("quantize")
    if s.get("diy_seconds"):
        out += [f"- **Ingest vs DIY.** The model is {100 * s['engine_model_seconds'] / s['engine_load_seconds']:.1f}% "
                "of the engine's load time, so the engine can only be as much faster than the DIY pipeline as its "
                "ONNX graph is faster than sentence-transformers on PyTorch: here "
                f"{s['engine_tokens_per_s'] / s['diy_tokens_per_s']:.2f}x in tokens/s. Twice the DIY pages/s needs a "
                "faster model, not a leaner engine. Most of the engine's own share is the index catch-up at "
                "commit (`read_vectors`, below)."]
    if quant:
        v = quant["variants"]
        out += ["  `bench_quantize.py` measured what int8 weights (onnxruntime dynamic quantization of the fused "
                "graph) would give on recursive 256/32 chunks:", "",
                "  | variant | tokens/s | speed-up | cosine to float32: mean / min |", "  |---|---:|---:|---:|"]
        out[-1] = "  |---|---:|---:|---:|---:|"
        out[-2] += " recursive 256/32 deep recall@5 / MRR |"
        base = common.load_result("recall") or {}
        ref = base.get("configs", {}).get("recursive 256/32", {}).get("scores", {}).get("deep")

        def rec(n: str, x: dict) -> str:
            sc = x.get("recall_recursive_256_32", {}).get("deep") or (ref if n.startswith("float32") else None)
            return f"{pct(sc['recall@5'])} / {sc['mrr']:.3f}" if sc else "-"
        out += [f"  | {n} | {x['tokens_per_s']:,.0f} | {x['speedup']:.2f}x | {x['cos_mean']:.4f} / {x['cos_min']:.4f} | "
                f"{rec(n, x)} |" for n, x in v.items()]
        out += ["", "  The recall of both int8 variants on the manual is within noise of float32's, even though "
                "quantizing the fused attention too moves single vectors visibly (cosine down to about 0.9): ranking "
                "pages survives it. With the DIY pipeline unchanged, the engine's pages/s would scale by about the "
                "speed-up, which is what reaching 2x the DIY pipeline needs. Vectors stored with float32 and int8 "
                "differ, so this would be a separate model (its own fingerprint), chosen per column, not a silent "
                "change of the default."]
        if notes().get("quantize", {}).get("run"):
            out += ["", "  " + notes()["quantize"]["run"]]
    m = (query or {}).get("manual", {}).get("v_rec")
    if m:
        rest = m["cached"]["p50"] - m["ann_alone"]["p50"]
        out += ["", f"- **Query latency on the manual** (recursive 256/32, p50): {m['first']['p50']:.1f} ms = the query's "
                f"embedding (model alone {m['model_alone']['p50']:.1f} ms) + the ANN step "
                f"({m['ann_alone']['p50']:.2f} ms, the exact path over {m['vectors']:,} vectors) + about "
                f"{rest:.1f} ms of statement work and SQLite (cached repeats: no model). Since issue 17 the ANN step "
                "rescores in float64 only the chunks whose own float32 distance is near the cut "
                "(`storage/ranking.py` `near_cut`), not every chunk of every document near it; a repeated SQL text is "
                "parsed and planned once per connection (`engine/sql/statement_cache.py`), each execute binding its "
                "parameters and rebuilding only the knn() request; and a vector written as a literal is lifted into a "
                "parameter before sqlglot sees it (`grammar/literals.py`)."]
    ib = common.load_result("index_build")
    if ib:
        a, b = ib["variants"]["shipped"]["v_rec"], ib["variants"]["blob once per document"]["v_rec"]
        out += ["", f"- **Index build** (`bench_index_build.py`): the recursive column's first catch-up took "
                f"{a['catch_up_seconds']:.2f} s, {a['read_vectors_seconds']:.2f} s of it in `storage/chunks.py` "
                "`read_vectors`, whose join reads a document's whole vector blob once per chunk (quadratic in the "
                f"chunks of a page; the changelog has hundreds). Reading each blob once: {b['catch_up_seconds']:.2f} s "
                f"({b['read_vectors_seconds']:.2f} s in read_vectors)."]
    mem = (common.load_result("memory") or {}).get("runs", {})
    if mem:
        out += ["", "- **Memory** (`bench_memory.py`, RSS sampled every 20 ms; peak per stage):", "",
                "  | run | pages | tokens | before | peak | peak during | index build |", "  |---|---:|---:|---:|---:|---|---:|"]
        out += [f"  | {k} | {v['pages']} | {v['tokens']:,} | {v['before_mib']:.0f} MiB | {v['peak_rss_mib']:.0f} MiB | "
                f"{v['peak_stage']} | {num(v['peak_by_stage_mib'].get('index build (first knn)'))} MiB |"
                for k, v in mem.items() if "pages" in v]
        out += [f"- **One {v['megabytes']:.0f} MB document** with max_chunks (`bench_memory.py --big-document "
                f"{v['megabytes']:.0f}`): RSS grew {v['growth_mib']:.0f} MiB ({v['before_mib']:.0f} -> "
                f"{v['peak_rss_mib']:.0f} MiB), {v['vectors']} vectors, load average {v['loadavg'][0]:.0f}; "
                f"warning: {v['warnings'][0]}" for k, v in mem.items() if "megabytes" in v]
        note = notes().get("memory", {}).get("diagnosis")
        if note:
            out += ["", "  " + note]
    return out + [""]


if __name__ == "__main__":
    main()
