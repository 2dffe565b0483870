"""all-MiniLM-L6-v2-int8: the built-in model with int8 weights, an opt-in name.

Made from the same verified weights as the float32 model: its fused float32 graph (built and cached
by :mod:`tesseradb.embed.default`) has its SkipLayerNormalization nodes split back into Add +
LayerNormalization (:func:`bert_onnx.split_skip_layer_norm`: onnxruntime's CPU kernel for the fused
node is the slow one), its attention rewritten into int8 products and its GELU into FastGelu
(:mod:`tesseradb.embed.int8_graph`), then goes through ``onnxruntime.quantization.quantize_dynamic``
with int8 weights, one scale per output channel, on every quantizable operator (the embedding
layer included; activations are quantized per call at run time). Every text runs in a call of its
own (``max_rows=1``), so a text's vector depends on that text alone. The result is cached like the
float32 graph, under its own name, and keyed by the weights' hash.

Why this recipe (version 3), measured with tests/benchmarks/bench_int8_cpu.py on the manual's
recursive 256/32 chunks, one thread, tokens per CPU second: version 2 (the same without the
attention and GELU rewrites: QAttention, whose attention itself ran in float32, and erf GELU) gave
1.22x version 1 (per-tensor weights, SkipLayerNormalization fused, batches of up to 2048 padded
tokens); the int8 attention and FastGelu add about 12% to version 2 at the same cosine to float32
(0.993 on average; docs/benchmarks.md). Each version's vectors differ from the others', so its
fingerprint does too: chunk reuse and embedding shards never mix them.
"""
from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from tesseradb.embed import default
from tesseradb.embed.cache import CachedGraph, cache_root, load_or_build
from tesseradb.embed.errors import ModelError
from tesseradb.embed.integrity import sha256_bytes
from tesseradb.embed.model import Model, ModelInfo

if TYPE_CHECKING:
    import onnx

NAME = f"{default.NAME}-int8"
ALIASES_DISPLAY = (NAME,)  # matched case-insensitively, like the float32 names
# Bump when the quantization recipe changes: the cache file name carries it.
QUANT_VERSION = 3
RECIPE = {"method": "onnxruntime quantize_dynamic", "weights": "int8, per output channel, symmetric",
          "activations": "uint8, dynamic, per call", "operators": "all quantizable (fused graph)",
          "layer_norm": "SkipLayerNormalization split into Add + LayerNormalization", "texts_per_call": 1,
          "attention": "Q K^T and exp(scores - row max) V as int8 products (MatMulIntegerToFloat), "
                       "K and V int8 symmetric per call, exp as uint8 at 1/255",
          "gelu": "FastGelu (tanh approximation)"}
MAX_ROWS = 1
FINGERPRINT = sha256_bytes(json.dumps({
    "base_fingerprint": default.FINGERPRINT, "quantization": RECIPE, "version": QUANT_VERSION,
}, sort_keys=True).encode())
INFO = ModelInfo(NAME, FINGERPRINT, default.DIMS, default.WINDOW)
_MS_DOMAIN = "com.microsoft"


def graph_path(root: Path | None = None) -> Path:
    return (root or cache_root()) / "models" / NAME / f"bert-int8-v{QUANT_VERSION}.onnx"


class _DropQuantizerHints(logging.Filter):
    """quantize_dynamic logs hints on the root logger that are not for users: 'consider pre-processing',
    and 'check if the model is already quantized' (the int8 attention's own QuantizeLinear nodes)."""

    HINTS = ("pre-processing before quantization", "check if the model is already quantized")

    def filter(self, record: logging.LogRecord) -> bool:
        return not any(hint in record.getMessage() for hint in self.HINTS)


def quantize(float_graph: bytes) -> bytes:
    """int8 graph bytes for a fused float32 graph (the recipe above)."""
    import onnx

    from tesseradb.embed.int8_graph import fast_gelu, int8_attention
    return quantize_weights(fast_gelu(int8_attention(onnx.load_from_string(float_graph))))


def quantize_weights(model: onnx.ModelProto) -> bytes:
    """Layer norms split, then ``quantize_dynamic`` (per-channel int8 weights, every quantizable operator)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from tesseradb.embed.bert_onnx import split_skip_layer_norm
    from tesseradb.embed.int8_graph import keep_float

    model = split_skip_layer_norm(model)
    if not any(o.domain == _MS_DOMAIN for o in model.opset_import):
        # the fused operators live in com.microsoft; ONNX shape inference needs the domain declared
        model.opset_import.append(onnx.helper.make_opsetid(_MS_DOMAIN, 1))
    hint = _DropQuantizerHints()
    logging.getLogger().addFilter(hint)
    try:
        with tempfile.TemporaryDirectory(prefix="tessera-int8.") as tmp:
            out = Path(tmp) / "model.onnx"
            quantize_dynamic(model, out, weight_type=QuantType.QInt8, per_channel=True,
                             nodes_to_exclude=keep_float(model),
                             extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})
            return out.read_bytes()
    finally:
        logging.getLogger().removeFilter(hint)


def _build(directory: Path | None) -> tuple[bytes, dict]:
    import onnxruntime as ort
    base = default.load_graph(directory)
    if base.meta.get("variant") != "fused":
        raise ModelError(f"model '{NAME}' is quantized from the fused float32 graph, but onnxruntime "
                         f"{ort.__version__} could not fuse it (variant {base.meta.get('variant')!r}); "
                         f"use '{default.NAME}'")
    return quantize(base.data), {"model": NAME, "quant_version": QUANT_VERSION, "recipe": RECIPE,
                                 "base_onnx_sha256": base.meta.get("onnx_sha256"),
                                 "onnxruntime": ort.__version__}


def load_graph(directory: Path | None = None, cache: Path | None = None) -> CachedGraph:
    """The cached int8 graph, quantized on first use from the verified float32 graph."""
    default.verify_model_files(directory)
    return load_or_build(graph_path(cache), default.EXPECTED_SHA256[default.WEIGHTS],
                         lambda: _build(directory))


def open_model(directory: str | Path | None = None) -> Model:
    """The int8 model from verified files; its graph is loaded (or built) when first needed."""
    root = default.verify_model_files(directory)
    return Model(INFO, str(root / default.TOKENIZER), lambda: load_graph(root).data, max_rows=MAX_ROWS)
