"""The BERT graph assembled from the safetensors weights, plain and fused; the batch planner."""
from __future__ import annotations

import numpy as np
import onnx

from tesseradb.embed import bert_onnx, default
from tesseradb.embed.model import Model, plan_batches

TEXTS = ["hello world", "", "café 机器学习 🚀", "graphs " * 300, "The quick brown fox."]


def test_cached_graph_is_fused(model):
    graph = onnx.load_from_string(default.load_graph().data)
    counts = bert_onnx.op_counts(graph)
    assert counts["Attention"] == 6 and counts["EmbedLayerNormalization"] == 1
    assert counts["SkipLayerNormalization"] == 12 and counts["BiasGelu"] == 6
    assert [i.name for i in graph.graph.input] == list(bert_onnx.INPUT_NAMES)
    assert [o.name for o in graph.graph.output] == [bert_onnx.OUTPUT_NAME]


def test_plain_graph_gives_the_same_vectors(package_files, model):
    plain, variant = default.build_graph((package_files / default.WEIGHTS).read_bytes(), fused=False)
    assert variant == "plain"
    counts = bert_onnx.op_counts(onnx.load_from_string(plain))
    assert counts["Attention"] == 0 and counts["MatMul"] == 48 and counts["Erf"] == 6
    unfused = Model(default.INFO, str(package_files / default.TOKENIZER), lambda: plain)
    np.testing.assert_allclose(unfused.embed(TEXTS), model.embed(TEXTS), atol=1e-5)


def test_plan_batches_respects_budget_rows_and_buckets():
    lengths = sorted([3] * 50 + [10] * 20 + [40] * 30 + [300] * 9 + [512] * 3)
    batches = plan_batches(lengths, token_budget=1024, max_rows=16)
    assert [i for b in batches for i in b] == list(range(len(lengths)))  # consecutive, complete
    for b in batches:
        rows = [lengths[i] for i in b]
        assert len(rows) <= 16
        assert len(rows) == 1 or len(rows) * max(rows) <= 1024
        assert max(rows) <= min(rows) * 1.25 + 8


def test_plan_batches_edge_cases():
    assert plan_batches([]) == []
    assert plan_batches([600], token_budget=100) == [range(0, 1)]  # an over-budget row still runs alone


def test_split_layer_norm_gives_the_same_vectors_and_stays_split(package_files, model, tmp_path):
    """bert_onnx.split_skip_layer_norm (the int8 graph's form): Add + LayerNormalization instead of
    SkipLayerNormalization, the same vectors, and a session does not fuse it back."""
    import onnxruntime as ort

    from tesseradb.embed import model as model_module
    split = bert_onnx.split_skip_layer_norm(onnx.load_from_string(default.load_graph().data))
    counts = bert_onnx.op_counts(split)
    assert counts["SkipLayerNormalization"] == 0 and counts["LayerNormalization"] == 12
    assert counts["Add"] == 24 and counts["Attention"] == 6
    graph = split.SerializeToString()
    m = Model(default.INFO, str(package_files / default.TOKENIZER), lambda: graph)
    np.testing.assert_allclose(m.embed(TEXTS), model.embed(TEXTS), atol=1e-5)
    options = model_module.session_options(1)
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"],
                         disabled_optimizers=list(model_module.DISABLED_OPTIMIZERS))
    optimized = bert_onnx.op_counts(onnx.load(options.optimized_model_filepath))
    assert optimized["SkipLayerNormalization"] == 0 and optimized["LayerNormalization"] == 12
