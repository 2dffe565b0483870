"""A model in a local folder, in the layout its publisher ships (sentence-transformers / Hugging Face).

The folder holds ``tokenizer.json`` and a graph, ``onnx/model.onnx`` or ``model.onnx`` — or, for a
BERT-family checkpoint without one (``config.json`` ``model_type: bert`` + ``model.safetensors``), the
graph tesseradb builds itself (``bert_onnx``, cached like the default model's). The
sentence-transformers files say how to use it (docs/models.md#what-is-read-from-a-folder):

- ``modules.json``: a ``Normalize`` module means L2-normalised vectors; a folder without
  ``modules.json`` is read as before (mean pooling, normalised: the Xenova layout);
- ``1_Pooling/config.json`` (the Pooling module's folder): ``mean``, ``cls``, ``max`` or ``lasttoken``;
- ``config_sentence_transformers.json``: ``prompts`` — ``query`` and ``document`` (or ``passage``,
  ``corpus``) prefixes;
- the window: ``max_position_embeddings`` of ``config.json``, lowered by ``tokenizer_config.json``'s
  ``model_max_length`` and ``sentence_bert_config.json``'s ``max_seq_length``, less special tokens.

Column options override pooling and prompts and add ``dims`` (:mod:`tesseradb.embed.options`).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from tesseradb.embed.errors import ModelError
from tesseradb.embed.integrity import sha256_bytes, sha256_file
from tesseradb.embed.model import Model, ModelInfo, Prompts, load_tokenizer
from tesseradb.embed.options import ModelOptions
from tesseradb.embed.pooling import ST_MODES, Head

GRAPH_CANDIDATES = ("onnx/model.onnx", "model.onnx")
WEIGHTS = "model.safetensors"
DEFAULT_MAX_POSITIONS = 512
BERT_GRAPH_VERSION = 1
QUERY_PROMPTS = ("query",)
DOCUMENT_PROMPTS = ("document", "passage", "corpus", "doc")


@dataclass(frozen=True)
class LocalLayout:
    root: Path
    graph: Path | None          # None: built from ``weights`` (a BERT-family safetensors checkpoint)
    tokenizer: Path
    config: dict
    weights: Path | None = None
    files: dict = field(default_factory=dict, compare=False)   # the sentence-transformers files, read


def find_layout(name: str | os.PathLike[str]) -> LocalLayout | None:
    """The files of a local model folder, or None when ``name`` is not one."""
    root = Path(name).expanduser()
    if not root.is_dir():
        return None
    graph = next((root / c for c in GRAPH_CANDIDATES if (root / c).is_file()), None)
    tokenizer = root / "tokenizer.json"
    if not tokenizer.is_file():
        return None
    root = root.resolve()
    config = _read_json(root / "config.json")
    weights = root / WEIGHTS
    if graph is None:
        if not weights.is_file() or config.get("model_type") != "bert":
            return None
        return LocalLayout(root, None, tokenizer.resolve(), config, weights.resolve())
    return LocalLayout(root, graph.resolve(), tokenizer.resolve(), config)


def _read_json(path: Path) -> dict:
    if not path.is_file():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelError(f"cannot read {path}: {exc}") from exc
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True)
class Usage:
    """What the sentence-transformers files say: pooling, normalisation, prompts, max_seq_length."""

    pooling: str | None = "mean"     # None: the folder's pooling is not one we run (``problem`` says why)
    normalize: bool = True
    prompts: Prompts = Prompts()
    max_seq_length: int | None = None
    problem: str | None = None


def read_usage(root: Path) -> Usage:
    modules_path = root / "modules.json"
    modules = []
    if modules_path.is_file():
        try:
            modules = json.loads(modules_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelError(f"cannot read {modules_path}: {exc}") from exc
    types = [str(m.get("type", "")) for m in modules if isinstance(m, dict)]
    pool_dir = next((m.get("path", "") for m in modules if str(m.get("type", "")).endswith("Pooling")), "1_Pooling")
    pooling, problem = _pooling(root / pool_dir / "config.json")
    normalize = any(t.endswith("Normalize") for t in types) if modules else True
    st = _read_json(root / "config_sentence_transformers.json").get("prompts") or {}
    prompts = Prompts(query=_first(st, QUERY_PROMPTS), document=_first(st, DOCUMENT_PROMPTS))
    seq = _read_json(root / "sentence_bert_config.json").get("max_seq_length")
    return Usage(pooling, normalize, prompts, seq if isinstance(seq, int) and seq > 0 else None, problem)


def _first(prompts: dict, keys: tuple[str, ...]) -> str:
    return next((str(prompts[k]) for k in keys if isinstance(prompts.get(k), str)), "")


def _pooling(path: Path) -> tuple[str | None, str | None]:
    """(pooling, None), or (None, why) when the folder asks for a pooling we do not run."""
    config = _read_json(path)
    if not config:
        return "mean", None
    modes = [name for key, name in ST_MODES.items() if config.get(key)]
    others = [k for k, v in config.items() if k.startswith("pooling_mode") and v and k not in ST_MODES]
    if len(modes) != 1 or others:
        return None, (f"{path}: pooling {sorted(modes + others)} is not supported (one of mean, cls, max, "
                      "lasttoken); name one with the column option pooling='...'")
    return modes[0], None


def _window(layout: LocalLayout, specials: int, usage: Usage) -> int:
    """max_position_embeddings, lowered by model_max_length and max_seq_length, minus special tokens."""
    limit = int(layout.config.get("max_position_embeddings", DEFAULT_MAX_POSITIONS))
    model_max = _read_json(layout.root / "tokenizer_config.json").get("model_max_length")
    for lower in (model_max, usage.max_seq_length):
        if isinstance(lower, int) and 0 < lower < limit:
            limit = lower
    if limit - specials < 1:
        raise ModelError(f"model '{layout.root}': window of {limit} positions is too small")
    return limit - specials


def _bert_graph(layout: LocalLayout, weights_sha: str) -> bytes:
    """The graph of a BERT safetensors checkpoint, built once and cached (``bert_onnx``)."""
    from tesseradb.embed.bert_config import BertConfig
    from tesseradb.embed.cache import cache_root, load_or_build

    def build() -> tuple[bytes, dict]:
        from safetensors.numpy import load_file

        from tesseradb.embed import bert_onnx
        cfg = BertConfig.from_json(layout.config)
        graph = bert_onnx.build_bert(load_file(str(layout.weights)), cfg)
        try:
            graph, variant = bert_onnx.fuse(graph, cfg), "fused"
        except (bert_onnx.FusionError, ImportError):
            variant = "plain"
        return graph.SerializeToString(), {"source": os.fspath(layout.root), "variant": variant}

    path = cache_root() / "models" / "local" / f"{weights_sha[:24]}-bert-v{BERT_GRAPH_VERSION}.onnx"
    return load_or_build(path, weights_sha, build).data


def _fingerprint(layout: LocalLayout, head: Head, prompts: Prompts, window: int) -> str:
    """Files, pooling, normalisation, window; prompts and dims only when there are some, so a
    folder that had none keeps the fingerprint it always had."""
    files = ({"onnx_sha256": sha256_file(layout.graph)} if layout.graph is not None else
             {"weights_sha256": sha256_file(layout.weights), "bert_graph": BERT_GRAPH_VERSION})
    identity = {**files, "tokenizer_sha256": sha256_file(layout.tokenizer), "pooling": head.pooling,
                "normalize": "l2" if head.normalize else "none", "window": window}
    extra = {"query_prefix": prompts.query, "document_prefix": prompts.document, "dims": head.dims}
    identity.update({k: v for k, v in extra.items() if v})
    return sha256_bytes(json.dumps(identity, sort_keys=True).encode())


def open_model(layout: LocalLayout, options: ModelOptions = ModelOptions()) -> Model:
    """A Model for the folder. The width comes from config.json hidden_size, else from one inference."""
    usage = read_usage(layout.root)
    specials = load_tokenizer(str(layout.tokenizer)).num_special_tokens_to_add(is_pair=False)
    window = _window(layout, specials, usage)
    pooling = options.pooling or usage.pooling
    if pooling is None:
        raise ModelError(usage.problem or f"model '{layout.root}': unknown pooling")
    head = Head(pooling=pooling, normalize=usage.normalize, dims=options.dims)
    prompts = Prompts(query=usage.prompts.query if options.query_prefix is None else options.query_prefix,
                      document=usage.prompts.document if options.document_prefix is None else options.document_prefix)
    name = os.fspath(layout.root)
    if layout.graph is not None:
        graph_path = os.fspath(layout.graph)
        source = lambda: graph_path  # noqa: E731 - onnxruntime reads the file itself
    else:
        weights_sha = sha256_file(layout.weights)
        source = lambda: _bert_graph(layout, weights_sha)  # noqa: E731
    width = layout.config.get("hidden_size")
    info = ModelInfo(name, _fingerprint(layout, head, prompts, window), 0, window)
    model = Model(info, str(layout.tokenizer), source, head=Head(head.pooling, head.normalize), prompts=prompts)
    width = int(width) if isinstance(width, int) else model.measure_dims()
    if head.dims is not None and head.dims > width:
        raise ModelError(f"dims={head.dims} is above the width of model '{name}' ({width}); "
                         f"dims keeps the first N numbers of a {width}-number vector")
    model.head = head
    model.dims = head.dims or width
    return model
