"""Embedding models: name resolution, verified local weights, one cached ONNX session per model.

The engine imports exactly this surface::

    get_model(name, options) -> Model   resolve(name, options, access) -> ModelInfo
    model_for(name, options, access) -> a model ready to embed (remote: allow-listed, keyed, probed)
    ModelOptions.parse(column options)
    Model.embed(texts) / embed_query(text) / token_offsets(text)
    ModelError, EmbeddingCancelled
"""
from __future__ import annotations

from tesseradb.embed.errors import EmbeddingCancelled, ModelError
from tesseradb.embed.model import Model, ModelInfo
from tesseradb.embed.options import MODEL_OPTIONS, ModelOptions
from tesseradb.embed.registry import get_model, is_remote, model_for, names_a_path, resolve
from tesseradb.embed.remote.access import UNRESTRICTED, RemoteAccess


def spec_model(spec, access: RemoteAccess = UNRESTRICTED):  # noqa: ANN001, ANN201 - VectorSpec -> model
    """The model of a vector column (its name and model options), ready to embed under ``access``."""
    return model_for(spec.model_name, ModelOptions.parse(dict(spec.model_options)), access)


__all__ = ["EmbeddingCancelled", "MODEL_OPTIONS", "Model", "ModelError", "ModelInfo", "ModelOptions",
           "RemoteAccess", "UNRESTRICTED", "get_model", "is_remote", "model_for", "names_a_path", "resolve",
           "spec_model"]
