"""The RaBitQ section of docs/benchmarks.md (issue 37 item 3): the multi-bit and 1-bit RaBitQ indexes at
1M and 50k clustered 384-d vectors against their targets, their builds, and the grid of oversampling and
efSearch settings (results/quantize_index.json, written by bench_quantize_index.py). sections.py calls
``section()``."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks/bench_quantize_index.py"
QUANTS = ("1bit", "rabitq2", "rabitq4")
MB = 1e6
UNMAPPED = "rescore, file not memory-mapped"


def verdict(ok: bool | None) -> str:
    return "-" if ok is None else ("**met**" if ok else "**not met**")


def _memory(info: dict) -> int:
    f = info["footprint_bytes"]
    return f["vectors"] + f["links"] + f["maps"]


def _float32(n: int, dims: int, info: dict) -> int:
    """float32's whole index over the same graph: the codes replaced by dims * 4 bytes a vector."""
    f = info["footprint_bytes"]
    return n * dims * 4 + f["links"] + f["maps"]


def _at(info: dict, oversampling: float) -> dict | None:
    """The rescored search at this oversampling (default ef): the default's row when it is the default."""
    if (info.get("rescore") or {}).get("plan", {}).get("oversampling") == oversampling:
        return info["rescore"]
    for key, m in info.items():
        if key.startswith("rescore, oversampling") and ", ef" not in key and float(key.rsplit(" ", 1)[1]) == oversampling:
            return m
    return None


def _current(sized: dict) -> dict:
    """The quantizations this version of the script measured (older entries lack its build and CPU records)."""
    return {q: sized[q] for q in QUANTS if "build_cpu_s" in (sized.get(q) or {}) and "rescore" in sized[q]}


def _measured(sized: dict) -> bool:
    return any("rescore" in (sized.get(q) or {}) and "build_cpu_s" in (sized.get(q) or {}) for q in QUANTS)


def _targets(n: int, sized: dict) -> list[tuple[str, str, str]]:
    rows, size = [], f"{n:,}"
    cur = _current(sized)
    r2, r4, b1 = cur.get("rabitq2"), cur.get("rabitq4"), cur.get("1bit")
    if r2:
        m = _at(r2, 5.0)
        if m:
            ok = m["recall@10"] >= 0.95 and (n < 1_000_000 or m["p50_ms"] <= 5)
            rows.append((f"{size}: rabitq2 recall@10 >= 0.95 at oversampling 5" + (", p50 <= 5 ms" if n >= 1_000_000 else ""),
                         f"recall@10 {m['recall@10']:.3f}, p50 {m['p50_ms']:.3f} ms (CPU {m['cpu_p50_ms']:.3f} ms), "
                         f"ef {m['plan']['ef']}" + _read(m) + _load(r2), verdict(ok)))
    if r4 and "rescore" in r4:
        m, ratio = r4["rescore"], _memory(r4) / _float32(n, sized["dims"], r4)
        ok = m["recall@10"] >= 0.98 and ratio <= 0.25
        rows.append((f"{size}: rabitq4 recall@10 >= 0.98 (default oversampling), whole index <= 1/4 of float32's",
                     f"recall@10 {m['recall@10']:.3f} at oversampling {m['plan']['oversampling']:g}, p50 {m['p50_ms']:.3f} ms; "
                     f"index {ratio:.3f} of float32's", verdict(ok)))
    if b1 and "rescore" in b1:
        m = b1["rescore"]
        o = m["plan"]["oversampling"]
        rows.append((f"{size}: 1bit's default oversampling holds recall@10 >= 0.95 (<= 10 if possible)",
                     f"default {o:g}: recall@10 {m['recall@10']:.3f}, p50 {m['p50_ms']:.3f} ms (CPU {m['cpu_p50_ms']:.3f} ms), "
                     f"ef {m['plan']['ef']}" + _read(m) + _load(b1),
                     verdict(m["recall@10"] >= 0.95) + ("" if o <= 10 else " (above 10)")))
        best = _fastest(b1, 0.95)
        if best and best[1] is not m:
            key, bm = best
            rows.append((f"{size}: 1bit, the fastest measured setting with recall@10 >= 0.95",
                         f"{key}: recall@10 {bm['recall@10']:.3f}, p50 {bm['p50_ms']:.3f} ms (CPU {bm['cpu_p50_ms']:.3f} ms), "
                         f"ef {bm['plan']['ef']}" + _read(bm), "-"))
    return rows


