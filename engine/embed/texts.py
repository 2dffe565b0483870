"""``Connection.embed(texts, model=...)``: the vectors a column with these settings would store.

The settings go through the same checks as a column definition (docs/vector_columns.md), and the text
through the same chunking and model as an INSERT, so what comes back is exactly what the engine stores.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from tesseradb import embed
from tesseradb.embed.rows import SINGLE_VECTOR, check_text, cut_text, embed_plans
from tesseradb import errors
from tesseradb.errors import UserError
from tesseradb.catalog import vector_columns

DEFAULT_MODEL = "Xenova/all-MiniLM-L6-v2"
SETTINGS = ("chunk_strategy", "max_tokens", "overlap_tokens", "max_chunks", "chunk_context")


def _resolve_model(name: str, options: dict[str, str]) -> tuple[str, str, int]:
    info = embed.resolve(name, embed.ModelOptions.parse(options))
    return info.name, info.fingerprint, info.dims


def spec_for(model: str, settings: dict[str, object]) -> vector_columns.VectorSpec:
    unknown = sorted(set(settings) - set(SETTINGS))
    if unknown:
        raise UserError(f"embed(): unknown setting '{unknown[0]}'; expected model or one of {', '.join(SETTINGS)}",
                        errors.SqlSyntaxError)
    chunked = str(settings.get("chunk_strategy", "truncate")).lower() not in SINGLE_VECTOR
    options = {"knn_type": "hnsw", "hnsw_similarity": "cosine", "from": "text", "model_name": model,
               **{k: str(v) for k, v in settings.items() if v is not None}}
    kind = "float_vector_array" if chunked else "float_vector"
    specs = vector_columns.validate_columns("embed()", [("text", "text", {}), ("v", kind, options)],
                                            resolve_model=_resolve_model, is_remote=embed.is_remote)
    return specs["v"]


def embed_texts(texts: Sequence[str], model: str = DEFAULT_MODEL, losses: list | None = None,
                **settings: object) -> list[np.ndarray]:
    """One (vectors x dims) float32 array per text: one row for ``truncate`` and ``mean``, one per
    chunk for ``fixed``, ``recursive``, ``sentence`` and ``markdown``. ``losses`` gets
    ``(text number, tokens, tokens the model saw)`` for each text the model embedded only in part
    (what INSERT reports as a truncation warning)."""
    spec = spec_for(model, settings)
    texts = list(texts)
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise UserError(f"embed(): text {i + 1} is {type(text).__name__}, not str", errors.SqlSyntaxError)
        check_text(text, f"embed() text {i + 1}")
    engine_model = embed.spec_model(spec)
    cuts = [cut_text(engine_model, spec, text) for text in texts]
    if losses is not None:
        losses.extend((i + 1, c.plan.total_tokens, c.plan.total_tokens - c.plan.dropped_tokens)
                      for i, c in enumerate(cuts) if c.plan.dropped_tokens)
    pieces = [p for text, cut in zip(texts, cuts) for p in cut.pieces(text, cut.located(text), engine_model)]
    return [e.vectors for e in embed_plans(engine_model, spec.chunk_strategy, texts, [c.plan for c in cuts],
                                           pieces=pieces)]
