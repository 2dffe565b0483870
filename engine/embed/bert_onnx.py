"""Assemble a BERT encoder as an ONNX graph from safetensors weights, with ``onnx.helper``.

The graph is emitted in the shape the PyTorch exporter gives a Hugging Face ``BertModel`` (Gather
embeddings, MatMul+Add projections, Reshape/Transpose heads, ``(1 - mask) * -10000`` additive mask,
erf GELU, LayerNormalization), because that is the pattern onnxruntime's transformer optimizer
recognises. :func:`fuse` then rewrites it into the fused contrib operators (EmbedLayerNormalization,
Attention, SkipLayerNormalization, BiasGelu), which run several times faster on CPU.

Inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64 ``[batch, seq]``); output
``last_hidden_state`` (float32 ``[batch, seq, hidden]``). Pooling happens outside the graph.
"""
from __future__ import annotations

import contextlib
import logging
import math
from collections import Counter
from collections.abc import Iterator

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from tesseradb.embed.bert_config import BertConfig

OPSET = 17
OUTPUT_NAME = "last_hidden_state"
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")
# Fused operator counts a 6-layer graph must show after fusion (per layer: 1 Attention, 2 SkipLN, 1 BiasGelu).
FUSED_OPS = ("EmbedLayerNormalization", "Attention", "SkipLayerNormalization", "BiasGelu")


class FusionError(RuntimeError):
    """onnxruntime's optimizer did not produce the fused graph we expect (the plain one still works)."""


class _GraphBuilder:
    """Collects nodes and initializers with deterministic names."""

    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.inits: list[onnx.TensorProto] = []
        self._count: Counter[str] = Counter()

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits.append(numpy_helper.from_array(value, name))
        return name

    def ints(self, name: str, value: int | list[int]) -> str:
        return self.const(name, np.array(value, dtype=np.int64))

    def op(self, op_type: str, inputs: list[str], name: str, **attrs: object) -> str:
        self._count[name] += 1
        unique = name if self._count[name] == 1 else f"{name}_{self._count[name]}"
        self.nodes.append(helper.make_node(op_type, inputs, [unique], name=unique, **attrs))
        return unique


def _weight(w: dict[str, np.ndarray], key: str) -> np.ndarray:
    try:
        return np.ascontiguousarray(w[key], dtype=np.float32)
    except KeyError:
        raise KeyError(f"weight {key!r} missing from the checkpoint") from None


def _linear(g: _GraphBuilder, x: str, w: dict[str, np.ndarray], prefix: str) -> str:
    """x @ W^T + b, as MatMul then Add (the exporter's form)."""
    weight = g.const(f"{prefix}.weight_t", np.ascontiguousarray(_weight(w, f"{prefix}.weight").T))
    bias = g.const(f"{prefix}.bias", _weight(w, f"{prefix}.bias"))
    mm = g.op("MatMul", [x, weight], f"{prefix}/MatMul")
    return g.op("Add", [bias, mm], f"{prefix}/Add")


def _layer_norm(g: _GraphBuilder, x: str, w: dict[str, np.ndarray], prefix: str, eps: float) -> str:
    gamma = g.const(f"{prefix}.weight", _weight(w, f"{prefix}.weight"))
    beta = g.const(f"{prefix}.bias", _weight(w, f"{prefix}.bias"))
    return g.op("LayerNormalization", [x, gamma, beta], f"{prefix}/LayerNorm", axis=-1, epsilon=eps)


def _embeddings(g: _GraphBuilder, w: dict[str, np.ndarray], cfg: BertConfig) -> str:
    """LayerNorm(word[input_ids] + type[token_type_ids] + position[0:seq]), as the exporter writes it."""
    p = "embeddings"
    word_table = g.const(f"{p}.word", _weight(w, f"{p}.word_embeddings.weight"))
    type_table = g.const(f"{p}.type", _weight(w, f"{p}.token_type_embeddings.weight"))
    pos_table = g.const(f"{p}.position", _weight(w, f"{p}.position_embeddings.weight"))
    words = g.op("Gather", [word_table, "input_ids"], f"{p}/word")
    types = g.op("Gather", [type_table, "token_type_ids"], f"{p}/type")
    summed = g.op("Add", [words, types], f"{p}/Add")
    shape = g.op("Shape", ["input_ids"], f"{p}/Shape")
    seq_len = g.op("Gather", [shape, g.ints("const.one_scalar", 1)], f"{p}/seq_len", axis=0)
    ends = g.op("Unsqueeze", [seq_len, g.ints("const.axes0", [0])], f"{p}/ends")
    positions = g.const(f"{p}.position_ids", np.arange(cfg.max_positions, dtype=np.int64)[None, :])
    starts, axes, steps = g.ints("const.zero", [0]), g.ints("const.axes1", [1]), g.ints("const.one", [1])
    slice_inputs = [positions, starts, ends, axes, steps]
    pos_ids = g.op("Slice", slice_inputs, f"{p}/pos_ids")
    pos = g.op("Gather", [pos_table, pos_ids], f"{p}/position")
    total = g.op("Add", [summed, pos], f"{p}/Add")
    return _layer_norm(g, total, w, f"{p}.LayerNorm", cfg.eps)


