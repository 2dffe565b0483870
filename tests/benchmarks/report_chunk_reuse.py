"""The docs/benchmarks.md section of bench_chunk_reuse.py (results/chunk_reuse.json); sections.py calls
:func:`section`."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"
ANCHOR = "## Chunk reuse, MODIFY COLUMN and passages"


def _verdict(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.1f}" for v in x) if x else "?"


def _targets(r: dict) -> list[str]:
    out = ["| target | measured | | load average (1/5/15 min) |", "|---|---|---|---|"]
    p = r.get("passages")
    if p:
        def pair(kind: str, key: str) -> str:
            base, with_text = p[f"plain{kind}"][key], p[f"knn_chunk_text{kind}"][key]
            return f"{base:.2f} -> {with_text:.2f} ms (**{100 * (with_text / base - 1):+.1f}%**)"
        ok = p["overhead_cpu_p50_uncached"] <= 0.10
        out.append(f"| `knn_chunk_text()` adds <= 10% to the p50 of a k=10 text query | query text embedded each "
                   f"time: CPU p50 {pair('_uncached', 'cpu_p50')}, wall p50 {pair('_uncached', 'p50')}; "
                   f"embedding cached: CPU p50 {pair('', 'cpu_p50')}, wall p50 {pair('', 'p50')} | "
                   f"{_verdict(ok)} with the query text embedded (CPU and wall); "
                   f"{_verdict(p['overhead_cpu_p50'] <= 0.10)} with its embedding cached | {_load(p.get('loadavg'))} |")
    s, ld = r.get("resync"), r.get("load")
    if s and ld:
        out.append(f"| Re-sync of the manual with 10 pages edited: <= 10% of the full load | {s['seconds']:.1f} s vs "
                   f"{ld['seconds']:.0f} s: **{100 * s['seconds'] / ld['seconds']:.1f}%** | "
                   f"{_verdict(s['seconds'] <= 0.10 * ld['seconds'])} | {_load(s.get('loadavg'))} |")
    if ld and "key_seconds" in ld:
        k = r.get("keyindex") or {}
        extra = max(0.0, k.get("with_key", 0.0) - k.get("without_key", 0.0))
        share = (ld["key_seconds"] + extra) / ld["seconds"]
        out.append(f"| Chunk keys add <= 3% to a first load | hashing + lookups {ld['key_seconds']:.3f} s, the key "
                   f"column and its index {extra * 1000:.1f} ms CPU ({k.get('rows', 0):,} rows), of a "
                   f"{ld['seconds']:.0f} s load: **{100 * share:.3f}%** | {_verdict(share <= 0.03)} | "
                   f"{_load(ld.get('loadavg'))} |")
    return out


def _modify(r: dict) -> list[str]:
    m = r.get("modify") or {}
    if not m:
        return []
    out = ["| MODIFY 256/32 -> | vectors | MODIFY: seconds (statement + commit) | reused | embedded "
           "| fresh load: seconds | fresh: embedded | embedded by MODIFY / fresh |",
           "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, x in m.items():
        f = x["fresh"]
        out.append(f"| {name} | {x['vectors']:,} | {x['seconds']:.0f} | {x['reused']:,} | {x['embedded']:,} | "
                   f"{f['seconds']:.0f} | {f['embedded']:,} | {x['embedded'] / f['embedded']:.3f} |")
    return out


def section() -> list[str]:
    r = common.load_result("chunk_reuse")
    if not r:
        return []
    pages = r.get("pages", 189)
    subset = "" if pages >= 189 else f" **On the first {pages} pages only** (`--pages {pages}`), not the whole manual."
    out = [ANCHOR, "", f"`{PY}/bench_chunk_reuse.py`" + (f" `--pages {pages}`" if pages < 189 else ""), "",
           "The manual loaded into `recursive 256/32` (executemany + commit, index built at commit), then: k=10 text "
           "queries (section headings) with and without `knn_chunk_text()`, the two forms alternating; a re-sync that "
           "REPLACEs every page after inserting a paragraph into 10 of them; `ALTER TABLE ... MODIFY COLUMN` to "
           "other settings, each on a copy of the loaded database, against loading a fresh database with those "
           f"settings. The machine was shared with other work throughout (load averages below).{subset}", ""]
    out += _targets(r) + [""]
    ld, s = r.get("load"), r.get("resync")
    if ld:
        out += [f"First load: {ld['seconds']:.0f} s, {ld['vectors']:,} vectors ({ld['reused']:,} chunk texts occurred "
                "twice and were embedded once)."]
    if s:
        check = s.get("checked", {})
        out += [f"Re-sync: {s['reused']:,} chunks reused, {s['embedded']:,} embedded; the stored vectors of the "
                f"{check.get('pages', 0)} pages checked (the 10 edited + 10 unchanged) equal the model run directly on "
                f"their chunk texts bit for bit: {check.get('bit_identical', 0)} of {check.get('pages', 0)}."]
    out += [""] + _modify(r)
    if r.get("modify"):
        out += ["", "\"reused\" counts chunks not sent to the model: stored vectors and texts repeated within the "
                "statement (a fresh load dedupes those too: its own \"reused\"). The times compare poorly: each "
                "pair ran under a different load (load average at the end of each pair: "
                + "; ".join(f"{n}: {_load(x.get('loadavg'))}" for n, x in r['modify'].items())
                + "), so the chunks embedded are the sturdier measure.", "",
                "Reuse needs the exact chunk text to recur: with overlap 0 the windows start at other tokens, so "
                "only each page's first chunk (and pages shorter than one chunk) recur; 128-token chunks share "
                "almost no text with 256-token ones. MODIFY then costs about what embedding the column afresh "
                "costs, in one interruptible transaction instead of a new column and a second copy of the vectors."]
    return out + [""]
