"""The int8 recipe's rewrites of the fused float32 graph, made before ``quantize_dynamic`` (version 3).

**Attention in int8.** ``quantize_dynamic`` turns a fused ``Attention`` node into ``QAttention``,
which multiplies the input by the Q, K and V weights in int8 but runs the attention itself (Q K^T,
then the probabilities times V) in float32: at 256 tokens that part was a third of the model's
time. :func:`int8_attention` replaces each fused Attention node with:

* Q, K and V as three ``MatMul`` + ``Add`` (``quantize_dynamic`` makes them int8 products that share
  one quantized input);
* scores = Q K^T / sqrt(head size) by ``MatMulIntegerToFloat``: Q uint8 (``DynamicQuantizeLinear``),
  K int8, symmetric, one scale per call;
* e = exp(scores - the row's largest score), so every row's largest is exactly 1, quantized to
  uint8 with the fixed scale 1/255. Quantizing the normalized probabilities instead (a row's largest
  far below 1 when its attention is spread) lost the small ones: cosine to float32 0.9906 mean /
  0.9804 min on 600 of the manual's chunks, against 0.9931 / 0.9865 this way;
* context = (e V) / (sum of e over the real keys), e V by ``MatMulIntegerToFloat`` with V int8,
  symmetric. Padding (a batch of texts of different lengths): K's and V's padded rows are zeroed
  and the row sums count only the real keys (e times the mask, one matrix-vector product), so padded
  keys contribute nothing, with no additive mask over the scores. A padded key's score is then 0,
  which can still be a short row's largest (its e then stays below 1, coarser): the built-in int8
  model runs every text alone, without padding.

**FastGelu.** :func:`fast_gelu`: each ``BiasGelu`` (erf GELU) becomes ``FastGelu`` (the tanh
approximation), a cheaper CPU kernel.

The attention's own nodes (already int8 where they should be, and a float ``MatMul`` that sums e)
are not for ``quantize_dynamic``: :func:`keep_float` names them. docs/models.md ("The int8
variant") has the figures.
"""
from __future__ import annotations

import math

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS_DOMAIN = "com.microsoft"
MASK_INPUT = "attention_mask"
CORE = "core"                 # names of the attention's own nodes: {attention}/core/{step} (keep_float)
E_SCALE = 1.0 / 255.0         # e is in [0, 1] with each row's largest exactly 1
_C = "int8_attention"         # prefix of the shared constants and mask tensors
_ATTENTION_INPUTS = 4         # input, weights, bias, mask index: any more (past state, extra bias) is not rewritten


def fast_gelu(model: onnx.ModelProto) -> onnx.ModelProto:
    """Each BiasGelu(x, bias) as FastGelu(x, bias): the tanh approximation of GELU."""
    for node in model.graph.node:
        if node.op_type == "BiasGelu" and node.domain == MS_DOMAIN:
            node.op_type = "FastGelu"
    return model


def keep_float(model: onnx.ModelProto) -> list[str]:
    """Names of the rewrite's nodes ``quantize_dynamic`` must leave as they are (``nodes_to_exclude``):
    all but the Q, K and V projections."""
    return [n.name for n in model.graph.node if f"/{CORE}/" in n.name or n.name.startswith(f"{_C}/")]


