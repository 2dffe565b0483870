"""The docs/benchmarks.md section of bench_startup.py (results/startup.json); sections.py calls :func:`section`."""
from __future__ import annotations

import common

PY = ".venv/bin/python tests/benchmarks"
# issue 37: above the sqlite3 floor, medians of fresh processes in the same run
TARGETS = {"tesseradb": 0.20, "shell": 0.30}
SPELLED = {"sqlite3": '`python -c "import sqlite3; sqlite3.connect(\':memory:\').execute(\'SELECT 1\')"` (the floor)',
           "tesseradb": "`import tesseradb` + connect + `SELECT 1`",
           "shell": '`tessera -e "SELECT 1"`',
           "first knn": "first knn text query in a fresh process (loads the model)"}


def _load(x: list[float] | None) -> str:
    return " / ".join(f"{v:.1f}" for v in x) if x else "?"


def section() -> list[str]:
    r = common.load_result("startup")
    if not r or "cpu_median_s" not in r["cases"].get("sqlite3", {}):
        return []
    cases = r["cases"]
    floor_wall, floor_cpu = cases["sqlite3"]["median_s"], cases["sqlite3"]["cpu_median_s"]
    rows = []
    for name, c in cases.items():
        target = TARGETS.get(name)
        over_wall, over_cpu = c["median_s"] - floor_wall, c["cpu_median_s"] - floor_cpu
        verdict = "-" if target is None else ("**met**" if over_wall <= target else "**not met**") + \
            (" (CPU: " + ("met" if over_cpu <= target else "not met") + ")")
        rows.append(f"| {SPELLED.get(name, name)} | {c['median_s']:.3f} s | {c['cpu_median_s']:.3f} s | "
                    f"{'-' if name == 'sqlite3' else f'+{over_wall:.3f} / +{over_cpu:.3f} s'} | "
                    f"{'-' if target is None else f'+{target:.2f} s'} | {verdict} |")
    return [
        "## Start-up (issue 37)", "",
        f"`{PY}/bench_startup.py --runs {r['runs']}` ({r.get('when', '?')} UTC): each case a fresh process, "
        f"{r['runs']} runs taking turns; medians of wall time and of the CPU time the process used (user + "
        "system), which the shared machine's load disturbs less. Load average (1/5/15 min) "
        f"{_load(r.get('loadavg_start'))} at the start, {_load(r.get('loadavg_end'))} at the end.", "",
        "| case | wall (median) | CPU (median) | above the floor: wall / CPU | target | |",
        "|---|---:|---:|---:|---:|---|",
        *rows, "",
        "What a plain statement no longer loads (tests/architecture/test_startup_imports.py keeps it so): numpy, "
        "the search planning (sql/search/select_plan.py and what it imports; a SELECT without a search function "
        "or OPTION is planned by sql/search/planned.py), the model registry and the embedding rows, the 29 "
        "statement node classes beyond Query (grammar/nodes.py, loaded when first named; each frozen dataclass "
        "costs about 0.5 ms to create on Python 3.11), the information_schema / ONLY_FULL_GROUP_BY / exact "
        "division passes, the full-text upgrade check of an empty file, the folder globbing, the catalog "
        "reader behind Connection.describe(), and in the shell wcwidth's tables. What remains: CPython and "
        "sqlglot with its MySQL and SQLite dialects (about 0.11 s of CPU here, the largest part), apsw, and "
        "about 70 engine modules.",
    ]