def _additive_mask(g: _GraphBuilder) -> str:
    """attention_mask [B,S] -> (1 - mask) * -10000 as [B,1,1,S] float."""
    m1 = g.op("Unsqueeze", ["attention_mask", g.ints("const.axes_1", [1])], "mask/Unsqueeze")
    m2 = g.op("Unsqueeze", [m1, g.ints("const.axes_2", [2])], "mask/Unsqueeze")
    mf = g.op("Cast", [m2], "mask/Cast", to=TensorProto.FLOAT)
    inv = g.op("Sub", [g.const("const.f_one", np.array(1.0, np.float32)), mf], "mask/Sub")
    return g.op("Mul", [inv, g.const("const.mask_value", np.array(-10000.0, np.float32))], "mask/Mul")


def _heads(g: _GraphBuilder, x: str, prefix: str, perm: list[int], cfg: BertConfig) -> str:
    shape = g.ints(f"{prefix}.heads_shape", [0, 0, cfg.heads, cfg.head_size])
    reshaped = g.op("Reshape", [x, shape], f"{prefix}/Reshape")
    return g.op("Transpose", [reshaped], f"{prefix}/Transpose", perm=perm)


def _attention(g: _GraphBuilder, x: str, mask: str, w: dict[str, np.ndarray], p: str, cfg: BertConfig) -> str:
    q = _heads(g, _linear(g, x, w, f"{p}.self.query"), f"{p}.q", [0, 2, 1, 3], cfg)
    k = _heads(g, _linear(g, x, w, f"{p}.self.key"), f"{p}.k", [0, 2, 3, 1], cfg)
    v = _heads(g, _linear(g, x, w, f"{p}.self.value"), f"{p}.v", [0, 2, 1, 3], cfg)
    scores = g.op("MatMul", [q, k], f"{p}/scores")
    scale = g.const(f"{p}.scale", np.array(math.sqrt(cfg.head_size), np.float32))
    scaled = g.op("Div", [scores, scale], f"{p}/Div")
    probs = g.op("Softmax", [g.op("Add", [scaled, mask], f"{p}/mask_add")], f"{p}/Softmax", axis=-1)
    context = g.op("MatMul", [probs, v], f"{p}/context")
    ctx = g.op("Transpose", [context], f"{p}/ctx_Transpose", perm=[0, 2, 1, 3])
    merged_shape = g.ints(f"{p}.merged_shape", [0, 0, cfg.hidden])
    merged = g.op("Reshape", [ctx, merged_shape], f"{p}/ctx_Reshape")
    out = _linear(g, merged, w, f"{p}.output.dense")
    residual = g.op("Add", [out, x], f"{p}/residual")
    return _layer_norm(g, residual, w, f"{p}.output.LayerNorm", cfg.eps)


def _gelu(g: _GraphBuilder, x: str, p: str) -> str:
    """0.5 * x * (1 + erf(x / sqrt(2))), in the exporter's node order."""
    div = g.op("Div", [x, g.const(f"{p}.sqrt2", np.array(math.sqrt(2.0), np.float32))], f"{p}/gelu_Div")
    erf = g.op("Erf", [div], f"{p}/gelu_Erf")
    plus = g.op("Add", [erf, g.const(f"{p}.one", np.array(1.0, np.float32))], f"{p}/gelu_Add")
    prod = g.op("Mul", [x, plus], f"{p}/gelu_Mul")
    return g.op("Mul", [prod, g.const(f"{p}.half", np.array(0.5, np.float32))], f"{p}/gelu_Mul")


def _feed_forward(g: _GraphBuilder, x: str, w: dict[str, np.ndarray], p: str, cfg: BertConfig) -> str:
    hidden = _gelu(g, _linear(g, x, w, f"{p}.intermediate.dense"), p)
    out = _linear(g, hidden, w, f"{p}.output.dense")
    residual = g.op("Add", [out, x], f"{p}/ffn_residual")
    return _layer_norm(g, residual, w, f"{p}.output.LayerNorm", cfg.eps)


