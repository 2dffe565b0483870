"""Embedding models: name resolution, verified local weights, one cached ONNX session per model.

The engine imports exactly this surface::

    get_model(name, options) -> Model   resolve(name, options, access) -> ModelInfo
    model_for(name, options, access) -> a model ready to embed (remote: allow-listed, keyed, probed)
    spec_model(vector spec, access)      ModelOptions.parse(column options)   is_remote(name)
    Model.embed(texts) / embed_query(text) / token_offsets(text)
    ModelError, EmbeddingCancelled

The names load on first use (PEP 562): a plain SQL statement imports ``tesseradb.embed.*`` helpers
(heading and token upgrades) without paying for the model registry."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tesseradb.embed.errors import EmbeddingCancelled, ModelError
    from tesseradb.embed.model import Model, ModelInfo
    from tesseradb.embed.options import MODEL_OPTIONS, ModelOptions
    from tesseradb.embed.registry import get_model, is_remote, model_for, names_a_path, resolve
    from tesseradb.embed.remote.access import UNRESTRICTED, RemoteAccess

__all__ = ["EmbeddingCancelled", "MODEL_OPTIONS", "Model", "ModelError", "ModelInfo", "ModelOptions",
           "RemoteAccess", "UNRESTRICTED", "get_model", "is_remote", "model_for", "names_a_path", "resolve",
           "spec_model"]

_HOME = {"EmbeddingCancelled": "errors", "ModelError": "errors", "Model": "model", "ModelInfo": "model",
         "get_model": "registry", "resolve": "registry", "is_remote": "registry", "model_for": "registry",
         "names_a_path": "registry", "MODEL_OPTIONS": "options", "ModelOptions": "options",
         "RemoteAccess": "remote.access", "UNRESTRICTED": "remote.access"}


def spec_model(spec: Any, access: Any = None) -> Any:
    """The model of a vector column (its name and model options), ready to embed under ``access``
    (a ``RemoteAccess``; None: unrestricted, as in-process)."""
    from tesseradb.embed.options import ModelOptions
    from tesseradb.embed.registry import model_for
    from tesseradb.embed.remote.access import UNRESTRICTED
    return model_for(spec.model_name, ModelOptions.parse(dict(spec.model_options)), access or UNRESTRICTED)


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)
    globals()[name] = value
    return value
