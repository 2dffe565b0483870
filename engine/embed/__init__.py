"""Embedding models: name resolution, verified local weights, one cached ONNX session per model.

The engine imports exactly this surface::

    get_model(name) -> Model       resolve(name) -> ModelInfo
    Model.embed(texts) / embed_query(text) / token_offsets(text)
    ModelError, EmbeddingCancelled
"""
from __future__ import annotations

from tesseradb.embed.errors import EmbeddingCancelled, ModelError
from tesseradb.embed.model import Model, ModelInfo
from tesseradb.embed.registry import get_model, resolve

__all__ = ["EmbeddingCancelled", "Model", "ModelError", "ModelInfo", "get_model", "resolve"]