def _strip_prefix(weights: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Accept both ``bert.encoder...`` (BertForX checkpoints) and ``encoder...`` keys."""
    if any(k.startswith("embeddings.") for k in weights):
        return weights
    return {k.removeprefix("bert."): v for k, v in weights.items()}


def build_bert(weights: dict[str, np.ndarray], cfg: BertConfig) -> onnx.ModelProto:
    """The plain (unfused) BERT encoder graph, standard ONNX operators only."""
    w = _strip_prefix(weights)
    g = _GraphBuilder()
    x = _embeddings(g, w, cfg)
    mask = _additive_mask(g)
    for i in range(cfg.num_layers):
        p = f"encoder.layer.{i}"
        x = _attention(g, x, mask, w, f"{p}.attention", cfg)
        x = _feed_forward(g, x, w, p, cfg)
    g.nodes.append(helper.make_node("Identity", [x], [OUTPUT_NAME], name="output"))
    dims = ["batch", "sequence"]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, dims) for n in INPUT_NAMES]
    output = helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, [*dims, cfg.hidden])
    graph = helper.make_graph(g.nodes, "bert_encoder", inputs, [output], initializer=g.inits)
    opsets = [helper.make_opsetid("", OPSET)]
    model = helper.make_model(graph, opset_imports=opsets, producer_name="tesseradb")
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def op_counts(model: onnx.ModelProto) -> Counter[str]:
    return Counter(node.op_type for node in model.graph.node)


@contextlib.contextmanager
def _quiet_optimizer_logs() -> Iterator[None]:
    """The optimizer's modules log under bare names (fusion_*, onnx_model*); silence their warnings."""
    prefixes = ("fusion_", "onnx_model", "optimizer", "shape_infer", "onnxruntime.transformers")
    names = [n for n in list(logging.Logger.manager.loggerDict) if n.startswith(prefixes)]
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def fuse(model: onnx.ModelProto, cfg: BertConfig) -> onnx.ModelProto:
    """Apply onnxruntime's BERT fusions; raise FusionError unless every expected fusion happened."""
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    options = FusionOptions("bert")
    options.enable_shape_inference = False  # needs sympy, which we do not depend on; the graph is static

    with _quiet_optimizer_logs():
        work = onnx.ModelProto()
        work.CopyFrom(model)  # optimize_model rewrites its input in place
        optimized = optimize_model(work, model_type="bert", num_heads=cfg.heads, hidden_size=cfg.hidden,
                                   optimization_options=options, opt_level=0)
    fused = optimized.model
    counts = op_counts(fused)
    expected = {"EmbedLayerNormalization": 1, "Attention": cfg.num_layers,
                "SkipLayerNormalization": 2 * cfg.num_layers, "BiasGelu": cfg.num_layers}
    missing = {op: n for op, n in expected.items() if counts[op] < n}
    if missing:
        raise FusionError(f"BERT fusion incomplete: expected at least {missing}, got {dict(counts)}")
    if [o.name for o in fused.graph.output] != [OUTPUT_NAME]:
        raise FusionError("BERT fusion changed the graph outputs")
    return fused


def split_skip_layer_norm(model: onnx.ModelProto) -> onnx.ModelProto:
    """Each fused SkipLayerNormalization back into ``Add(bias)``, ``Add(skip)``, ``LayerNormalization``.

    Same arithmetic, in the exporter's order (the projection's bias first, then the residual).
    onnxruntime 1.32's CPU kernel for SkipLayerNormalization took 3.6 ms on a [7, 258, 384]
    batch where Add + LayerNormalization took 0.7 ms (one thread), so the int8 graph runs the
    split form; sessions keep onnxruntime from fusing it back (``model.DISABLED_OPTIMIZERS``).
    A node that asks for its extra outputs (mean, inverse std, the sum) is kept as it is.
    """
    nodes: list[onnx.NodeProto] = []
    for node in model.graph.node:
        if node.op_type != "SkipLayerNormalization" or any(node.output[1:]):
            nodes.append(node)
            continue
        eps = next((a.f for a in node.attribute if a.name == "epsilon"), 1e-12)
        x, skip, gamma, *rest = node.input
        beta, bias = (list(rest) + ["", ""])[:2]
        if bias:
            nodes.append(helper.make_node("Add", [x, bias], [f"{node.name}/biased"], name=f"{node.name}/bias"))
            x = f"{node.name}/biased"
        nodes.append(helper.make_node("Add", [x, skip], [f"{node.name}/sum"], name=f"{node.name}/residual"))
        nodes.append(helper.make_node("LayerNormalization", [f"{node.name}/sum", gamma, *([beta] if beta else [])],
                                      [node.output[0]], name=f"{node.name}/LayerNorm", axis=-1, epsilon=eps))
    del model.graph.node[:]
    model.graph.node.extend(nodes)
    return model
