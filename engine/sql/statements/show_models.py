"""``SHOW MODELS [LIKE 'pattern']``: the embedding models the engine can load, where their files come
from, their licence and weights fingerprint, and whether their ONNX graph is already cached; then every
other model a column of this database uses (a folder, a Hugging Face id, a remote endpoint: source,
pooling, prefixes, width, window; never a key); then the cross-encoders this process has loaded for
``OPTION rerank`` (docs/reranking.md, docs/models.md#show-models)."""
from __future__ import annotations

import fnmatch

from tesseradb import embed
from tesseradb.embed.registry import list_models
from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.vectors import rerank

COLUMNS = [("Name", None), ("Aliases", None), ("Dimensions", None), ("Pooling", None), ("Precision", None),
           ("Source", None), ("License", None), ("Fingerprint", None), ("Graph_cached", None), ("Window", None),
           ("Prefixes", None), ("Used_by", None)]


def _row(model: dict) -> tuple:
    source = f"{model['distribution']} {model['version'] or '(not installed)'}"
    if model.get("path"):
        source += f" ({model['path']})"
    return (model["name"], ", ".join(model["aliases"]), model["dimensions"], model["pooling"],
            model["precision"], source, model["license"], model["fingerprint"],
            "yes" if model["graph_cached"] else "no", model["window"], "", "")


def _reranker_row(model: dict) -> tuple:
    """A cross-encoder this process loaded for OPTION rerank (a local directory: nothing to verify)."""
    return (model["name"], "", 1, "cross-encoder: one logit per (query, passage)", "fp32",
            f"local directory (window {model['window']} tokens)", None, model["fingerprint"], "yes",
            model["window"], "", "")


def _matches(model: dict, like: str | None) -> bool:
    if like is None:
        return True
    pattern = like.replace("%", "*").replace("_", "?").lower()
    return any(fnmatch.fnmatchcase(n.lower(), pattern) for n in [model["name"], *model["aliases"]])


def _in_use(db: Database) -> dict[str, tuple]:
    """fingerprint -> (spec, its columns) for every model column of the database."""
    used: dict[str, tuple] = {}
    for table in db.tables.values():
        for spec in table.vectors.values():
            if spec.model_name and spec.model_fingerprint:
                entry = used.setdefault(spec.model_fingerprint, (spec, []))
                entry[1].append(f"{table.name}.{spec.column}")
    return used


def _column_row(spec, columns: list[str]) -> tuple:
    """A model a column uses, described from the opened model (a remote one is not contacted)."""
    try:
        model = embed.get_model(spec.model_name, embed.ModelOptions.parse(dict(spec.model_options)))
    except embed.ModelError as exc:
        return (spec.model_text or spec.model_name, "", spec.dims, None, None, f"unavailable: {exc}", None,
                spec.model_fingerprint, "no", None, "", ", ".join(columns))
    remote = embed.is_remote(spec.model_name)
    if remote:
        pooling, source = "by the endpoint, L2-normalized", f"remote {model.provider.name} {model.url}"
    else:
        pooling = model.head.pooling + (", L2-normalized" if model.head.normalize or model.head.dims else "")
        source = f"folder {model.name}" if model.name.startswith(("/", "\\")) or ":" in model.name[:3] else f"built-in {model.name} with the column's options"
    if getattr(model, "head", None) is not None and model.head.dims or remote and model.options.dims:
        pooling += f", first {spec.dims} numbers"
    prompts = model.prompts
    prefixes = ", ".join(f"{k}: {v!r}" for k, v in (("query", prompts.query), ("document", prompts.document)) if v)
    return (spec.model_text or spec.model_name, "", spec.dims, pooling, "float32", source, None,
            spec.model_fingerprint, "n/a" if remote else "yes", model.window, prefixes, ", ".join(columns))


def show_models(db: Database, stmt: ast.ShowModels, params=None) -> Result:
    used = _in_use(db)
    builtins = list_models()
    rows = []
    for m in builtins:
        if _matches(m, stmt.like):
            row = _row(m)
            users = used.pop(m["fingerprint"], (None, []))[1]
            rows.append(row[:-1] + (", ".join(users),))
    rows += [_column_row(spec, cols) for spec, cols in used.values()
             if _matches({"name": spec.model_text or spec.model_name, "aliases": []}, stmt.like)]
    rows += [_reranker_row(m) for m in rerank.loaded() if _matches({"name": m["name"], "aliases": []}, stmt.like)]
    return Result(columns=COLUMNS, rows=rows, rowcount=len(rows))
