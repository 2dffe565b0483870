"""Embedding models: name resolution, verified local weights, one cached ONNX session per model.

The engine imports exactly this surface::

    get_model(name) -> Model       resolve(name) -> ModelInfo
    Model.embed(texts) / embed_query(text) / token_offsets(text)
    ModelError, EmbeddingCancelled

The names load on first use (PEP 562): a plain SQL statement imports ``tesseradb.embed.*`` helpers
(heading and token upgrades) without paying for the model registry."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tesseradb.embed.errors import EmbeddingCancelled, ModelError
    from tesseradb.embed.model import Model, ModelInfo
    from tesseradb.embed.registry import get_model, resolve

__all__ = ["EmbeddingCancelled", "Model", "ModelError", "ModelInfo", "get_model", "resolve"]

_HOME = {"EmbeddingCancelled": "errors", "ModelError": "errors", "Model": "model", "ModelInfo": "model",
         "get_model": "registry", "resolve": "registry"}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value