def int8_attention(model: onnx.ModelProto) -> onnx.ModelProto:
    """Each fused Attention node (4 inputs, weights and bias constant) as the int8 form above."""
    graph = model.graph
    if MASK_INPUT not in {i.name for i in graph.input}:
        raise ValueError(f"the graph has no '{MASK_INPUT}' input")
    inits = {t.name: t for t in graph.initializer}
    nodes: list[onnx.NodeProto] = []
    used: set[str] = set()
    new_inits = _constants()
    rewritten = 0
    for node in graph.node:
        if not _rewritable(node, inits):
            nodes.append(node)
            continue
        x, w_name, b_name = node.input[:3]
        weights, bias = numpy_helper.to_array(inits[w_name]), numpy_helper.to_array(inits[b_name])
        heads = next(a.i for a in node.attribute if a.name == "num_heads")
        scale = next((a.f for a in node.attribute if a.name == "scale"), 0.0)
        new_nodes, tensors = _rewrite(node.name, x, node.output[0], weights, bias, heads, scale)
        nodes += new_nodes
        new_inits += tensors
        used |= {w_name, b_name}
        rewritten += 1
    if not rewritten:
        return model
    still_used = {i for n in nodes for i in n.input}
    kept = [t for t in graph.initializer if t.name not in used or t.name in still_used]
    del graph.initializer[:]
    graph.initializer.extend(kept + new_inits)
    del graph.node[:]
    graph.node.extend(_mask_nodes() + nodes)
    # the contrib operator's outputs are float: say so, ONNX shape inference does not know it
    graph.value_info.extend(helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for n in nodes
                            if n.op_type == "MatMulIntegerToFloat" for o in n.output)
    if not any(o.domain == MS_DOMAIN for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid(MS_DOMAIN, 1))
    return model


def _rewritable(node: onnx.NodeProto, inits: dict[str, onnx.TensorProto]) -> bool:
    if node.op_type != "Attention" or node.domain != MS_DOMAIN or len(node.input) > _ATTENTION_INPUTS:
        return False
    if {a.name for a in node.attribute} - {"num_heads", "scale"}:
        return False
    return node.input[1] in inits and node.input[2] in inits


def _constants() -> list[onnx.TensorProto]:
    def c(name: str, value: np.ndarray) -> onnx.TensorProto:
        return numpy_helper.from_array(value, f"{_C}/{name}")
    return [c("one", np.array(1.0, np.float32)), c("inv127", np.array(1 / 127, np.float32)),
            c("tiny", np.array(1e-12, np.float32)), c("e_scale", np.array(E_SCALE, np.float32)),
            c("u8_zero", np.array(0, np.uint8)), c("s8_zero", np.array(0, np.int8)),
            c("axis_2", np.array([2], np.int64)), c("axes_1_3", np.array([1, 3], np.int64))]


def _mask_nodes() -> list[onnx.NodeProto]:
    """The mask as floats [batch, seq, 1] (zeroes V's padded rows) and [batch, 1, seq, 1] (row sums)."""
    return [helper.make_node("Cast", [MASK_INPUT], [f"{_C}/mask"], name=f"{_C}/mask_cast", to=TensorProto.FLOAT),
            helper.make_node("Unsqueeze", [f"{_C}/mask", f"{_C}/axis_2"], [f"{_C}/mask_rows"], name=f"{_C}/mask_rows"),
            helper.make_node("Unsqueeze", [f"{_C}/mask", f"{_C}/axes_1_3"], [f"{_C}/mask_keys"], name=f"{_C}/mask_keys")]


