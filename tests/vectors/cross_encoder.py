"""A tiny randomly initialised BERT cross-encoder built with ``onnx.helper`` (no torch), in the layout
OPTION rerank reads: ``model.onnx`` (one logit per pair) + ``tokenizer.json`` (WordPiece, made with
``tokenizers``). ``scores_by_onnxruntime`` computes its scores independently of the engine: one pair
at a time, unpadded, straight through onnxruntime."""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

from tesseradb.embed.bert_onnx import OUTPUT_NAME, BertConfig, build_bert

SPECIALS = ["[PAD]", "[CLS]", "[SEP]", "[UNK]"]


def _weights(cfg: BertConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
    def rand(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.5).astype(np.float32)
    h, i = cfg.hidden, cfg.intermediate
    w = {"embeddings.word_embeddings.weight": rand(cfg.vocab, h),
         "embeddings.token_type_embeddings.weight": rand(cfg.type_vocab, h),
         "embeddings.position_embeddings.weight": rand(cfg.max_positions, h),
         "embeddings.LayerNorm.weight": np.ones(h, np.float32), "embeddings.LayerNorm.bias": np.zeros(h, np.float32)}
    for n in range(cfg.num_layers):
        p = f"encoder.layer.{n}"
        for name, shape in ((f"{p}.attention.self.query", (h, h)), (f"{p}.attention.self.key", (h, h)),
                            (f"{p}.attention.self.value", (h, h)), (f"{p}.attention.output.dense", (h, h)),
                            (f"{p}.intermediate.dense", (i, h)), (f"{p}.output.dense", (h, i))):
            w[f"{name}.weight"], w[f"{name}.bias"] = rand(*shape), rand(shape[0])
        for norm in (f"{p}.attention.output.LayerNorm", f"{p}.output.LayerNorm"):
            w[f"{norm}.weight"], w[f"{norm}.bias"] = np.ones(h, np.float32), np.zeros(h, np.float32)
    return w


def _with_head(encoder: onnx.ModelProto, cfg: BertConfig, logits: int, rng: np.random.Generator) -> onnx.ModelProto:
    """[CLS]'s hidden state -> a dense layer -> ``logits`` numbers per pair (1: a cross-encoder)."""
    graph = encoder.graph
    graph.initializer.extend([numpy_helper.from_array(np.array(0, np.int64), "head.cls"),
                              numpy_helper.from_array((rng.standard_normal((cfg.hidden, logits))).astype(np.float32), "head.w"),
                              numpy_helper.from_array(np.zeros(logits, np.float32), "head.b")])
    graph.node.extend([helper.make_node("Gather", [OUTPUT_NAME, "head.cls"], ["head.first"], axis=1),
                       helper.make_node("MatMul", ["head.first", "head.w"], ["head.mm"]),
                       helper.make_node("Add", ["head.mm", "head.b"], ["logits"])])
    del graph.output[:]
    graph.output.append(helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", logits]))
    onnx.checker.check_model(encoder)
    return encoder


def _tokenizer(words: list[str]) -> Tokenizer:
    vocab = {t: n for n, t in enumerate(SPECIALS + sorted(set(words)))}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    return tok


TINY = {"num_layers": 2, "hidden": 32, "heads": 4, "intermediate": 64, "max_positions": 128}
MINILM_L6 = {"num_layers": 6, "hidden": 384, "heads": 12, "intermediate": 1536, "max_positions": 512}
BASE = {"num_layers": 12, "hidden": 768, "heads": 12, "intermediate": 3072, "max_positions": 512}


def build(directory: Path, texts: list[str], logits: int = 1, seed: int = 7, shape: dict = TINY) -> Path:
    """Write the model directory; its vocabulary is every word of ``texts``. ``shape``: the BERT's
    size (the benchmarks time MiniLM-L6- and base-sized ones; compute does not depend on the weights)."""
    words = [w for t in texts for w in re.findall(r"\w+|[^\w\s]", t.lower())]
    tok = _tokenizer(words)
    cfg = BertConfig(vocab=tok.get_vocab_size(), **shape)
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True, exist_ok=True)
    model = _with_head(build_bert(_weights(cfg, rng), cfg), cfg, logits, rng)
    onnx.save(model, str(directory / "model.onnx"))
    tok.save(str(directory / "tokenizer.json"))
    (directory / "config.json").write_text(json.dumps({"max_position_embeddings": cfg.max_positions}))
    return directory


def scores_by_onnxruntime(directory: Path, query: str, passages: list[str]) -> list[float]:
    tok = Tokenizer.from_file(str(directory / "tokenizer.json"))
    session = ort.InferenceSession(str(directory / "model.onnx"), providers=["CPUExecutionProvider"])
    out = []
    for passage in passages:
        e = tok.encode(query, passage)
        feeds = {"input_ids": np.array([e.ids], np.int64), "attention_mask": np.array([e.attention_mask], np.int64),
                 "token_type_ids": np.array([e.type_ids], np.int64)}
        out.append(float(session.run(None, feeds)[0][0, 0]))
    return out
