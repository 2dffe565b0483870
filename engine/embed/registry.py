"""Model names -> models. One instance per resolved model per process."""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tesseradb.embed import cache, default, int8, local
from tesseradb.embed.errors import ModelError
from tesseradb.embed.model import Model, ModelInfo


@dataclass(frozen=True)
class Builtin:
    """A model the engine ships: its names, identity, where its graph is cached, how to open it."""

    info: ModelInfo
    aliases: tuple[str, ...]
    precision: str
    graph_path: Callable[[], Path]
    open: Callable[[], Model]


BUILTINS: tuple[Builtin, ...] = (
    Builtin(default.INFO, default.ALIASES_DISPLAY, "float32", default.graph_path, default.open_model),
    Builtin(int8.INFO, int8.ALIASES_DISPLAY, "int8", int8.graph_path, int8.open_model),
)
_BY_ALIAS = {alias.lower(): b for b in BUILTINS for alias in b.aliases}  # matched case-insensitively

_models: dict[str, Model] = {}
_infos: dict[str, ModelInfo] = {}
_lock = threading.Lock()
_key_locks: dict[str, threading.Lock] = {}


def _unknown(model_name: str) -> ModelError:
    return ModelError(
        f"unknown model '{model_name}': not a built-in model name "
        f"({', '.join(a for b in BUILTINS for a in b.aliases)}) and not a directory with model.onnx "
        f"(or onnx/model.onnx) and tokenizer.json"
    )


def _opener(model_name: str) -> tuple[str, Callable[[], Model]]:
    """The cache key for ``model_name`` and how to open it; ModelError for an unknown name."""
    if not isinstance(model_name, str) or not model_name:
        raise ModelError(f"unknown model '{model_name}': a model name must be a non-empty string")
    builtin = _BY_ALIAS.get(model_name.lower())
    if builtin is not None:
        return builtin.info.name, builtin.open
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
    builtin = _BY_ALIAS.get(model_name.lower())
    if builtin is not None and key not in _models:
        default.verify_model_files()  # every built-in model is made from the default's files
        info = builtin.info
    else:
        info = get_model(model_name).info
    _infos[model_name] = info
    return info


def clear() -> None:
    """Forget every opened model (tests use this to observe a fresh load)."""
    with _lock:
        _models.clear()
        _infos.clear()


def list_models() -> list[dict]:
    """Every built-in model the engine can load, for ``SHOW MODELS``: one dict per model.

    Keys: name, aliases, dimensions, window (content tokens), pooling, precision, distribution,
    version and path (where the files come from), license, weights_sha256 (the pinned hash of the
    weights), fingerprint (what a column records; vectors of different fingerprints never mix),
    graph_cached (whether its ONNX graph is already built in the cache) and graph_path.
    Local directory models are not listed: any directory with the Xenova layout can be named.
    """
    try:
        path, version = str(default.package_dir()), default.distribution_version()
    except ModelError:
        path, version = None, None
    return [{
        "name": b.info.name, "aliases": list(b.aliases), "dimensions": b.info.dims,
        "window": b.info.window, "pooling": "mean, L2-normalized", "precision": b.precision,
        "distribution": default.DISTRIBUTION, "version": version, "path": path,
        "license": default.LICENSE, "weights_sha256": default.EXPECTED_SHA256[default.WEIGHTS],
        "fingerprint": b.info.fingerprint,
        "graph_cached": cache.is_cached(b.graph_path(), default.EXPECTED_SHA256[default.WEIGHTS]),
        "graph_path": str(b.graph_path()),
    } for b in BUILTINS]