def _rewrite(p: str, x: str, out: str, weights: np.ndarray, bias: np.ndarray, heads: int,
             scale: float) -> tuple[list[onnx.NodeProto], list[onnx.TensorProto]]:
    hidden = weights.shape[1] // 3
    head = hidden // heads

    def t(name: str) -> str:
        return f"{p}/{CORE}/{name}"

    def node(op: str, inputs: list[str], output: str, **attrs) -> onnx.NodeProto:
        domain = MS_DOMAIN if op == "MatMulIntegerToFloat" else ""
        return helper.make_node(op, inputs, [t(output)], name=t(output), domain=domain, **attrs)

    def projection(op: str, inputs: list[str], output: str) -> onnx.NodeProto:
        return helper.make_node(op, inputs, [f"{p}/{output}"], name=f"{p}/{output}")

    k = f"{_C}/"
    tensors = [numpy_helper.from_array(np.array([0, 0, heads, head], np.int64), t("heads_shape")),
               numpy_helper.from_array(np.array([0, 0, hidden], np.int64), t("merged_shape")),
               numpy_helper.from_array(np.array(scale or 1 / math.sqrt(head), np.float32), t("score_scale"))]
    nodes: list[onnx.NodeProto] = []
    for i, part in enumerate("qkv"):
        cols = slice(i * hidden, (i + 1) * hidden)
        tensors += [numpy_helper.from_array(np.ascontiguousarray(weights[:, cols]), f"{p}/{part}_weight"),
                    numpy_helper.from_array(np.ascontiguousarray(bias[cols]), f"{p}/{part}_bias")]
        nodes += [projection("MatMul", [x, f"{p}/{part}_weight"], f"{part}_matmul"),
                  projection("Add", [f"{p}/{part}_matmul", f"{p}/{part}_bias"], part)]
    # padded keys: a score of 0 (not above a real row's largest, as a padded key's own could be) and no value
    nodes += [node("Mul", [f"{p}/k", k + "mask_rows"], "k_masked"), node("Mul", [f"{p}/v", k + "mask_rows"], "v_masked")]
    nodes.append(helper.make_node("DynamicQuantizeLinear", [f"{p}/q"], [t("q_u8"), t("q_scale"), t("q_zero")],
                                  name=t("q_u8")))
    nodes += _symmetric_int8(node, t, "k", t("k_masked"), k) + _symmetric_int8(node, t, "v", t("v_masked"), k)
    nodes += [node("Reshape", [t("q_u8"), t("heads_shape")], "q_heads"),
              node("Transpose", [t("q_heads")], "q_bhsd", perm=[0, 2, 1, 3]),
              node("Reshape", [t("k_s8"), t("heads_shape")], "k_heads"),
              node("Transpose", [t("k_heads")], "k_bhds", perm=[0, 2, 3, 1]),
              node("Reshape", [t("v_s8"), t("heads_shape")], "v_heads"),
              node("Transpose", [t("v_heads")], "v_bhsd", perm=[0, 2, 1, 3]),
              node("Mul", [t("q_scale"), t("score_scale")], "qk_scale"),
              node("MatMulIntegerToFloat", [t("q_bhsd"), t("k_bhds"), t("qk_scale"), t("k_scale"), t("q_zero"),
                                            k + "s8_zero"], "scores"),
              node("ReduceMax", [t("scores")], "row_max", axes=[-1], keepdims=1),
              node("Sub", [t("scores"), t("row_max")], "shifted"),
              node("Exp", [t("shifted")], "e"),
              node("MatMul", [t("e"), k + "mask_keys"], "row_sum"),       # sum of e over the real keys
              node("Reciprocal", [t("row_sum")], "row_norm"),
              node("QuantizeLinear", [t("e"), k + "e_scale", k + "u8_zero"], "e_u8"),
              node("MatMulIntegerToFloat", [t("e_u8"), t("v_bhsd"), k + "e_scale", t("v_scale"), k + "u8_zero",
                                            k + "s8_zero"], "context_sum"),
              node("Mul", [t("context_sum"), t("row_norm")], "context"),
              node("Transpose", [t("context")], "context_bshd", perm=[0, 2, 1, 3])]
    nodes.append(helper.make_node("Reshape", [t("context_bshd"), t("merged_shape")], [out], name=t("context_merge")))
    return nodes, tensors


def _symmetric_int8(node, t, part: str, source: str, k: str) -> list[onnx.NodeProto]:
    """``source`` as int8 with one scale per call: max |value| / 127 (zero point 0)."""
    return [node("Abs", [source], f"{part}_abs"),
            node("ReduceMax", [t(f"{part}_abs")], f"{part}_absmax", keepdims=0),
            node("Mul", [t(f"{part}_absmax"), k + "inv127"], f"{part}_scale0"),
            node("Max", [t(f"{part}_scale0"), k + "tiny"], f"{part}_scale"),
            node("QuantizeLinear", [source, t(f"{part}_scale"), k + "s8_zero"], f"{part}_s8")]
