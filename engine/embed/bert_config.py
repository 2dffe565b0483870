"""The shape of a BERT encoder: plain numbers, importable without onnx (the model registry needs the
default model's width and window long before any graph is built)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BertConfig:
    """The shape of a BERT encoder (defaults: all-MiniLM-L6-v2)."""

    num_layers: int = 6
    hidden: int = 384
    heads: int = 12
    intermediate: int = 1536
    vocab: int = 30522
    max_positions: int = 512
    type_vocab: int = 2
    eps: float = 1e-12

    @classmethod
    def from_json(cls, cfg: dict) -> BertConfig:
        return cls(
            num_layers=int(cfg["num_hidden_layers"]),
            hidden=int(cfg["hidden_size"]),
            heads=int(cfg["num_attention_heads"]),
            intermediate=int(cfg["intermediate_size"]),
            vocab=int(cfg["vocab_size"]),
            max_positions=int(cfg["max_position_embeddings"]),
            type_vocab=int(cfg.get("type_vocab_size", 2)),
            eps=float(cfg.get("layer_norm_eps", 1e-12)),
        )

    @property
    def head_size(self) -> int:
        return self.hidden // self.heads
