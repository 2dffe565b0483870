"""The docs/benchmarks.md section of bench_insert_select.py (results/insert_select.json); sections.py
calls :func:`section`."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"
TARGET_MIB = 100        # issue 37: RssAnon above its level before the statement, for any number of rows
LABELS = {"before": "before (rows materialised)", "after": "after (streamed in batches)"}


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.1f}" for v in x) if x else "?"


def section() -> list[str]:
    r = common.load_result("insert_select")
    if not r or not r.get("runs"):
        return []
    runs = r["runs"]
    rows, runs_text = [], []
    for label in sorted(runs, key=lambda k: (k != "before", k)):
        run = runs[label]
        for case, c in run["cases"].items():
            when = c.get("when", run.get("when"))
            runs_text.append(f"{LABELS.get(label, label)}, `{case}`: {when} UTC, load average "
                             f"{_load(c.get('loadavg_start', run.get('loadavg_start')))} at the start, "
                             f"{_load(c.get('loadavg_end', run.get('loadavg_end')))} at the end")
            met = "**met**" if c["rss_anon_above_mib"] <= TARGET_MIB else "**not met**"
            rows.append(f"| {LABELS.get(label, label)} | `{c['statement']}` | {c['rows']:,} | {c['seconds']:.1f} s | "
                        f"{c['rows_per_s']:,} | +{c['rss_anon_above_mib']:.0f} MiB {met} | {c['commit_seconds']:.1f} s | "
                        f"+{c['commit_rss_anon_above_mib']:.0f} MiB |")
    any_run = next(iter(runs.values()))
    return [
        "## INSERT ... SELECT streams (issue 37)", "",
        f"`{PY}/bench_insert_select.py [--label before]`: a source table of {any_run['rows']:,} rows, each "
        f"about {any_run['text_bytes']:,} bytes of text (a full-text-indexed `text` column) and a "
        f"{any_run['dims']}-d `float_vector` with an HNSW index (no model: it measures the engine); "
        "`copy` inserts them into an empty table of the same shape, `self` into the source table itself "
        "(through a TEMP copy). Each case runs on a fresh copy of the same file. RssAnon (anonymous memory, "
        "/proc/self/status) is sampled every 5 ms by a thread; the figure is its peak above its level "
        "just before the statement. The statement and its COMMIT are measured apart: the COMMIT adds the "
        "new vectors to the column's FAISS index (building it, since the connection had not loaded it) "
        "and saves it, which is the index's memory, not the statement's. The `before` run is the engine "
        "of main before the change, driving the same script. "
        f"Target: the statement under {TARGET_MIB} MiB above its start, for any number of rows.", "",
        *[f"- {t}" for t in runs_text], "",
        "| engine | statement | rows | statement time | rows/s | RssAnon peak, statement | COMMIT time | "
        "RssAnon peak, COMMIT |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
        *rows,
        *([""] + [f"- {line}" for line in r["page_notes"]] if r.get("page_notes") else []),
    ]
