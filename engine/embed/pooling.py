"""What turns a model's token states into one vector: pooling, Matryoshka truncation, normalisation.

sentence-transformers' ``Pooling`` modes, with its clamps: ``mean`` (over the attention mask),
``cls`` (the first token), ``max`` (over the masked tokens; padding counts as -1e9), ``lasttoken``
(the last unmasked token: decoder models such as Qwen3-Embedding); then, for ``dims=N``, the first N
numbers (Matryoshka models), then L2 normalisation when the model's ``modules.json`` has a
``Normalize`` module, or when the vector was truncated (a cut vector is re-normalised).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


def mean(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    weights = mask.astype(np.float32)[:, :, None]
    return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


def cls(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return hidden[:, 0, :]


def max_(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    masked = np.where(mask[:, :, None] > 0, hidden, np.float32(-1e9))
    return masked.max(axis=1)


def last_token(hidden: np.ndarray, mask: np.ndarray) -> np.ndarray:
    last = np.maximum(mask.sum(axis=1) - 1, 0)      # right padding: the last real token
    return hidden[np.arange(hidden.shape[0]), last, :]


POOLINGS = {"mean": mean, "cls": cls, "max": max_, "lasttoken": last_token}
#: 1_Pooling/config.json's keys -> our names (sentence-transformers' Pooling.__init__)
ST_MODES = {"pooling_mode_mean_tokens": "mean", "pooling_mode_cls_token": "cls",
            "pooling_mode_max_tokens": "max", "pooling_mode_lasttoken": "lasttoken"}


def l2_normalize(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.maximum(norms, 1e-12)).astype(np.float32)


@dataclass(frozen=True)
class Head:
    """After the encoder: ``pooling`` (a key of POOLINGS), ``normalize``, ``dims`` (None: all)."""

    pooling: str = "mean"
    normalize: bool = True
    dims: int | None = None

    def apply(self, result: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """A 2-D ``result`` is already one vector per text (the graph pools); 3-D is token states."""
        vectors = result if result.ndim == 2 else POOLINGS[self.pooling](result, mask)
        if self.dims is not None:
            vectors = vectors[:, :self.dims]
        if self.normalize or self.dims is not None:
            return l2_normalize(vectors)
        return vectors.astype(np.float32)
