"""``SHOW MODELS [LIKE 'pattern']``: the embedding models the engine can load, where their files come
from, their licence and weights fingerprint, and whether their ONNX graph is already cached; then the
cross-encoders this process has loaded for ``OPTION rerank`` (docs/reranking.md)."""
from __future__ import annotations

import fnmatch

from tesseradb.embed.registry import list_models
from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.vectors import rerank

COLUMNS = [("Name", None), ("Aliases", None), ("Dimensions", None), ("Pooling", None), ("Precision", None),
           ("Source", None), ("License", None), ("Fingerprint", None), ("Graph_cached", None)]


def _row(model: dict) -> tuple:
    source = f"{model['distribution']} {model['version'] or '(not installed)'}"
    if model.get("path"):
        source += f" ({model['path']})"
    return (model["name"], ", ".join(model["aliases"]), model["dimensions"], model["pooling"],
            model["precision"], source, model["license"], model["fingerprint"],
            "yes" if model["graph_cached"] else "no")


def _reranker_row(model: dict) -> tuple:
    """A cross-encoder this process loaded for OPTION rerank (a local directory: nothing to verify)."""
    return (model["name"], "", 1, "cross-encoder: one logit per (query, passage)", "fp32",
            f"local directory (window {model['window']} tokens)", None, model["fingerprint"], "yes")


def _matches(model: dict, like: str | None) -> bool:
    if like is None:
        return True
    pattern = like.replace("%", "*").replace("_", "?").lower()
    return any(fnmatch.fnmatchcase(n.lower(), pattern) for n in [model["name"], *model["aliases"]])


def show_models(db: Database, stmt: ast.ShowModels, params=None) -> Result:
    rows = [_row(m) for m in list_models() if _matches(m, stmt.like)]
    rows += [_reranker_row(m) for m in rerank.loaded() if _matches({"name": m["name"], "aliases": []}, stmt.like)]
    return Result(columns=COLUMNS, rows=rows, rowcount=len(rows))
