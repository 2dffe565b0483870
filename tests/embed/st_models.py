"""Tiny random BERT models in the layouts publishers ship, built here (no torch, no download), and a
reference that computes their vectors independently of the engine.

``build(root, pooling=..., normalize=..., prompts=..., layout=...)`` writes a folder:
``tokenizer.json`` (WordPiece, made with ``tokenizers``), ``config.json``, the sentence-transformers
files (``modules.json``, ``1_Pooling/config.json``, ``config_sentence_transformers.json``,
``sentence_bert_config.json``), and the weights as ``onnx/model.onnx`` or ``model.onnx`` (the
project's own BERT->ONNX builder, unfused) or only ``model.safetensors``.

``reference(root, text, ...)``: the encoder's token states for one text, unpadded (onnxruntime on
the unfused graph), then pooling, truncation and normalisation in numpy, as sentence-transformers
defines them.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import onnxruntime as ort
from safetensors.numpy import save_file
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

from tesseradb.embed.bert_config import BertConfig
from tesseradb.embed.bert_onnx import build_bert

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
WORDS = ("query passage represent this sentence for searching relevant passages the a of to and is in "
         "backup restore database table vector search model token window chunk prefix cat dog sat mat "
         "rotate certificate replication server index replica primary query: passage:").split()
SHAPE = {"num_layers": 2, "hidden": 32, "heads": 4, "intermediate": 64, "max_positions": 64}
ST_KEYS = {"mean": "pooling_mode_mean_tokens", "cls": "pooling_mode_cls_token",
           "max": "pooling_mode_max_tokens", "lasttoken": "pooling_mode_lasttoken"}


def _tokenizer() -> Tokenizer:
    pieces = sorted({p for w in WORDS for p in re.findall(r"\w+|[^\w\s]", w)})
    vocab = {t: n for n, t in enumerate(SPECIALS + pieces + [f"##{c}" for c in "abcdefghijklmnopqrstuvwxyz"]
                                        + list("abcdefghijklmnopqrstuvwxyz"))}
    tok = Tokenizer(models.WordPiece(vocab, unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", vocab["[CLS]"]), ("[SEP]", vocab["[SEP]"])])
    return tok


def _weights(cfg: BertConfig, rng: np.random.Generator) -> dict[str, np.ndarray]:
    def rand(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.5).astype(np.float32)
    h, i = cfg.hidden, cfg.intermediate
    w = {"embeddings.word_embeddings.weight": rand(cfg.vocab, h),
         "embeddings.token_type_embeddings.weight": rand(cfg.type_vocab, h),
         "embeddings.position_embeddings.weight": rand(cfg.max_positions, h),
         "embeddings.LayerNorm.weight": 1 + rand(h) / 5, "embeddings.LayerNorm.bias": rand(h) / 5}
    for n in range(cfg.num_layers):
        p = f"encoder.layer.{n}"
        for name, shape in ((f"{p}.attention.self.query", (h, h)), (f"{p}.attention.self.key", (h, h)),
                            (f"{p}.attention.self.value", (h, h)), (f"{p}.attention.output.dense", (h, h)),
                            (f"{p}.intermediate.dense", (i, h)), (f"{p}.output.dense", (h, i))):
            w[f"{name}.weight"], w[f"{name}.bias"] = rand(*shape), rand(shape[0])
        for norm in (f"{p}.attention.output.LayerNorm", f"{p}.output.LayerNorm"):
            w[f"{norm}.weight"], w[f"{norm}.bias"] = 1 + rand(h) / 5, rand(h) / 5
    return w


def build(root: Path, *, pooling: str = "mean", normalize: bool = True, prompts: dict | None = None,
          layout: str = "onnx", seed: int = 3, max_seq_length: int | None = None,
          sentence_transformers: bool = True) -> Path:
    """Write the model folder; ``layout``: ``onnx`` (onnx/model.onnx), ``flat`` (model.onnx) or
    ``safetensors`` (only model.safetensors: the engine builds the graph)."""
    root.mkdir(parents=True, exist_ok=True)
    tok = _tokenizer()
    tok.save(str(root / "tokenizer.json"))
    cfg = BertConfig(vocab=tok.get_vocab_size(), **SHAPE)
    weights = _weights(cfg, np.random.default_rng(seed))
    (root / "config.json").write_text(json.dumps({
        "model_type": "bert", "architectures": ["BertModel"], "hidden_size": cfg.hidden,
        "num_hidden_layers": cfg.num_layers, "num_attention_heads": cfg.heads,
        "intermediate_size": cfg.intermediate, "vocab_size": cfg.vocab,
        "max_position_embeddings": cfg.max_positions, "type_vocab_size": cfg.type_vocab,
        "layer_norm_eps": cfg.eps}))
    graph = build_bert(weights, cfg).SerializeToString()
    (root / "reference.onnx").write_bytes(graph)            # what reference() runs
    if layout == "onnx":
        (root / "onnx").mkdir(exist_ok=True)
        (root / "onnx" / "model.onnx").write_bytes(graph)
    elif layout == "flat":
        (root / "model.onnx").write_bytes(graph)
    else:
        save_file(weights, str(root / "model.safetensors"))
    if sentence_transformers:
        modules = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                   {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]
        if normalize:
            modules.append({"idx": 2, "name": "2", "path": "2_Normalize",
                            "type": "sentence_transformers.models.Normalize"})
        (root / "modules.json").write_text(json.dumps(modules))
        (root / "1_Pooling").mkdir(exist_ok=True)
        (root / "1_Pooling" / "config.json").write_text(json.dumps(
            {"word_embedding_dimension": cfg.hidden, **{k: k == ST_KEYS[pooling] for k in ST_KEYS.values()}}))
        (root / "config_sentence_transformers.json").write_text(json.dumps(
            {"prompts": prompts or {}, "default_prompt_name": None, "similarity_fn_name": "cosine"}))
        if max_seq_length:
            (root / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": max_seq_length}))
    return root


def reference(root: Path, text: str, *, pooling: str = "mean", normalize: bool = True, prefix: str = "",
              dims: int | None = None, window: int | None = None) -> np.ndarray:
    """One text's vector: prefix + text, [CLS] ... [SEP] cut to ``window`` content tokens, the
    encoder's token states for it alone, pooled, truncated to ``dims``, normalised."""
    tok = Tokenizer.from_file(str(root / "tokenizer.json"))
    tok.no_truncation()
    enc = tok.encode(prefix + text, add_special_tokens=False)
    ids = enc.ids[:window] if window else enc.ids
    vocab = tok.get_vocab()
    ids = np.array([[vocab["[CLS]"], *ids, vocab["[SEP]"]]], dtype=np.int64)
    session = ort.InferenceSession(str(root / "reference.onnx"), providers=["CPUExecutionProvider"])
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
    names = {i.name for i in session.get_inputs()}
    hidden = session.run(None, {k: v for k, v in feeds.items() if k in names})[0][0]      # (tokens, hidden)
    vector = {"mean": lambda h: h.mean(axis=0), "cls": lambda h: h[0], "max": lambda h: h.max(axis=0),
              "lasttoken": lambda h: h[-1]}[pooling](hidden.astype(np.float64))
    if dims:
        vector = vector[:dims]
    if normalize or dims:
        vector = vector / np.linalg.norm(vector)
    return vector.astype(np.float32)
