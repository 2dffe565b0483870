"""The deterministic workload of the crash-kill rounds, shared by the test (which predicts the
database) and by stress_worker.py (which writes it and is killed with SIGKILL somewhere inside).

Batch ``g`` (numbered across rounds) is one transaction:
  * ``executemany`` INSERT of BATCH rows into ``t`` (ids g*BATCH+1 .. g*BATCH+BATCH) with supplied
    vectors: ``v`` float_vector(8) l2, ``a`` float_vector_array(4) cosine with id % 3 vectors;
  * DELETE of the batch's first row, UPDATE of the second row's ``v`` (both in the same transaction);
  * DELETE of row 3 of batch g-2 and UPDATE of ``v`` and ``a`` of row 4 of batch g-3 (no-ops when those
    batches never committed);
  * with the model on, every MODEL_EVERY-th batch: INSERT of two rows into ``m`` (model column,
    recursive chunks of 16 tokens) and DELETE of one row of an earlier such batch.
"""
from __future__ import annotations

import os
import sys

import numpy as np

BATCH = 10
DIMS, ADIMS = 8, 4
MODEL_EVERY = 3
MODEL = "Xenova/all-MiniLM-L6-v2"

SCHEMA = [
    f"CREATE TABLE IF NOT EXISTS t (title text, n int, "
    f"v float_vector knn_type='hnsw' knn_dims='{DIMS}' hnsw_similarity='l2', "
    f"a float_vector_array knn_type='hnsw' knn_dims='{ADIMS}' hnsw_similarity='cosine')",
    f"CREATE TABLE IF NOT EXISTS m (title text, c float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
    f"model_name='{MODEL}' from='title' chunk_strategy='recursive' max_tokens='16')",
]

TOPICS = ["certificates", "databases", "gardening", "astronomy", "cooking", "sailing", "music"]


def vec(doc_id: int, version: int) -> list[float]:
    """Values k/16: exact in float32, so stored vectors compare equal."""
    rng = np.random.default_rng(doc_id * 7919 + version)
    return (rng.integers(-64, 65, DIMS) / 16).tolist()


def arr(doc_id: int, version: int) -> list[list[float]]:
    rng = np.random.default_rng(doc_id * 104729 + version)
    return [(rng.integers(1, 65, ADIMS) / 16).tolist() for _ in range(doc_id % 3)]


def model_text(doc_id: int) -> str:
    topic = TOPICS[doc_id % len(TOPICS)]
    return (f"Document {doc_id} is about {topic}. It has a second sentence about {topic} and "
            f"a third one so that it makes more than one chunk of sixteen tokens for {topic}.")


def batch_ops(g: int, model: bool) -> list[tuple[str, object, object]]:
    """The statements of batch g as (kind, sql, params); kind 'many' means executemany."""
    base = g * BATCH
    ids = range(base + 1, base + BATCH + 1)
    ops: list[tuple[str, object, object]] = [
        ("many", "INSERT INTO t (id, title, n, v, a) VALUES (?, ?, ?, ?, ?)",
         [(i, f"doc {i}", i, vec(i, 0), arr(i, 0)) for i in ids]),
        ("one", "DELETE FROM t WHERE id = ?", (base + 1,)),
        ("one", "UPDATE t SET v = ? WHERE id = ?", (vec(base + 2, 1), base + 2)),
    ]
    if g >= 2:
        ops.append(("one", "DELETE FROM t WHERE id = ?", ((g - 2) * BATCH + 3,)))
    if g >= 3:
        old = (g - 3) * BATCH + 4
        ops.append(("one", "UPDATE t SET v = ?, a = ? WHERE id = ?", (vec(old, g), arr(old, g), old)))
    if model and g % MODEL_EVERY == 0:
        ops.append(("many", "INSERT INTO m (id, title) VALUES (?, ?)",
                    [(g * 10 + 1, model_text(g * 10 + 1)), (g * 10 + 2, model_text(g * 10 + 2))]))
        ops.append(("one", "DELETE FROM m WHERE id = ?", ((g - 2 * MODEL_EVERY) * 10 + 2,)))
    return ops


class Expected:
    """What the database must hold after the batches that committed."""

    def __init__(self) -> None:
        self.t: dict[int, tuple[list[float], list[list[float]]]] = {}
        self.m: set[int] = set()

    def apply(self, g: int, model: bool) -> None:
        base = g * BATCH
        for i in range(base + 1, base + BATCH + 1):
            self.t[i] = (vec(i, 0), arr(i, 0))
        self.t.pop(base + 1, None)
        self.t[base + 2] = (vec(base + 2, 1), self.t[base + 2][1])
        if g >= 2:
            self.t.pop((g - 2) * BATCH + 3, None)
        if g >= 3:
            old = (g - 3) * BATCH + 4
            if old in self.t:
                self.t[old] = (vec(old, g), arr(old, g))
        if model and g % MODEL_EVERY == 0:
            self.m |= {g * 10 + 1, g * 10 + 2}
            self.m.discard((g - 2 * MODEL_EVERY) * 10 + 2)

    def batch_rows(self, g: int) -> list[int]:
        """Rows that exist right after batch g commits (for the all-or-nothing check)."""
        base = g * BATCH
        return list(range(base + 2, base + BATCH + 1))


def python() -> str:
    return sys.executable


HERE = os.path.dirname(os.path.abspath(__file__))
WORKER = os.path.join(HERE, "stress_worker.py")
