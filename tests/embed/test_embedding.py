"""Model.embed / embed_query with the real all-MiniLM-L6-v2."""
from __future__ import annotations

import os
import threading

import numpy as np
import pytest

from tesseradb.embed import EmbeddingCancelled
from tesseradb.embed.model import cpu_count, session_options

REFERENCE_HELLO_WORLD = [-0.03447727, 0.03102317, 0.00673496, 0.02610895]
WORDS = ("database vector index query storage embedding cosine similarity transaction commit "
         "table column row search engine manual chapter section paragraph sentence").split()


def words(n: int, seed: int = 0) -> str:
    rng = np.random.default_rng(seed)
    return " ".join(rng.choice(WORDS, size=n))


MIXED = ["", "hello", words(7, 1), words(60, 2), "café 机器学习 🚀", words(300, 3), words(1200, 4),
         "Short one.", words(25, 5)]


def test_reference_vector(model):
    vectors = model.embed(["hello world"])
    assert vectors.shape == (1, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors[0, :4], REFERENCE_HELLO_WORLD, atol=1e-5)
    assert np.linalg.norm(vectors[0]) == pytest.approx(1.0, abs=1e-5)


def test_identity_and_shape(model):
    assert model.name == "all-MiniLM-L6-v2"
    assert model.dims == 384
    assert model.window == 510
    assert len(model.fingerprint) == 64


def test_batch_equals_one_by_one(model):
    batch = model.embed(MIXED)
    single = np.stack([model.embed([t])[0] for t in MIXED])
    np.testing.assert_allclose(batch, single, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-5)


def test_order_preserved(model):
    forward = model.embed(MIXED)
    backward = model.embed(MIXED[::-1])
    np.testing.assert_allclose(forward, backward[::-1], atol=1e-5)
    # different texts really get different vectors, so a permutation would be caught
    sims = forward @ forward.T
    assert (sims[~np.eye(len(MIXED), dtype=bool)] < 0.999).all()


def test_duplicates_get_identical_vectors(model):
    vectors = model.embed(["same text", "other", "same text"])
    np.testing.assert_allclose(vectors[0], vectors[2], atol=1e-6)


def test_empty_inputs(model):
    assert model.embed([]).shape == (0, 384)
    assert model.embed([]).dtype == np.float32
    empty = model.embed([""])
    assert empty.shape == (1, 384)
    assert np.linalg.norm(empty[0]) == pytest.approx(1.0, abs=1e-5)


def test_long_text_is_truncated_to_the_window(model):
    text = words(3000, 6)
    offsets = model.token_offsets(text)
    assert len(offsets) > 2 * model.window
    head = text[:offsets[model.window - 1][1]]
    long_vec, head_vec = model.embed([text, head])
    np.testing.assert_allclose(long_vec, head_vec, atol=1e-5)
    shorter = model.embed([text[:offsets[399][1]]])[0]
    assert float(long_vec @ shorter) < 0.9999  # the last 110 tokens of the window do count


def test_embed_query_matches_embed_and_is_cached(model):
    query = "how do I create a table with a vector column"
    expected = model.embed([query])[0]
    first = model.embed_query(query)
    assert first.shape == (384,)
    np.testing.assert_allclose(first, expected, atol=1e-6)
    first[:] = 0  # callers get copies: mutating one must not poison the cache
    runs = []
    original = model._run
    model._run = lambda encodings, **kw: runs.append(1) or original(encodings, **kw)
    try:
        again = model.embed_query(query)
    finally:
        del model._run
    assert runs == []
    np.testing.assert_allclose(again, expected, atol=1e-6)


def test_progress_reports_every_batch(model):
    texts = [words(n, n) for n in range(1, 160, 8)]
    seen = []
    model.embed(texts, on_progress=lambda done, total: seen.append((done, total)))
    assert len(seen) >= 2
    assert seen[-1] == (len(texts), len(texts))
    assert all(total == len(texts) for _, total in seen)
    dones = [d for d, _ in seen]
    assert dones == sorted(set(dones))


def test_should_stop_cancels_between_batches(model):
    texts = [words(n, n) for n in range(1, 160, 8)]
    progress = []
    with pytest.raises(EmbeddingCancelled):
        model.embed(texts, on_progress=lambda d, t: progress.append(d), should_stop=lambda: bool(progress))
    assert len(progress) == 1 and progress[0] < len(texts)  # one batch ran, then it stopped


def test_should_stop_before_any_work(model):
    progress = []
    with pytest.raises(EmbeddingCancelled):
        model.embed(["a", "b"], on_progress=lambda d, t: progress.append(d), should_stop=lambda: True)
    assert progress == []


def test_non_string_input_is_a_clear_error(model):
    with pytest.raises(TypeError, match="must be str"):
        model.embed(["ok", 3])


def test_threads_share_the_model(model):
    texts = MIXED[:6]
    expected = model.embed(texts)
    results, errors = {}, []

    def work(i):
        try:
            results[i] = model.embed(texts)
        except Exception as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for got in results.values():
        np.testing.assert_allclose(got, expected, atol=1e-5)


def test_session_uses_every_cpu(model):
    assert session_options().intra_op_num_threads == cpu_count()
    assert 1 <= cpu_count() <= (os.cpu_count() or 1)


def test_the_sessions_pool_threads_wait_without_spinning(model):
    """A query's model run leaves no thread spinning on a core (model.ALLOW_SPINNING): the setting
    reaches the session the model runs, and the model embeds as before (the reference vector)."""
    assert session_options().get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert model.session().get_session_options().get_session_config_entry("session.intra_op.allow_spinning") == "0"
    np.testing.assert_allclose(model.embed(["hello world"])[0, :4], REFERENCE_HELLO_WORLD, atol=1e-5)


def test_one_text_embeds_as_it_does_among_others(model):
    """A lone text (a query) is tokenized on the calling thread, a batch by the tokenizer's pool:
    the same tokens either way, so the same vector (truncated to the window when longer)."""
    for text in MIXED:
        alone = model.embed([text])[0]
        among = model.embed([text, words(40, 9)])[0]
        np.testing.assert_allclose(alone, among, atol=1e-6)
        np.testing.assert_allclose(model.embed_query(text + " ?"), model.embed([text + " ?", "x"], query=True)[0],
                                   atol=1e-6)


def test_heavy_padding_inside_one_batch_does_not_change_vectors(model):
    """One forward pass over rows of 3 and 500 tokens: the padding is masked out exactly."""
    texts = ["hi", words(5, 7), words(450, 8), ""]
    encodings = model._embed_tokenizer.encode_batch(texts)
    together = model._run(encodings)
    alone = np.concatenate([model._run([e]) for e in encodings])
    np.testing.assert_allclose(together, alone, atol=1e-5)
