"""A model in a local directory, Hugging Face "Xenova" layout: (onnx/)model.onnx + tokenizer.json."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from tesseradb.embed.errors import ModelError
from tesseradb.embed.integrity import sha256_bytes, sha256_file
from tesseradb.embed.model import Model, ModelInfo, load_tokenizer

GRAPH_CANDIDATES = ("onnx/model.onnx", "model.onnx")
DEFAULT_MAX_POSITIONS = 512


@dataclass(frozen=True)
class LocalLayout:
    root: Path
    graph: Path
    tokenizer: Path
    config: dict


def find_layout(name: str) -> LocalLayout | None:
    """The files of a local model directory, or None when ``name`` is not one."""
    root = Path(name).expanduser()
    if not root.is_dir():
        return None
    graph = next((root / c for c in GRAPH_CANDIDATES if (root / c).is_file()), None)
    tokenizer = root / "tokenizer.json"
    if graph is None or not tokenizer.is_file():
        return None
    root = root.resolve()
    return LocalLayout(root, graph.resolve(), tokenizer.resolve(), _read_json(root / "config.json"))


def _read_json(path: Path) -> dict:
    if not path.is_file():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read {path}: {exc}") from exc
    return value if isinstance(value, dict) else {}


def _window(layout: LocalLayout, specials: int) -> int:
    """max_position_embeddings (or the tokenizer's model_max_length, if smaller) minus special tokens."""
    limit = int(layout.config.get("max_position_embeddings", DEFAULT_MAX_POSITIONS))
    tok_cfg = _read_json(layout.root / "tokenizer_config.json")
    model_max = tok_cfg.get("model_max_length")
    if isinstance(model_max, int) and 0 < model_max < limit:
        limit = model_max
    if limit - specials < 1:
        raise ModelError(f"model '{layout.root}': window of {limit} positions is too small")
    return limit - specials


def _fingerprint(layout: LocalLayout, window: int) -> str:
    return sha256_bytes(json.dumps({
        "onnx_sha256": sha256_file(layout.graph), "tokenizer_sha256": sha256_file(layout.tokenizer),
        "pooling": "mean", "normalize": "l2", "window": window,
    }, sort_keys=True).encode())


def open_model(layout: LocalLayout) -> Model:
    """A Model for the directory. dims come from config.json hidden_size, else from one inference."""
    specials = load_tokenizer(str(layout.tokenizer)).num_special_tokens_to_add(is_pair=False)
    window = _window(layout, specials)
    name = os.fspath(layout.root)
    dims = layout.config.get("hidden_size")
    info = ModelInfo(name, _fingerprint(layout, window), int(dims) if isinstance(dims, int) else 0, window)
    model = Model(info, str(layout.tokenizer), lambda: os.fspath(layout.graph))
    if not model.dims:
        model.dims = model.measure_dims()
    return model
