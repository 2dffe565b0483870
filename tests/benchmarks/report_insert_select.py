"""The docs/benchmarks.md section of bench_insert_select.py (results/insert_select.json); sections.py
calls :func:`section`."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"
TARGET_MIB = 100        # issue 37: RssAnon above its level before the statement, for any number of rows
LABELS = {"before": "before (rows materialised)", "after": "after (streamed in batches)",
          "paged": "paged (streamed; COMMIT in pages)", "paged-50k": "paged, 50k rows",
          "flat": "flat (paged; ids and maps not held whole)", "flat-100k": "flat, 100k rows",
          "flat-50k": "flat, 50k rows"}
ORDER = ["before", "after", "paged", "paged-50k", "flat", "flat-100k", "flat-50k"]


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.1f}" for v in x) if x else "?"


def _met(mib: float) -> str:
    return f"+{mib:.0f} MiB " + ("**met**" if mib <= TARGET_MIB else "**not met**")


def _row(label: str, case: str, c: dict) -> str:
    statement = f"`{c['statement']}`" + (" (autocommit)" if c.get("autocommit") else "")
    if c.get("autocommit"):
        commit = "in the statement | in the statement"
    else:
        commit = f"{c['commit_seconds']:.1f} s | {_met(c['commit_rss_anon_above_mib'])}"
    index = c.get("index_mib")
    own = (f"{index:.0f} MiB | {_met(c['transient_above_index_mib'])}" if index is not None else "? | ?")
    return (f"| {LABELS.get(label, label)} | {statement} | {c['rows']:,} | {c['seconds']:.1f} s | "
            f"{c['rows_per_s']:,} | {_met(c['rss_anon_above_mib'])} | {commit} | {own} |")


def section() -> list[str]:
    r = common.load_result("insert_select")
    if not r or not r.get("runs"):
        return []
    runs = r["runs"]
    rows, runs_text = [], []
    for label in sorted(runs, key=lambda k: (ORDER.index(k) if k in ORDER else len(ORDER), k)):
        run = runs[label]
        for case, c in run["cases"].items():
            when = c.get("when", run.get("when"))
            runs_text.append(f"{LABELS.get(label, label)}, `{case}`: {when} UTC, load average "
                             f"{_load(c.get('loadavg_start', run.get('loadavg_start')))} at the start, "
                             f"{_load(c.get('loadavg_end', run.get('loadavg_end')))} at the end")
            rows.append(_row(label, case, c))
    any_run = next(iter(runs.values()))
    return [
        "## INSERT ... SELECT streams (issue 37)", "",
        f"`{PY}/bench_insert_select.py [--label before|after|paged|flat] [--rows 50000 --label flat-50k]`: a source table of {any_run['rows']:,} rows, each "
        f"about {any_run['text_bytes']:,} bytes of text (a full-text-indexed `text` column) and a "
        f"{any_run['dims']}-d `float_vector` with an HNSW index (no model: it measures the engine); "
        "`copy` inserts them into an empty table of the same shape, `self` into the source table itself "
        "(through a TEMP copy), `autocommit` is `copy` on a connection in autocommit mode (the statement "
        "includes its COMMIT). Each case runs on a fresh copy of the same file, in a fresh process. RssAnon "
        "(anonymous memory, /proc/self/status) is sampled every 5 ms by a thread; each figure is its peak "
        "above its level just before the statement (the COMMIT's too). The COMMIT adds the new vectors to "
        "the column's FAISS HNSW index (building it, since the connection had not loaded it) and saves it "
        "inside the file. *The index* is what that index holds in memory afterwards (vectors, links, id "
        "maps: `VectorIndex.footprint()`), memory the user asked for by declaring the column and that stays "
        "to answer searches; *above the index* is the peak minus it: the transient memory of the statement "
        "and its COMMIT. The `before` run is the engine of main before streaming, `after` streams the "
        "statement, `paged` also pages the COMMIT (storage/chunks.py, storage/index_cache.py), `flat` also "
        "reads the transaction's chunk ids a page at a time and grows the id maps in place "
        "(storage/chunk_table.py, storage/positions.py). "
        f"Target: under {TARGET_MIB} MiB above the start, for any number of rows.", "",
        *[f"- {t}" for t in runs_text], "",
        "| engine | statement | rows | statement time | rows/s | RssAnon peak, statement | COMMIT time | "
        "RssAnon peak, COMMIT | the index | peak above the index |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        *rows,
        *([""] + [f"- {line}" for line in r["page_notes"]] if r.get("page_notes") else []),
    ]
