"""Cross-encoder rerankers: a local directory with ``model.onnx`` (or ``onnx/model.onnx``) and
``tokenizer.json``, as ``model_name`` accepts directories for embedders. Nothing is downloaded.

The graph takes ``input_ids``, ``attention_mask`` (and ``token_type_ids`` when it declares it), int64
``[batch, sequence]``, for the pair (query, passage) encoded as one sequence ``[CLS] q [SEP] p [SEP]``,
and returns one logit per pair: output ``[batch, 1]`` or ``[batch]``. A higher logit is more relevant.

A model is loaded once per process (``get``) and checked on load (its output shape); pairs are cut to
the model's window (``max_position_embeddings`` of config.json, else 512 tokens; the passage is cut
first) and run in batches of ``BATCH``; ``should_stop()`` is asked before each batch.
"""
from __future__ import annotations

import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable, Sequence

import numpy as np

from tesseradb.embed import EmbeddingCancelled, ModelError
from tesseradb.embed.integrity import sha256_file
from tesseradb.embed.model import load_tokenizer, session_options

GRAPHS = ("model.onnx", "onnx/model.onnx")
DEFAULT_WINDOW = 512
BATCH = 16
_models: dict[str, "CrossEncoder"] = {}
_lock = threading.Lock()


@dataclass(frozen=True)
class Layout:
    root: Path
    graph: Path
    tokenizer: Path
    window: int


def find(name: str) -> Layout:
    root = Path(name).expanduser()
    if not root.is_dir():
        raise ModelError(f"rerank model '{name}' not found: name a local directory holding model.onnx and "
                         "tokenizer.json (docs/reranking.md says how to export one)")
    graph = next((root / g for g in GRAPHS if (root / g).is_file()), None)
    if graph is None or not (root / "tokenizer.json").is_file():
        raise ModelError(f"rerank model '{name}': the directory needs model.onnx and tokenizer.json")
    config = root / "config.json"
    window = DEFAULT_WINDOW
    if config.is_file():
        try:
            window = int(json.loads(config.read_text(encoding="utf-8")).get("max_position_embeddings", window))
        except (OSError, ValueError, TypeError) as exc:
            raise ModelError(f"rerank model '{name}': cannot read config.json: {exc}") from exc
    return Layout(root.resolve(), graph.resolve(), (root / "tokenizer.json").resolve(), window)


class CrossEncoder:
    def __init__(self, layout: Layout):
        self.layout, self.name = layout, os.fspath(layout.root)
        self.fingerprint = sha256_file(layout.graph)
        self.tokenizer = load_tokenizer(os.fspath(layout.tokenizer))
        self.tokenizer.enable_truncation(layout.window, strategy="only_second")
        try:
            import onnxruntime as ort     # loads with the first cross-encoder, not at start-up
            self.session = ort.InferenceSession(os.fspath(layout.graph), session_options(),
                                                providers=["CPUExecutionProvider"])
        except Exception as exc:  # onnxruntime's own exception types
            raise ModelError(f"rerank model '{self.name}': onnxruntime cannot load the graph: {exc}") from exc
        self.inputs = {i.name for i in self.session.get_inputs()}
        if not {"input_ids", "attention_mask"} <= self.inputs:
            raise ModelError(f"rerank model '{self.name}': the graph must take input_ids and attention_mask, "
                             f"it takes {sorted(self.inputs)}")
        self.scores("shape check", ["a passage", "another passage"])      # one logit per pair, or an error

    def _run(self, query: str, passages: Sequence[str]) -> np.ndarray:
        encodings = self.tokenizer.encode_batch([(query, p) for p in passages])
        width = max(len(e.ids) for e in encodings)
        feeds = {"input_ids": np.zeros((len(encodings), width), np.int64),
                 "attention_mask": np.zeros((len(encodings), width), np.int64),
                 "token_type_ids": np.zeros((len(encodings), width), np.int64)}
        for row, e in enumerate(encodings):
            n = len(e.ids)
            feeds["input_ids"][row, :n] = e.ids
            feeds["attention_mask"][row, :n] = e.attention_mask
            feeds["token_type_ids"][row, :n] = e.type_ids
        out = np.asarray(self.session.run(None, {k: v for k, v in feeds.items() if k in self.inputs})[0])
        if out.shape not in ((len(passages), 1), (len(passages),)):
            raise ModelError(f"rerank model '{self.name}' is not a cross-encoder: its output has shape "
                             f"{list(out.shape)} for {len(passages)} pairs, expected one logit per pair "
                             f"([{len(passages)}, 1])")
        return out.reshape(-1).astype(np.float64)

    def scores(self, query: str, passages: Sequence[str],
               should_stop: Callable[[], bool] | None = None) -> np.ndarray:
        """The logit of each (query, passage) pair, in input order."""
        out = np.empty(len(passages), dtype=np.float64)
        for start in range(0, len(passages), BATCH):
            if should_stop is not None and should_stop():
                raise EmbeddingCancelled(f"reranking cancelled after {start} of {len(passages)} passages")
            out[start:start + BATCH] = self._run(query, passages[start:start + BATCH])
        return out


def get(name: str) -> CrossEncoder:
    """The cross-encoder in directory ``name``, loaded once per process."""
    key = os.fspath(Path(name).expanduser().resolve()) if Path(name).expanduser().is_dir() else name
    with _lock:
        model = _models.get(key)
        if model is None:
            model = _models[key] = CrossEncoder(find(name))
        return model


def loaded() -> list[dict]:
    """The rerankers this process has loaded, for SHOW MODELS."""
    with _lock:
        return [{"name": m.name, "window": m.layout.window, "fingerprint": m.fingerprint} for m in _models.values()]