def _read(m: dict) -> str:
    """The rescoring read from SQLite and the share of searches the scheduler preempted (when recorded)."""
    out = ""
    if "read_p50_ms" in m:
        out += f"; of it the rescoring read p50 {m['read_p50_ms']:.3f} ms (CPU {m['read_cpu_p50_ms']:.3f} ms)"
    if "preempted_share" in m:
        out += f"; {m['preempted_share']:.0%} of searches preempted"
    return out


def _load(info: dict) -> str:
    return f"; load {info['loadavg_measure_start']}" if "loadavg_measure_start" in info else ""


def _fastest(info: dict, recall: float) -> tuple[str, dict] | None:
    """The rescored setting (memory-mapped) with the lowest p50 CPU time among those reaching ``recall``."""
    ok = [(key, m) for key, m in info.items() if isinstance(m, dict) and (key == "rescore" or key.startswith("rescore,"))
          and key != UNMAPPED and m.get("recall@10", 0) >= recall]
    return min(ok, key=lambda km: km[1]["cpu_p50_ms"]) if ok else None


def _mapping(n: int, sized: dict) -> list[str]:
    """The default search with the file memory-mapped (the engine's default) and read through read()."""
    out = []
    for q, info in _current(sized).items():
        a, b = info.get("rescore"), info.get(UNMAPPED)
        if a and b and "read_cpu_p50_ms" in a and "read_cpu_p50_ms" in b:
            out.append(f"{q}: rescoring read p50 {a['read_p50_ms']:.3f} ms (CPU {a['read_cpu_p50_ms']:.3f}) memory-mapped, "
                       f"{b['read_p50_ms']:.3f} ms (CPU {b['read_cpu_p50_ms']:.3f}) through read(); whole search p50 "
                       f"{a['p50_ms']:.3f} (CPU {a['cpu_p50_ms']:.3f}) vs {b['p50_ms']:.3f} (CPU {b['cpu_p50_ms']:.3f}) ms")
    if not out:
        return []
    return [f"{n:,} vectors, the default rescored search with the database file read through SQLite's memory map "
            "(`PRAGMA mmap_size`, the engine's default: storage/rowstore.py) and without it (`mmap_size=0`), same "
            "queries, one after the other: " + "; ".join(out) + ".", ""]


def _builds(n: int, sized: dict) -> list[str]:
    out = [f"| {n:,}: quantization | build (wall) | of it reading SQLite | build CPU | FAISS threads | load average start → end | peak RSS "
           "| index: codes + links + id maps | vs float32 | file | searched at load |", "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|"]
    for q in QUANTS:
        info = sized.get(q)
        if not info or "build_cpu_s" not in info:
            continue
        f = info["footprint_bytes"]
        read = f"{info['build_read_s']:,.0f} s" if "build_read_s" in info else "not recorded"
        how = ""
        if info.get("build_parts"):
            how = f" (added {info['build_parts']:,} rows at a time" + "".join(
                f"; resumed after {at:,} rows at load {load}" for at, load in info.get("resumed", [])) + ")"
        out.append(f"| {q} | {info['build_s']:,.0f} s{how} | {read} | {info['build_cpu_s']:,.0f} s | {info['build_threads']} "
                   f"| {info['build_loadavg_start']} → {info['build_loadavg_end']} | {info['build_peak_rss_mb']:,.0f} MB "
                   f"| {_memory(info) / MB:,.1f} MB ({f['vectors'] / MB:,.1f} + {f['links'] / MB:,.1f} + {f['maps'] / MB:,.1f}) "
                   f"| {_memory(info) / _float32(n, sized['dims'], info):.3f} | {info['file_bytes'] / MB:,.1f} MB "
                   f"| {info.get('loadavg_measure_start', '-')} |")
    return out + [""]


