"""What the renderers of docs/benchmarks.md share: paths, number formats, verdicts, results/notes.json."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

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


def _results() -> tuple[dict | None, dict | None, dict | None, dict | None]:
    return (common.load_result("ingest"), common.load_result("recall"), common.load_result("recall_stripped"),
            common.load_result("query"))
