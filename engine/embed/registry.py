"""Model names -> models. One instance per resolved model per process."""
from __future__ import annotations

import threading
from collections.abc import Callable

from tesseradb.embed import default, local
from tesseradb.embed.errors import ModelError
from tesseradb.embed.model import Model, ModelInfo

_models: dict[str, Model] = {}
_infos: dict[str, ModelInfo] = {}
_lock = threading.Lock()
_key_locks: dict[str, threading.Lock] = {}


def _unknown(model_name: str) -> ModelError:
    return ModelError(
        f"unknown model '{model_name}': not a built-in model name "
        f"({', '.join(default.ALIASES_DISPLAY)}) and not a directory with model.onnx "
        f"(or onnx/model.onnx) and tokenizer.json"
    )


def _opener(model_name: str) -> tuple[str, Callable[[], Model]]:
    """The cache key for ``model_name`` and how to open it; ModelError for an unknown name."""
    if not isinstance(model_name, str) or not model_name:
        raise ModelError(f"unknown model '{model_name}': a model name must be a non-empty string")
    if model_name.lower() in default.ALIASES:
        return default.NAME, default.open_model
    layout = local.find_layout(model_name)
    if layout is None:
        raise _unknown(model_name)
    return f"dir:{layout.root}", lambda: local.open_model(layout)


def get_model(model_name: str) -> Model:
    """The model for ``model_name``, opened once per process (thread-safe); the session loads lazily."""
    key, open_model = _opener(model_name)
    model = _models.get(key)
    if model is not None:
        return model
    with _lock:
        key_lock = _key_locks.setdefault(key, threading.Lock())
    with key_lock:  # opening one model does not block opening another
        model = _models.get(key)
        if model is None:
            model = open_model()
            _models[key] = model
    return model


def resolve(model_name: str) -> ModelInfo:
    """Name, fingerprint, dims and window of a model, without running it when that can be avoided.

    Raises ModelError for an unknown name or files that fail verification. Repeats are cached.
    """
    info = _infos.get(model_name) if isinstance(model_name, str) else None
    if info is not None:
        return info
    key, _ = _opener(model_name)
    if key == default.NAME and key not in _models:
        default.verify_model_files()
        info = default.INFO
    else:
        info = get_model(model_name).info
    _infos[model_name] = info
    return info


def clear() -> None:
    """Forget every opened model (tests use this to observe a fresh load)."""
    with _lock:
        _models.clear()
        _infos.clear()