def _grid(n: int, sized: dict) -> list[str]:
    """Rescored searches: rows quantization x ef, columns oversampling; cells p50 (CPU) ms / recall@10."""
    cells: dict[tuple[str, str], dict[str, dict]] = {}
    factors: set[float] = set()
    for q, info in _current(sized).items():
        for key, m in info.items():
            if not (key == "rescore" or key.startswith("rescore,")) or key == UNMAPPED:
                continue
            ef = key.rsplit("ef ", 1)[1] if ", ef " in key else "default"
            o = float(m["plan"]["oversampling"])
            factors.add(o)
            cells.setdefault((q, ef), {})[f"{o:g}"] = m
    if not cells:
        return []
    cols = [f"{o:g}" for o in sorted(factors)]
    out = [f"{n:,} vectors, rescored; each cell: p50 ms (the search thread's CPU ms) / recall@10, and the efSearch the "
           "plan used (the `ef` column is what the search asked for; by default the plan takes max(48, 2 × the "
           "candidates fetched), 8 × on rabitq codes of 2 or 3 bits, 16 × from 4 bits, 4 × on 1-bit codes: storage/vector_plan.py; an "
           "`ef` below that is widened to it):", "",
           "| quantization | ef | " + " | ".join(f"oversampling {c}" for c in cols) + " |",
           "|---|---|" + "---:|" * len(cols)]
    for (q, ef), row in cells.items():
        default = (sized[q].get("rescore") or {}).get("plan", {}).get("oversampling")
        line = []
        for c in cols:
            m = row.get(c)
            mark = " (default)" if ef == "default" and default is not None and f"{default:g}" == c else ""
            line.append(f"{m['p50_ms']:.2f} ({m['cpu_p50_ms']:.2f}) / {m['recall@10']:.3f} ef {m['plan']['ef']}{mark}"
                        if m else "-")
        out.append(f"| {q} | {ef} | " + " | ".join(line) + " |")
    no = [f"{q} {info['no rescore']['recall@10']:.3f}" for q, info in _current(sized).items() if "no rescore" in info]
    return out + ["", "Without rescoring (the codes' own ranking, default oversampling): recall@10 " + ", ".join(no) + ".", ""]


def section() -> list[str]:
    quant = common.load_result("quantize_index") or {}
    sizes = {int(n): s for n, s in (quant.get("sizes") or {}).items() if _measured(s)}
    unmeasured = {int(n): s["rabitq_notes"] for n, s in (quant.get("sizes") or {}).items()
                  if not _measured(s) and s.get("rabitq_notes")}
    if not sizes and not unmeasured:
        return []
    out = ["## RaBitQ indexes at 1M and 50k vectors (issue 37)", "",
           "Commands (each index is built once and saved to a scratch folder under the system's temporary "
           "directory; the measuring run loads it; the last command also writes this section):", "", "```",
           f"nice -n 19 {PY} --sizes 1000000 --quantizations rabitq2 --build-only   # one process per index",
           f"nice -n 10 {PY} --sizes 1000000 --quantizations 1bit --parts 100000 --threads 2 --build-only   # saves each part",
           *[f"nice -n {quant['sizes'][str(n)].get('nice', 19)} {PY} {quant['sizes'][str(n)]['arguments']}"
             for n in sorted(sizes, reverse=True) if quant["sizes"][str(n)].get("arguments")],
           "```", "",
           "Clustered 384-d vectors (a cluster per 100, unit length, cosine), k=10, 300 held-out queries, searched "
           "through `VectorIndex.search` (the engine's index search, one FAISS thread, rescoring reading the "
           "candidates' float32 vectors from SQLite), not through SQL. Recall@10 against FAISS's exact search "
           "(`IndexFlatIP`). float32's index is computed for each row as the same links and id maps with 1,536 "
           "bytes a vector in place of the codes. The machine's 2 cores were shared with other work: each "
           "search's CPU time (its thread's) is given beside its wall time.", "",
           "| target | measured | |", "|---|---|---|"]
    rows = [r for n in sorted(sizes, reverse=True) for r in _targets(n, sizes[n])]
    out += [f"| {a} | {b} | {c} |" for a, b, c in rows] + [""]
    for n in sorted(unmeasured, reverse=True):
        out += [f"**{n:,} vectors**: not measured in this run.", ""]
        out += [line for note in unmeasured[n] for line in (note, "")]
    for n in sorted(sizes, reverse=True):
        s = sizes[n]
        out += [f"**{n:,} vectors**:", ""]
        out += _builds(n, s) + _grid(n, s) + _mapping(n, s)
        out += [line for note in s.get("rabitq_notes", []) for line in (note, "")]
    return out
