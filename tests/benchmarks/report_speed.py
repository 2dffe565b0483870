"""The speed-and-scale section of docs/benchmarks.md (issue 17): the query path's ratios (results/query.json)
and the quantized indexes at 100k and 1M vectors (results/quantize_index.json). sections.py calls
``section()``."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"
MB = 1e6


def verdict(ok: bool | None) -> str:
    return "-" if ok is None else ("**met**" if ok else "**not met**")


def _query_rows(query: dict) -> list[tuple[str, str, str]]:
    rows = []
    m = (query.get("manual") or {}).get("v_rec")
    if m and "first_over_model_p50" in m:
        r = m["first_over_model_p50"]
        rows.append(("text knn p50 <= 1.5x the model's own p50 on the same texts (first-time texts, recursive 256/32)",
                     f"{m['first']['p50']:.2f} ms vs {m['model_alone']['p50']:.2f} ms: {r:.2f}x", verdict(r <= 1.5)))
    if m and "literal_vs_parameter" in m:
        lv = m["literal_vs_parameter"]
        rows.append(("knn with a 384-value literal vector p50 <= 1.2x the same query with a parameter",
                     f"{lv['literal']['p50']:.2f} ms vs {lv['parameter']['p50']:.2f} ms: {lv['ratio_p50']:.2f}x",
                     verdict(lv["ratio_p50"] <= 1.2)))
    ins = query.get("insert_literals")
    if ins:
        rows.append((f"INSERT of {ins['rows']:,} rows with {ins['dims']}-d literal vectors within 2x of parameters",
                     f"one execute per row: {ins['execute_each_literal_s']:.2f} s vs {ins['execute_each_parameters_s']:.2f} s "
                     f"({ins['ratio_each']:.2f}x); one multi-row statement vs executemany: "
                     f"{ins['one_statement_literal_s']:.2f} s vs {ins['executemany_parameters_s']:.2f} s ({ins['ratio_batch']:.2f}x)",
                     verdict(max(ins["ratio_each"], ins["ratio_batch"]) <= 2)))
    return rows


def _query_notes(query: dict) -> list[str]:
    m = query.get("manual") or {}
    rec = m.get("v_rec")
    if not rec:
        return []
    out = [f"The manual's run had load averages {m.get('loadavg_start')} at the start and {m.get('loadavg_end')} "
           "at the end on 2 cores, so every absolute time is several times a quiet machine's (the model alone: "
           f"{rec['model_alone']['p50']:.1f} ms p50 here, about 2.2 ms quiet). What changed in the engine's own share, "
           f"recursive 256/32: a repeated query (the model's cache answers) takes {rec['cached']['p50']:.2f} ms p50, "
           f"the ANN step alone {rec['ann_alone']['p50']:.3f} ms (it was 2.75 ms and 1.33 ms on main before this work, "
           "on a quieter machine: the plan cache and the near-the-cut rescoring)."]
    lv = rec.get("literal_vs_parameter")
    if lv and lv["ratio_p50"] > 1.2:
        gap = lv["literal"]["p50"] - lv["parameter"]["p50"]
        load = f" (this comparison ran at load {lv['loadavg']})" if lv.get("loadavg") else ""
        out[-1] += (f" The literal vector costs {gap:.2f} ms more than the parameter here{load}, and the knn query "
                    "itself now takes so little that this is over the 1.2x target: the scan that lifts the literal "
                    "(`grammar/literals.py`) measured 0.088 ms on a quiet machine for 384 values written as Python's "
                    "repr() writes them, 0.069 ms of it turning 384 decimal strings into floats (numpy's parser is no "
                    "faster); the statement then hits the same cached plan as the parameter form. Before this work the "
                    "same query took 40 ms against 9 ms (4.4x).")
    return out + [""]


def _memory(info: dict) -> float:
    f = info["footprint_bytes"]
    return f["vectors"] + f["links"] + f["maps"]


def _build(info: dict) -> str:
    if "build_s" in info:
        return f"{info['build_s']:,.0f} s"
    return "not recorded"


def _quant_table(n: str, sized: dict) -> list[str]:
    base = sized.get("none") or sized.get("float32_reference")
    out = [f"**{int(n):,} vectors** (384-d, cosine; load average {sized.get('loadavg_start')} at the start, "
           f"{sized.get('loadavg_end')} at the end):", "",
           "| quantization | index memory: codes + links + id maps | vs float32 | build | rescore: p50 / p99 ms | recall@10 "
           "| no rescore: p50 / p99 ms | recall@10 |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for q in QUANTS:
        info = sized.get(q)
        if not info:
            continue
        f = info["footprint_bytes"]
        mem = f"{_memory(info) / MB:,.1f} MB ({f['vectors'] / MB:,.1f} + {f['links'] / MB:,.1f} + {f['maps'] / MB:,.1f})"
        ratio = f"{_memory(info) / _memory(base):.3f}" if base else "-"
        r, nr = info.get("rescore"), info.get("no rescore")
        cells = [f"{r['p50_ms']:.3f} / {r['p99_ms']:.3f}", f"{r['recall@10']:.3f}"] if r else ["-", "-"]
        cells += [f"{nr['p50_ms']:.3f} / {nr['p99_ms']:.3f}", f"{nr['recall@10']:.3f}"] if nr else ["(exact float32)", "-"]
        out.append(f"| {q} | {mem} | {ratio} | {_build(info)} | " + " | ".join(cells) + " |")
    return out + [""] + _oversampling_table(sized) + _notes_1m(sized)


QUANTS = ("none", "8bit", "1bit", "rabitq2", "rabitq4")


def _oversampling_table(sized: dict) -> list[str]:
    """The rescored searches at the oversampling factors asked with --oversampling (each quantization's
    default is the "rescore" column above: storage/vector_plan.py OVERSAMPLING)."""
    factors = sorted({k.rsplit(" ", 1)[1] for q in QUANTS for k in (sized.get(q) or {}) if k.startswith("rescore, oversampling")},
                     key=float)
    if not factors:
        return []
    out = ["Rescored, at other oversampling factors (p50 ms / recall@10):", "",
           "| quantization | " + " | ".join(f"oversampling {f}" for f in factors) + " |",
           "|---|" + "---:|" * len(factors)]
    for q in QUANTS:
        info = sized.get(q) or {}
        cells = [info.get(f"rescore, oversampling {f}") for f in factors]
        if any(cells):
            out.append(f"| {q} | " + " | ".join(f"{c['p50_ms']:.3f} / {c['recall@10']:.3f}" if c else "-" for c in cells) + " |")
    return out + [""]


def _notes_1m(sized: dict) -> list[str]:
    out = []
    ref = sized.get("float32_reference")
    if ref:
        b = ref.get("bench_query_ann_1M", {})
        out.append(f"float32 was not built at this size in this session; its memory is computed: {ref['note']}. "
                   f"The float32 index of the same vectors and queries measured {b.get('build_s', 0):,} s to build, "
                   f"p50 {b.get('p50_ms')} ms, p99 {b.get('p99_ms')} ms, recall@10 {b.get('recall@10')} ({b.get('note')}).")
    first = (sized.get("8bit") or {}).get("first_measure_after_build")
    if first:
        out.append(f"8bit measured right after its build: rescore p50 {first['rescore']['p50_ms']} ms, p99 "
                   f"{first['rescore']['p99_ms']} ms; no rescore p50 {first['no rescore']['p50_ms']} ms ({first['note']}). "
                   "The row above is the same index loaded again a few minutes later, warm.")
    return [line for o in out for line in (o, "")]


def _quant_target(quant: dict) -> tuple[str, str, str]:
    sizes = quant.get("sizes", {})
    n = "1000000" if "1000000" in sizes and "8bit" in sizes["1000000"] else None
    if n is None:
        return ("8bit with rescore at 1M: recall@10 >= 0.95, p50 <= 1 ms, index memory <= 1/3 of float32's",
                "not run at 1M", "-")
    s = sizes[n]
    e = s["8bit"]
    base = s.get("none") or s.get("float32_reference")
    base_mem = _memory(base) if base else None
    ratio = _memory(e) / base_mem if base_mem else None
    ok = e["rescore"]["recall@10"] >= 0.95 and e["rescore"]["p50_ms"] <= 1 and (ratio is None or ratio <= 1 / 3)
    mem = f", memory {ratio:.3f}x float32's" if ratio else ", float32 not built in this run"
    if "none" not in s and base:
        mem += " (float32 computed, not built at 1M: see below)"
    return ("8bit with rescore at 1M: recall@10 >= 0.95, p50 <= 1 ms, index memory <= 1/3 of float32's",
            f"recall@10 {e['rescore']['recall@10']:.3f}, p50 {e['rescore']['p50_ms']:.3f} ms{mem}", verdict(ok))


def section() -> list[str]:
    query = common.load_result("query") or {}
    quant = common.load_result("quantize_index") or {}
    if not query and not quant:
        return []
    out = ["## Speed and scale: the query path and quantized indexes", "",
           f"`{PY}/bench_query.py --sizes '' --build-manual` (the manual's knn queries, literal vs parameter, INSERT "
           f"of literal vectors) and `{PY}/bench_quantize_index.py --sizes 100000,1000000`. The machine was shared "
           "with other work throughout (load averages recorded in the JSON); ratios were measured interleaved.", "",
           "| target | measured | |", "|---|---|---|"]
    rows = _query_rows(query)
    if quant:
        rows.append(_quant_target(quant))
    out += [f"| {a} | {b} | {c} |" for a, b, c in rows] + [""]
    out += _query_notes(query)
    if quant.get("sizes"):
        out += ["Quantized indexes (`storage/quantized.py`): the column's index is built from SQLite as the engine "
                "builds it, k=10, default ef, 300 held-out queries; rescoring reads the candidates' float32 vectors "
                "from SQLite (the real path: one join per query). Each quantization's default oversampling (3.0 on 8bit, 20.0 on 1bit, 5.0 on rabitq2 and rabitq4: storage/vector_plan.py) with and without "
                "rescoring. Recall@10 is against exact search over float32. Index memory is the index's own "
                "accounting (`VectorIndex.footprint`); the file on disk is about the same. A rerun loads the saved "
                "indexes and keeps the build time its first run measured.", ""]
        for n, sized in sorted(quant["sizes"].items(), key=lambda kv: int(kv[0])):
            out += _quant_table(n, sized)
        out += ["From these, the figures for 10M and 100M vectors: [scaling.md](scaling.md).", ""]
    return out
