"""docs/benchmarks.md sections for issue 17's items 2, 3 and 5: the int8 model (bench_int8.py), memory
(bench_memory.py, the whole manual and one 20 MB document), Ray ingest per worker (bench_ray_ingest.py)."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _load(avg) -> str:
    return " ".join(f"{x:g}" for x in avg) if avg else "?"


def _recorded_float32() -> dict:
    configs = (common.load_result("recall") or {}).get("configs", {})
    return configs.get("recursive 256/32", {}).get("scores", {})


def int8_section(r: dict | None) -> list[str]:
    if not r:
        return []
    out = ["## int8 model", "",
           f"`{PY}/bench_int8.py --recall --ingest-every 3`: the shipped `all-MiniLM-L6-v2-int8` "
           "(onnxruntime `quantize_dynamic` of the fused float32 graph, every operator; docs/models.md) against "
           "float32, same chunks, same process, the order alternating.", ""]
    made = r.get("made_with") or {}
    if made:
        from tesseradb.embed import int8
        shipped = [part for part, fp in made.items() if fp == int8.FINGERPRINT]
        older = [part for part, fp in made.items() if fp != int8.FINGERPRINT]
        if older:
            out += [f"Made with the shipped recipe (version {int8.QUANT_VERSION}, [models.md](models.md#the-int8-variant)): "
                    f"{', '.join(shipped) or 'none'}. Made with an earlier recipe (another fingerprint: per-tensor "
                    f"weights, batches of many texts): {', '.join(older)}; "
                    "[the int8 model's CPU per token](#the-int8-models-cpu-per-token-issue-37) compares the two.", ""]
    sp = r.get("speed")
    if sp:
        t = sp["tokens_per_s"]
        out += ["| model | tokens/s | speed-up | cosine to float32: mean / min |", "|---|---:|---:|---:|",
                f"| float32 | {t['float32']:,.0f} | 1.00x | 1.0000 / 1.0000 |",
                f"| int8 | {t['int8']:,.0f} | {sp['speedup']:.2f}x | {sp['cos_mean']:.4f} / {sp['cos_min']:.4f} |", "",
                f"{sp['chunks']} recursive 256/32 chunks ({sp['tokens']:,} model tokens), best of {len(sp['seconds']['int8'])}; "
                f"load average {_load(r.get('loadavg_start'))} at the start.", ""]
    rc = r.get("recall")
    if rc:
        i8, f32 = rc["scores"], rc.get("float32_recorded") or _recorded_float32()
        rows = [("float32 (results/recall.json)", f32), ("int8", i8)]
        out += ["Recall on the 1,370 heading queries, recursive 256/32, exact MaxP over every chunk "
                f"({rc['vectors']:,} vectors):", "",
                "| model | deep r@1 | deep r@5 | deep r@10 | deep MRR | head r@5 | head MRR |",
                "|---|---:|---:|---:|---:|---:|---:|"]
        for name, sc in rows:
            d, h = sc.get("deep", {}), sc.get("head", {})
            out.append(f"| {name} | {_pct(d.get('recall@1'))} | {_pct(d.get('recall@5'))} | {_pct(d.get('recall@10'))} | "
                       f"{d.get('mrr', 0):.3f} | {_pct(h.get('recall@5'))} | {h.get('mrr', 0):.3f} |")
        if f32.get("deep"):
            delta = 100 * (i8["deep"]["recall@5"] - f32["deep"]["recall@5"])
            out += ["", f"Deep recall@5: int8 minus float32 = {delta:+.1f} points "
                    f"(target: within 1 point: **{'met' if abs(delta) <= 1 or delta > 0 else 'not met'}**). The other "
                    f"columns move more: deep recall@1 {100 * (i8['deep']['recall@1'] - f32['deep']['recall@1']):+.1f}, "
                    f"recall@10 {100 * (i8['deep']['recall@10'] - f32['deep']['recall@10']):+.1f} points, MRR "
                    f"{i8['deep']['mrr'] - f32['deep']['mrr']:+.3f}: int8 reorders the very top a little."]
        out += [""]
    runs = [x for x in (r.get("ingest"), r.get("ingest_quieter"), r.get("ingest_3"), r.get("ingest_quiet")) if x]
    if runs:
        out += ["Engine ingest (bench_ingest.py's table: a truncate and a recursive 256/32 column) of a sample of "
                "the manual's pages with each model, in slices whose order alternates:", "",
                "| pages | load average | float32 s | int8 s | float32 pages/s | int8 pages/s | int8 / float32 | int8 / DIY (via the recorded ratio) |",
                "|---:|---|---:|---:|---:|---:|---:|---:|"]
        for ing in runs:
            p, sec = ing["pages_per_s"], ing["seconds"]
            loads = [x["loadavg"][0] for x in ing.get("per_slice", [])]
            load = f"{min(loads):.0f}-{max(loads):.0f}" if loads else "9-60"
            out.append(f"| {ing['pages']} | {load} | {sec['float32']:,.0f} | {sec['int8']:,.0f} | {p['float32']:.3f} | "
                       f"{p['int8']:.3f} | {ing['int8_over_float32']:.2f}x | "
                       f"{ing.get('int8_over_diy_via_ratio', 0):.2f}x |")
        rec = runs[-1].get("recorded")
        ratios = [ing.get("int8_over_diy_via_ratio", 0) for ing in runs]
        if rec:
            out += ["", "The DIY pipeline (langchain + sentence-transformers on PyTorch + Chroma) was not run again: the "
                    "`bench` extra (PyTorch) is not installed on this machine, and its run takes about 4 minutes of "
                    "both cores on a quiet machine. Its recorded figure (results/ingest.json: whole manual, quiet "
                    f"machine, same table) is {rec['diy_pages_per_s']:.3f} pages/s against the float32 engine's "
                    f"{rec['float32_engine_pages_per_s']:.3f} ({rec['engine_vs_diy_pages']:.2f}x), so int8 vs DIY = "
                    f"(int8 / float32, measured side by side) x {rec['engine_vs_diy_pages']:.2f}. "
                    f"Target 2x: **{'met' if min(ratios) >= 2 else 'not met'}**. The steadiest run is the last "
                    f"(load average 4-6, its four slices agreeing at 1.42-1.57x): int8 loads at "
                    f"{runs[-1]['int8_over_float32']:.2f}x float32's pages/s, **{ratios[-1]:.2f}x** the DIY pipeline's. "
                    "The runs under heavier load scattered (the load changed between a slice's two halves: per-slice "
                    f"ratios from 1.36x to 3.37x), from {min(ratios[:-1]):.2f}x to {max(ratios[:-1]):.2f}x. The engine "
                    "gains less than the model's own speed-up (1.64x in the speed table, load 4) because its own "
                    "work does not get faster: tokenizing each page whole for the chunk planner, SQLite, the "
                    "index. Reaching 2x needs about 1.65x on whole loads: a faster model step (int8 with "
                    "onnxruntime's newer kernels, or a smaller model) or a planner that reuses the page's tokens for "
                    "the chunks instead of tokenizing each chunk again."]
        out += [""]
    return out


def memory_section(m: dict | None) -> list[str]:
    runs = (m or {}).get("runs", {})
    big = {k: v for k, v in runs.items() if k.startswith("big-document")}
    if not runs:
        return []
    out = ["## Memory (issue 17)", "",
           f"`{PY}/bench_memory.py` (the whole manual, RSS sampled every 20 ms) and "
           f"`{PY}/bench_memory.py --big-document 20` (one 20 MB page into a recursive 256/32 column with "
           "`max_chunks=4`, INSERT + COMMIT + first knn(); peak RSS growth over the process with the model loaded).",
           "", "| run | peak RSS | growth | vectors | load average |", "|---|---:|---:|---:|---|"]
    for key in ("all", *big):
        v = runs.get(key)
        if v:
            growth = v.get("growth_mib", v["peak_rss_mib"] - v["before_mib"])
            hwm = f" (VmHWM {v['vm_hwm_mib']:,.0f})" if v.get("vm_hwm_mib") else ""
            out.append(f"| {key} | {v['peak_rss_mib']:,.0f} MiB{hwm} | {growth:,.0f} MiB | {v.get('vectors', '-')} | "
                       f"{_load(v.get('loadavg'))} |")
    whole, page = runs.get("all"), next(iter(big.values()), None)
    if whole:
        peak = max(whole["peak_rss_mib"], whole.get("vm_hwm_mib") or 0)
        out += ["", f"Loading the manual: {peak:,.0f} MiB at the peak (target under 1 GB: "
                f"**{'met' if peak < 1024 else 'not met'}**; it was 1,749 MiB before read_vectors read each "
                "document's vector blob once)."]
    if page:
        out += [f"A 20 MB document with max_chunks: {page['growth_mib']:,.0f} MiB of growth (target under 300 MB: "
                f"**{'met' if page['growth_mib'] < 300 else 'not met'}**), with the same warning as before: "
                f"\"{page['warnings'][0] if page.get('warnings') else ''}\"."]
    out += ["", "A 20 MB page with `max_chunks` used to take over 4 GB (its stretched last chunk went whole to the "
            "tokenizer, which encodes everything past the window as overflow); now only a prefix is tokenized with "
            "offsets, the rest is counted in 32k-character pieces, and a chunk is cut to its first 510 tokens' text "
            "before the model's tokenizer sees it (docs/chunking.md).", ""]
    return out


def ray_section(r: dict | None) -> list[str]:
    runs = (r or {}).get("runs", {})
    if not runs:
        return []
    out = ["## Ray ingest per worker", "",
           f"`{PY}/bench_ray_ingest.py --every 6 --workers 1,2`: pages of the manual in one Parquet file through "
           "`tessera embed`'s pipeline on a local Ray cluster (Ray Data read, an actor pool of workers that each "
           "load the model once, Parquet shards), recursive 256/32; then LOAD DATA of the shards (no model).", "",
           "| run | workers x CPUs claimed | pages | chunks | seconds | pages/s | tokens/s | tokens/s per worker | "
           "LOAD DATA (s) | load average |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---|"]
    for key, v in runs.items():
        out.append(f"| {key} | {v['workers']} x {v['cpus_per_worker']:.2f} | {v['documents']} | {v['chunks']:,} | "
                   f"{v['seconds']:,.0f} | {v['pages_per_s']:.2f} | {v['tokens_per_s']:,.0f} | "
                   f"{v['tokens_per_s_per_worker']:,.0f} | {v['load_data_seconds']:.1f} | {_load(v.get('loadavg_before'))} |")
    return out + [""]


def section() -> list[str]:
    recall = (common.load_result("int8_recall") or {}).get("recall")
    quieter = (common.load_result("int8_ingest_quieter") or {}).get("ingest")
    third = (common.load_result("int8_ingest_3") or {}).get("ingest")
    quiet = (common.load_result("int8_ingest_quiet") or {}).get("ingest")
    int8 = ((common.load_result("int8") or {}) | ({"recall": recall} if recall else {})
            | ({"ingest_quieter": quieter} if quieter else {}) | ({"ingest_3": third} if third else {})
            | ({"ingest_quiet": quiet} if quiet else {}))
    made = {}           # which recipe made each part (a results file keeps older parts when a run adds one)
    for label, name, part in (("speed", "int8", "speed"), ("the first ingest run", "int8", "ingest"),
                              ("recall", "int8_recall", "recall"), ("the second ingest run", "int8_ingest_quieter", "ingest"),
                              ("the third", "int8_ingest_3", "ingest"), ("the fourth", "int8_ingest_quiet", "ingest")):
        result = common.load_result(name) or {}
        if isinstance(result.get(part), dict):
            made[label] = result[part].get("int8_fingerprint")
    if int8:
        int8["made_with"] = made
    return (int8_section(int8 or None) + memory_section(common.load_result("memory"))
            + ray_section(common.load_result("ray_ingest")))
