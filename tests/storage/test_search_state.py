"""What an exact search keeps between writes (the vectors' view on FAISS's storage, the live chunks
grouped by document: ``VectorIndex._derived``) never outlives a write: after every kind of write the
search over every live chunk gives exactly (distances to the last bit) what an index built afresh from
the live chunks gives, and what the general path over the same chunks (a filter allowing every
document) gives on the same index."""
from __future__ import annotations

import numpy as np
import pytest

from tesseradb.storage import vector_plan
from tesseradb.storage.vectors import VectorIndex

from test_vectors import brute_force, normalized  # tests/storage/test_vectors.py


class Model:
    """The live chunks: chunk id -> (doc id, vector)."""

    def __init__(self) -> None:
        self.live: dict[int, tuple[int, np.ndarray]] = {}

    def add(self, chunks, docs, x) -> None:
        self.live.update({int(c): (int(d), v) for c, d, v in zip(chunks, docs, x)})

    def arrays(self):
        chunks = np.array(list(self.live), np.int64)
        return (chunks, np.array([self.live[c][0] for c in chunks.tolist()], np.int64),
                np.array([self.live[c][1] for c in chunks.tolist()], np.float32).reshape(len(chunks), -1))


def make_docs(rng: np.random.Generator, first_chunk: int, n_docs: int, dims: int, metric: str, per_doc: int = 5):
    """Documents of 1..per_doc chunks with sparse doc ids; chunk ids from ``first_chunk`` on, spaced."""
    docs = np.repeat(rng.choice(10**9, n_docs, replace=False), rng.integers(1, per_doc + 1, n_docs)).astype(np.int64)
    chunks = first_chunk + 7 * np.arange(len(docs), dtype=np.int64)
    x = rng.standard_normal((len(docs), dims)).astype(np.float32)
    return chunks, docs, normalized(x) if metric == "cosine" else x


def check(index: VectorIndex, model: Model, rng: np.random.Generator, metric: str, dims: int) -> None:
    chunks, docs, x = model.arrays()
    fresh = VectorIndex(dims, metric, quantization=index.quantization)
    fresh.add(chunks, docs, x)
    for k in (1, 5, 40):
        q = rng.standard_normal(dims).astype(np.float32)
        q = normalized(q) if metric == "cosine" else q
        got = index.search(q, k)
        assert index.explain(k)["path"] == "exact"
        assert got == fresh.search(q, k)                                   # identical, distances included
        assert got == index.search(q, k, allowed_docs=np.unique(docs))     # the general path: identical too
        want = brute_force(x.astype(np.float64), chunks, docs, q, k, metric)
        assert [r[0] for r in got] == [r[0] for r in want] and [r[2] for r in got] == [r[2] for r in want]
        np.testing.assert_allclose([r[1] for r in got], [r[1] for r in want], rtol=0, atol=1e-9)


@pytest.mark.parametrize("quantization", ["none", "8bit"])    # 8bit: float32 vectors staged before training
@pytest.mark.parametrize("metric", ["l2", "ip", "cosine"])
def test_exact_search_after_every_kind_of_write(metric, quantization, monkeypatch, tmp_path):
    monkeypatch.setattr(vector_plan, "EXACT_MIN_CHUNKS", 10**9)
    rng = np.random.default_rng(21)
    dims = 12
    index, model = VectorIndex(dims, metric, quantization=quantization), Model()
    chunks, docs, x = make_docs(rng, 1, 60, dims, metric, per_doc=6)
    index.add(chunks, docs, x)
    model.add(chunks, docs, x)
    check(index, model, rng, metric, dims)
    # adds that grow FAISS's storage well past its first allocation (its vectors may move)
    for n in range(3):
        more_chunks, more_docs, more = make_docs(rng, 10**6 * (n + 1), 40, dims, metric)
        index.add(more_chunks, more_docs, more)
        model.add(more_chunks, more_docs, more)
        check(index, model, rng, metric, dims)
    # a live chunk id added again: its vector (and here its document) replaced
    again = np.array(list(model.live)[:5], np.int64)
    new_docs = rng.integers(0, 10**9, len(again))
    new_x = make_docs(rng, 0, len(again), dims, metric, per_doc=1)[2]
    index.add(again, new_docs, new_x)
    model.add(again, new_docs, new_x)
    check(index, model, rng, metric, dims)
    # documents removed, then single chunks
    gone_docs = list({d for d, _ in model.live.values()})[:7]
    index.remove_docs(gone_docs)
    model.live = {c: dv for c, dv in model.live.items() if dv[0] not in gone_docs}
    check(index, model, rng, metric, dims)
    gone_chunks = list(model.live)[::9]
    index.remove_chunks(gone_chunks)
    model.live = {c: dv for c, dv in model.live.items() if c not in set(gone_chunks)}
    check(index, model, rng, metric, dims)
    # a removed chunk id added again
    back = np.array(gone_chunks[:2], np.int64)
    back_docs, back_x = np.array([5, 6], np.int64), make_docs(rng, 0, 2, dims, metric, per_doc=1)[2]
    index.add(back, back_docs, back_x)
    model.add(back, back_docs, back_x)
    check(index, model, rng, metric, dims)
    if quantization == "none":      # saved and loaded; compacted (a quantized index trains on a reload)
        index.save(str(tmp_path / "i.vidx"), "txn:1")
        loaded, _ = VectorIndex.load(str(tmp_path / "i.vidx"))
        check(loaded, model, rng, metric, dims)
        check(index.compact(), model, rng, metric, dims)
    # every chunk removed: nothing is found
    index.remove_chunks(list(model.live))
    assert index.search(np.ones(dims, np.float32), 5) == []
