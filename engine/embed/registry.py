"""Model names (and a column's model options) -> models. One instance per resolved model per process.

A name is, in this order: a built-in model's alias; a remote endpoint in Manticore's syntax
(``openai/...``, ``voyage:...``, ``ollama:...``: :mod:`.remote.providers`); a local folder; a Hugging
Face id found offline (:mod:`.hub`). The column's options (:mod:`.options`) change the vectors, so
they are part of what identifies an opened model.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tesseradb.embed import cache, default, hub, int8, local
from tesseradb.embed.errors import ModelError
from tesseradb.embed.model import Model, ModelInfo
from tesseradb.embed.options import ModelOptions
from tesseradb.embed.remote import providers
from tesseradb.embed.remote.access import UNRESTRICTED, RemoteAccess
from tesseradb.embed.remote.model import RemoteModel


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
    if hub.is_hub_id(model_name):
        return hub.missing(model_name)
    return ModelError(
        f"unknown model '{model_name}': not a built-in model name "
        f"({', '.join(a for b in BUILTINS for a in b.aliases)}), not a remote model (openai/..., voyage:..., "
        f"jina:..., ollama:...), and not a folder with tokenizer.json and model.onnx (or onnx/model.onnx, "
        f"or a BERT model.safetensors)"
    )


def _local_opener(layout: local.LocalLayout, options: ModelOptions) -> tuple[str, Callable[[], Model]]:
    return f"dir:{layout.root}|{options.key()[:4]}", lambda: local.open_model(layout, options)


def _tokenizer(name: str):  # noqa: ANN202 - a tokenizers.Tokenizer, loaded with the model
    """The tokenizer of a model (name, folder or Hugging Face id) that counts a remote model's tokens."""
    from tesseradb.embed.model import load_tokenizer
    builtin = _BY_ALIAS.get(name.lower())
    if builtin is not None:
        return load_tokenizer(str(default.package_dir() / default.TOKENIZER))
    folder = hub.find(name) if hub.is_hub_id(name) else Path(name).expanduser()
    if folder is None or not (folder / "tokenizer.json").is_file():
        raise ModelError(f"tokenizer '{name}': no tokenizer.json found for it (a model name or a folder)")
    return load_tokenizer(str(folder / "tokenizer.json"))


def _opener(model_name: str, options: ModelOptions) -> tuple[str, Callable[[], Model | RemoteModel]]:
    """The cache key for ``model_name`` with ``options`` and how to open it; ModelError for an unknown name."""
    if not isinstance(model_name, str) or not model_name:
        raise ModelError(f"unknown model '{model_name}': a model name must be a non-empty string")
    builtin = _BY_ALIAS.get(model_name.lower())
    if builtin is not None:
        if options.pooling is None and options.dims is None and options.query_prefix is None \
                and options.document_prefix is None:
            return builtin.info.name, builtin.open
        return f"builtin:{builtin.info.name}|{options.key()[:4]}", lambda: _builtin_with(builtin, options)
    remote = providers.parse(model_name)
    if remote is not None:
        provider, model = remote
        if options.pooling is not None:
            raise ModelError(f"pooling applies to local models; '{model_name}' is remote (its endpoint pools)")
        tok = options.tokenizer
        return (f"remote:{provider.name}:{model}|{options.key()}",
                lambda: RemoteModel(provider, model, options, _tokenizer(tok) if tok else None, name=model_name))
    layout = local.find_layout(model_name)
    if layout is None and hub.is_hub_id(model_name):
        folder = hub.find(model_name)
        layout = local.find_layout(folder) if folder is not None else None
    if layout is None:
        raise _unknown(model_name)
    return _local_opener(layout, options)


def _builtin_with(builtin: Builtin, options: ModelOptions) -> Model:
    """A built-in model with prompts, pooling or dims from the column: its own fingerprint."""
    import json

    from tesseradb.embed.integrity import sha256_bytes
    from tesseradb.embed.model import Prompts
    from tesseradb.embed.pooling import Head
    base = builtin.open()
    if options.dims is not None and options.dims > base.dims:
        raise ModelError(f"dims={options.dims} is above the width of model '{builtin.info.name}' ({base.dims})")
    head = Head(options.pooling or "mean", True, options.dims)
    prompts = Prompts(options.query_prefix or "", options.document_prefix or "")
    fingerprint = sha256_bytes(json.dumps({"model": builtin.info.fingerprint, "pooling": head.pooling,
                                           "dims": head.dims, "query_prefix": prompts.query,
                                           "document_prefix": prompts.document}, sort_keys=True).encode())
    info = ModelInfo(builtin.info.name, fingerprint, options.dims or base.dims, builtin.info.window)
    return Model(info, str(default.package_dir() / default.TOKENIZER), base._graph, head=head, prompts=prompts,
                 max_rows=base.max_rows)


def get_model(model_name: str, options: ModelOptions | None = None) -> Model | RemoteModel:
    """The model for ``model_name`` (with a column's ``options``), opened once per process
    (thread-safe); a local session loads lazily, a remote model is not contacted."""
    key, open_model = _opener(model_name, options or ModelOptions())
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


def model_for(model_name: str, options: ModelOptions | None = None,
              access: RemoteAccess = UNRESTRICTED) -> Model | RemoteModel:
    """The model ready to embed for a connection whose operator allows ``access``: a remote model is
    checked against the allow-list, given its key, and probed once per process for its width."""
    model = get_model(model_name, options)
    if not isinstance(model, RemoteModel):
        return model
    view = model.bound(access)
    if model.width is None:
        with _key_locks.setdefault(f"probe:{id(model)}", threading.Lock()):
            if model.width is None:
                model.learn(view.probe())
        view = model.bound(access)
    return view


def is_remote(model_name: str) -> bool:
    return providers.parse(model_name) is not None


def names_a_path(model_name: str) -> bool:
    """True when ``model_name`` is read as a folder path: not a built-in name, not a remote model,
    not a Hugging Face id already in the caches (those stay usable over a server)."""
    if not isinstance(model_name, str) or model_name.lower() in _BY_ALIAS or is_remote(model_name):
        return False
    return not (hub.is_hub_id(model_name) and hub.find(model_name) is not None)


def resolve(model_name: str, options: ModelOptions | None = None, access: RemoteAccess = UNRESTRICTED) -> ModelInfo:
    """Name, fingerprint, dims and window of a model, without running it when that can be avoided
    (a remote model is asked once for its width, as Manticore checks it at CREATE).

    Raises ModelError for an unknown name or files that fail verification. Repeats are cached.
    """
    options = options or ModelOptions()
    cache_key = (model_name, options.key()) if isinstance(model_name, str) else None
    info = _infos.get(cache_key) if cache_key is not None else None
    if info is not None:
        if is_remote(model_name):
            model_for(model_name, options, access)     # the allow-list is asked every time
        return info
    key, _ = _opener(model_name, options)
    builtin = _BY_ALIAS.get(model_name.lower())
    if builtin is not None and key not in _models and key == builtin.info.name:
        default.verify_model_files()  # every built-in model is made from the default's files
        info = builtin.info
    else:
        info = model_for(model_name, options, access).info
    _infos[cache_key] = info
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
