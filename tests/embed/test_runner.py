"""Bulk embedding runs its planned batches on parallel single-thread sessions (embed/runner.py):
the same vectors in input order, progress, cancellation and errors as the sequential path."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from tesseradb import embed
from tesseradb.embed import EmbeddingCancelled
from tesseradb.embed.runner import run_parallel


def words(n: int, seed: int) -> str:
    return " ".join(f"w{(seed * 7 + i) % 97}" for i in range(n))


# mixed lengths, in no particular order, with a duplicate and an empty text
TEXTS = [words(n, n) for n in (40, 3, 120, 17, 250, 1, 64, 90, 5, 33, 300, 12)] + [words(17, 17), ""]


@pytest.fixture
def small_batches(model):
    """The model planning many small batches (restored afterwards)."""
    saved = model.token_budget, model.workers
    model.token_budget = 256
    yield model
    model.token_budget, model.workers = saved


@pytest.fixture(scope="module")
def int8_model() -> embed.Model:
    m = embed.get_model("all-MiniLM-L6-v2-int8")
    m.session()
    return m


@pytest.mark.parametrize("which", ["float32", "int8"])
def test_parallel_batches_give_the_sequential_vectors_in_input_order(small_batches, int8_model, which):
    model = small_batches if which == "float32" else int8_model
    saved = model.token_budget, model.workers
    try:
        model.token_budget = 256
        model.workers = 1
        sequential = model.embed(TEXTS)
        model.workers = 3
        parallel = model.embed(TEXTS)
    finally:
        model.token_budget, model.workers = saved
    # the same batches run on another session: int8's per-batch activation scales are the same too
    np.testing.assert_allclose(parallel, sequential, atol=1e-6)
    alone = np.stack([model.embed([t])[0] for t in TEXTS[:3]]) if which == "float32" else None
    if alone is not None:       # float32: each row is its own text's vector, whatever its batch
        np.testing.assert_allclose(parallel[:3], alone, atol=1e-5)
    assert np.array_equal(parallel[3], parallel[12])    # the repeated text, far apart in the input


def test_parallel_progress_counts_every_text_once(small_batches):
    small_batches.workers = 2
    seen = []
    small_batches.embed(TEXTS, on_progress=lambda done, total: seen.append((done, total)))
    assert len(seen) >= 3 and seen[-1] == (len(TEXTS), len(TEXTS))
    dones = [d for d, _ in seen]
    assert dones == sorted(set(dones))


def test_parallel_should_stop_waits_for_running_batches_and_starts_no_more(small_batches):
    small_batches.workers = 2
    runs, inner = [], small_batches._run

    def counting(encodings, **kw):
        runs.append(len(encodings))
        return inner(encodings, **kw)

    small_batches._run = counting
    progress = []
    try:
        small_batches.embed(TEXTS)
        every = len(runs)
        runs.clear()
        with pytest.raises(EmbeddingCancelled, match=f"of {len(TEXTS)} texts"):
            small_batches.embed(TEXTS, on_progress=lambda d, t: progress.append(d), should_stop=lambda: bool(progress))
    finally:
        del small_batches._run
    assert len(progress) == 1 and progress[0] < len(TEXTS)
    assert every > 4 and len(runs) <= 2 * 2     # at most the batches handed out before the first one ended
    assert not [t for t in threading.enumerate() if t.name.startswith("tessera-embed")]


def test_parallel_error_in_one_batch_is_raised_and_later_batches_do_not_start():
    started, lock = [], threading.Lock()

    def run(rows):
        with lock:
            started.append(int(rows[0]))
        if rows[0] == 2:
            raise RuntimeError("batch 2 failed")
        return np.zeros((len(rows), 4), np.float32)

    batches = [np.array([i]) for i in range(50)]
    got = []
    with pytest.raises(RuntimeError, match="batch 2 failed"):
        for rows, vectors in run_parallel(batches, run, workers=2):
            got.append(int(rows[0]))
    assert 2 not in got and len(started) < 50
    assert not [t for t in threading.enumerate() if t.name.startswith("tessera-embed")]


def test_run_parallel_yields_every_batch_once():
    batches = [np.arange(i * 3, i * 3 + 3) for i in range(20)]
    out = list(run_parallel(batches, lambda rows: rows * 2, workers=3))
    assert sorted(int(rows[0]) for rows, _ in out) == [i * 3 for i in range(20)]
    assert all(np.array_equal(vectors, rows * 2) for rows, vectors in out)


def test_one_worker_and_queries_keep_the_sequential_session(model):
    saved = model.workers
    try:
        model.workers = 2
        before = model._bulk_session
        model.embed_query("a query that is not cached yet: runner test")
        model.embed(["one short text"])
        assert model._bulk_session is before    # one batch: the model's own session
    finally:
        model.workers = saved
