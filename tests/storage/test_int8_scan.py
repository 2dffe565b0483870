"""The 8-bit first pass over a vector index's live chunks (storage/int8_scan.py).

Its bound must hold for any vectors and any query (a property test drives onnxruntime's own
quantization of the query with adversarial values), and a search through it must return what the
float32 scan of every live chunk returns, to the last bit: ids, order and distances, with deleted
chunks, k 10 and 50, after writes (the codes are rebuilt), on cosine and ip indexes."""
from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tesseradb.storage import int8_scan, ranking
from tesseradb.storage.vectors import VectorIndex

DIMS = 24


def _finite32(low: float, high: float):
    return st.floats(low, high, width=32, allow_nan=False, allow_infinity=False, allow_subnormal=True)


@st.composite
def _rows_and_query(draw):
    dims = draw(st.integers(1, 40))
    n = draw(st.integers(1, 30))
    magnitude = draw(st.sampled_from([1e-12, 1e-3, 1.0, 1e3, 1e9]))
    values = _finite32(-1.0, 1.0)
    x = draw(hnp.arrays(np.float32, (n, dims), elements=values)) * np.float32(magnitude)
    if draw(st.booleans()):                         # rows of very different lengths
        x *= draw(hnp.arrays(np.float32, (n, 1), elements=st.sampled_from([1e-6, 1.0, 1e4]).map(np.float32)))
    q_magnitude = draw(st.sampled_from([1e-9, 1.0, 1e6]))
    q = draw(hnp.arrays(np.float32, (1, dims), elements=values)) * np.float32(q_magnitude)
    if draw(st.booleans()):                         # a query of one sign only, or one spike
        q = np.abs(q) if draw(st.booleans()) else np.where(np.arange(dims) == 0, q, np.float32(0.0))
    if draw(st.booleans()):                         # whole steps: the first row of codes leaves nothing
        q = draw(hnp.arrays(np.float32, (1, dims), elements=st.integers(-127, 127).map(np.float32)))
        q[0, 0] = 127
        q = q * np.float32(q_magnitude)
    return x.astype(np.float32), np.ascontiguousarray(q, np.float32)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_rows_and_query())
def test_the_bound_holds_for_any_rows_and_query(case):
    x, q = case
    first = int8_scan.Int8Pass(x)
    if not first.usable:
        assert float(np.abs(x).max()) < int8_scan.TINY
        return
    q_norm = float(np.linalg.norm(q.astype(np.float64)))
    approx, width, spread, unit = first.scores(q, q_norm)
    exact = x.astype(np.float64) @ q[0].astype(np.float64)
    if not unit > 0.0:                                      # no scale for the query: no bound, the scan
        assert float(np.abs(q).max()) < 1e-36
        return
    assert np.isfinite(width).all() and math.isfinite(spread)
    off = np.abs(exact - approx * unit) - (width + spread) * unit
    assert np.all(off <= 1e-15 * np.abs(exact)), off.max()     # (float64's rounding of approx * unit)


def test_the_query_is_quantized_as_the_bound_assumes():
    """onnxruntime's DynamicQuantizeLinear, read back: every value within half a step (a / 2) of its
    code, the products exact integers, and each row coded with a step of its own (what ``scores``
    builds the bound on)."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(50, DIMS)).astype(np.float32)
    x[3] *= 1e-3                                            # a short row: a step of its own
    first = int8_scan.Int8Pass(x)
    assert first.steps[3] == pytest.approx(float(np.abs(x[3]).max()) / 127)
    codes = np.clip(np.rint(x / first.steps[:, None]), -127, 127).astype(np.int64)
    assert np.all(np.abs(x - codes * first.steps[:, None]) <= first.steps[:, None] * (0.5 + 1e-6))
    for scale in (1e-6, 1.0, 1e5):
        q = (rng.normal(size=(1, DIMS)) * scale).astype(np.float32)
        dots, a = first._session.run(None, {"q": q})
        a = float(a)
        lo, hi = min(float(q.min()), 0.0), max(float(q.max()), 0.0)
        assert a == pytest.approx((hi - lo) / 255, rel=1e-6)
        zero = int(np.clip(round(-lo / a), 0, 255))
        c = np.clip(np.rint(q[0] / np.float32(a)) + zero, 0, 255).astype(np.int64)
        assert np.abs(q[0] - (c - zero) * a).max() <= a * (0.5 + int8_scan.SLACK)
        assert np.array_equal(dots[0], codes @ (c - zero))
        approx, width, spread, unit = first.scores(q, float(np.linalg.norm(q)))
        assert unit == a and np.array_equal(approx, dots[0] * first.steps)


def _clustered(rng, docs: int, dims: int = DIMS, lengths: bool = False):
    """Chunks of documents around a few centers (many near ties), doc ids in order."""
    centers = rng.normal(size=(8, dims))
    chunk_docs, rows = [], []
    for doc in range(1, docs + 1):
        n = int(rng.integers(1, 12))
        x = centers[doc % 8] + 0.25 * rng.normal(size=(n, dims))
        if doc % 13 == 0:
            x[-1] = x[0]                                    # two equal chunks in a document
        if lengths:
            x *= rng.uniform(0.2, 5.0, size=(n, 1))
        rows.append(x)
        chunk_docs += [doc] * n
    x = np.concatenate(rows).astype(np.float32)
    return np.arange(1, len(x) + 1, dtype=np.int64), np.array(chunk_docs, np.int64), x


def _index(metric: str, seed: int = 1, docs: int = 420, lengths: bool = False,
           shuffled: bool = False) -> tuple[VectorIndex, np.ndarray]:
    rng = np.random.default_rng(seed)
    chunks, doc_ids, x = _clustered(rng, docs, lengths=lengths)
    if shuffled:                                            # documents' chunks interleaved in the index
        order = rng.permutation(len(x))
        chunks, doc_ids, x = chunks[order], doc_ids[order], x[order]
    index = VectorIndex(DIMS, metric)
    index.add(chunks, doc_ids, x)
    return index, x


def _compare(index: VectorIndex, queries: np.ndarray, k: int, monkeypatch) -> int:
    """Search every query by the float32 scan and by the 8-bit pass; the results must be equal.
    Returns how many searches the 8-bit pass answered itself (not falling back to the scan)."""
    monkeypatch.setattr(int8_scan, "MIN_CHUNKS", 10**12)
    scanned = [index.search(q, k) for q in queries]
    monkeypatch.setattr(int8_scan, "MIN_CHUNKS", 1)
    monkeypatch.setattr(int8_scan, "BUILD_AFTER", 1)
    monkeypatch.setattr(int8_scan, "WORTH_SHARE", 1)        # the pass however many chunks it leaves
    answered = 0
    real = int8_scan.candidates

    def counted(*args):
        nonlocal answered
        at = real(*args)
        answered += at is not None
        return at
    monkeypatch.setattr(int8_scan, "candidates", counted)
    first = [index.search(q, k) for q in queries]
    monkeypatch.setattr(int8_scan, "candidates", real)
    assert first == scanned
    return answered


@pytest.mark.parametrize("metric", ["cosine", "ip"])
@pytest.mark.parametrize("k", [10, 50])
def test_searches_equal_the_float32_scan(metric, k, monkeypatch):
    index, x = _index(metric, lengths=metric == "ip")
    rng = np.random.default_rng(7)
    queries = np.concatenate([x[rng.choice(len(x), 40)] + 0.05 * rng.normal(size=(40, DIMS)),
                              rng.normal(size=(20, DIMS))]).astype(np.float32)
    answered = _compare(index, queries, k, monkeypatch)
    assert "int8" in index._derived
    assert answered == len(queries)


def test_documents_out_of_position_order(monkeypatch):
    """Chunks added in no order of their documents: the grouping sorts them, and each chunk's own
    document's bound is found by its doc id."""
    index, x = _index("cosine", seed=6, shuffled=True)
    assert index._live_groups()[2][0] is not None           # the grouping needed an order
    rng = np.random.default_rng(8)
    queries = np.concatenate([x[rng.choice(len(x), 30)] + 0.05 * rng.normal(size=(30, DIMS)),
                              rng.normal(size=(10, DIMS))]).astype(np.float32)
    for k in (10, 50):
        assert _compare(index, queries, k, monkeypatch) == len(queries)


@st.composite
def _chunks_of_documents(draw):
    dims = draw(st.integers(2, 16))
    n = draw(st.integers(2, 60))
    x = draw(hnp.arrays(np.float32, (n, dims), elements=_finite32(-1.0, 1.0)))
    if draw(st.booleans()):                                 # equal chunks: ties in distance
        x[-1] = x[0]
    docs = draw(hnp.arrays(np.int64, n, elements=st.integers(1, max(2, n // 3))))   # any order
    q = draw(hnp.arrays(np.float32, (1, dims), elements=_finite32(-1.0, 1.0)))
    return x, docs, np.ascontiguousarray(q), draw(st.integers(1, 8))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_chunks_of_documents())
def test_candidates_keep_the_closest_chunks_of_the_shortlisted_documents(case):
    """Whatever the chunks, their documents and the query: every chunk that is (in exact arithmetic)
    the closest of a document among the shortlist nearest is a candidate, with no margin beyond the
    rounding one."""
    x, docs, q, shortlist = case
    first = int8_scan.Int8Pass(x)
    if not first.usable:
        return
    q_norm = float(np.linalg.norm(q.astype(np.float64)))
    scale = q_norm * float(np.linalg.norm(x.astype(np.float64), axis=1).max())
    groups = ranking.grouping(docs)
    at = int8_scan.candidates(*first.scores(q, q_norm), groups, docs, shortlist,
                              int8_scan.ROUNDING * (1.0 + scale))
    if at is None:
        assert len(groups[1]) <= shortlist or first.scores(q, q_norm)[3] == 0.0
        return
    assert np.array_equal(at, np.unique(at))
    dist = 1.0 - x.astype(np.float64) @ q[0].astype(np.float64)
    best = {int(d): float(dist[docs == d].min()) for d in np.unique(docs)}
    for d in sorted(best, key=lambda d: (best[d], d))[:shortlist]:
        closest = np.flatnonzero((docs == d) & (dist == best[d]))
        assert np.isin(closest, at).all(), (d, closest, at)


def test_deleted_chunks_and_writes(monkeypatch):
    index, x = _index("cosine", seed=4)
    rng = np.random.default_rng(9)
    queries = (x[rng.choice(len(x), 30)] + 0.05 * rng.normal(size=(30, DIMS))).astype(np.float32)
    _compare(index, queries, 10, monkeypatch)
    # deleted documents and chunks: the live ones are coded (and a search never returns the dead)
    best = index.search(queries[0], 1)[0]
    index.remove_docs([best[0], 7, 8, 9])
    index.remove_chunks([5, 6, 40])
    assert "int8" not in index._derived                     # a write drops the codes
    _compare(index, queries, 10, monkeypatch)
    assert all(d != best[0] for q in queries for d, _, _ in index.search(q, 10))
    # a write adds a document equal to the first query: the rebuilt codes find it first
    index.add(np.array([10**6]), np.array([10**5]), queries[:1])
    assert "int8" not in index._derived
    _compare(index, queries, 10, monkeypatch)
    assert index.search(queries[0], 1)[0][0] == 10**5


def test_the_first_pass_waits_for_searches_and_skips_l2(monkeypatch):
    monkeypatch.setattr(int8_scan, "MIN_CHUNKS", 1)
    index, x = _index("cosine", seed=2)
    for _ in range(int8_scan.BUILD_AFTER - 1):
        index.search(x[0], 10)
    assert "int8" not in index._derived                     # a table written between searches keeps the scan
    index.search(x[0], 10)
    assert "int8" in index._derived
    l2, x = _index("l2", seed=2)
    for _ in range(int8_scan.BUILD_AFTER + 1):
        l2.search(x[0], 10)
    assert "int8" not in l2._derived


def test_zero_rows_keep_the_float32_scan(monkeypatch):
    monkeypatch.setattr(int8_scan, "MIN_CHUNKS", 1)
    monkeypatch.setattr(int8_scan, "BUILD_AFTER", 1)
    index = VectorIndex(4, "ip")
    index.add(np.arange(1, 6), np.arange(1, 6), np.zeros((5, 4), np.float32))
    assert [d for d, _, _ in index.search(np.ones(4, np.float32), 3)] == [1, 2, 3]
    assert not index._derived["int8"].usable


def test_a_session_that_cannot_be_made_leaves_the_float32_scan(monkeypatch, caplog):
    """An onnxruntime that refuses the pass's session (say, a release that checks the swapped-in
    codes against the stored graph's placeholder shape) costs the speed-up, never a query."""
    index, x = _index("cosine", seed=5)
    monkeypatch.setattr(int8_scan, "MIN_CHUNKS", 10**12)
    scanned = [index.search(q, 10) for q in x[:5]]
    monkeypatch.setattr(int8_scan, "MIN_CHUNKS", 1)
    monkeypatch.setattr(int8_scan, "BUILD_AFTER", 1)

    def refused(codes_t):
        raise RuntimeError("[ONNXRuntimeError] : 1 : FAIL : shape mismatch for initializer codes")
    monkeypatch.setattr(int8_scan, "_session", refused)
    with caplog.at_level("WARNING", logger=int8_scan.__name__):
        assert [index.search(q, 10) for q in x[:5]] == scanned
    assert not index._derived["int8"].usable
    assert "first pass is off" in caplog.text


def test_a_shortlist_whose_searches_leave_many_chunks_takes_the_float32_scan(monkeypatch):
    """k 50 of 60 documents leaves most chunks: after one such search the pass is skipped for that
    shortlist, tried again every RETRY-th search, and a small k still takes it."""
    monkeypatch.setattr(int8_scan, "MIN_CHUNKS", 1)
    monkeypatch.setattr(int8_scan, "BUILD_AFTER", 1)
    index, x = _index("cosine", seed=3, docs=60)
    tried = []
    real = int8_scan.Int8Pass.scores
    monkeypatch.setattr(int8_scan.Int8Pass, "scores", lambda self, *a: (tried.append(1), real(self, *a))[1])
    monkeypatch.setattr(int8_scan, "MIN_CHUNKS", 10**12)
    scanned = [index.search(x[i], 50) for i in range(2 * int8_scan.RETRY + 1)]
    monkeypatch.setattr(int8_scan, "MIN_CHUNKS", 1)
    assert [index.search(x[i], 50) for i in range(2 * int8_scan.RETRY + 1)] == scanned
    assert len(tried) == 3                                  # the first, then every RETRY-th
    first = index._derived["int8"]
    assert first.worth(1)


def test_the_stored_graphs_are_what_onnx_builds():
    """``GRAPH`` and ``GRAPH_SIGNED`` (so that a search never imports onnx) are the bytes onnx.helper
    serializes."""
    assert int8_scan.GRAPH == int8_scan.build_graph()
    assert int8_scan.GRAPH_SIGNED == int8_scan.build_graph(signed=True)


def test_unsigned_codes_give_the_same_searches(monkeypatch):
    """Where the probe finds the signed kernel exact the codes are signed; the unsigned ones (what
    any other CPU gets) answer the same searches, to the last bit."""
    index, x = _index("ip", seed=11, lengths=True)
    rng = np.random.default_rng(12)
    queries = (x[rng.choice(len(x), 30)] + 0.05 * rng.normal(size=(30, DIMS))).astype(np.float32)
    _compare(index, queries, 10, monkeypatch)
    signed = index._derived["int8"]._codes.numpy().dtype
    assert signed == (np.int8 if int8_scan.signed_exact(DIMS) else np.uint8)
    index.remove_chunks([1])                                # a write: the codes are built again
    monkeypatch.setattr(int8_scan, "_SIGNED_EXACT", {DIMS: False})
    _compare(index, queries, 10, monkeypatch)
    assert index._derived["int8"]._codes.numpy().dtype == np.uint8


class _Saturating:
    """A session multiplying as AVX2's ``vpmaddubsw`` does (two adjacent products summed into 16 bits,
    saturated), over the codes the real session was given; queries coded as the real one codes them."""

    def __init__(self, real, codes_t: np.ndarray) -> None:
        self.real, self.codes = real, codes_t.astype(np.int64)

    def run(self, names, feed):
        q = feed["q"][0].astype(np.float64)
        lo, hi = min(q.min(), 0.0), max(q.max(), 0.0)
        a = (hi - lo) / 255
        z = int(np.clip(np.rint(-lo / a), 0, 255))
        c = np.clip(np.rint(q / a) + z, 0, 255).astype(np.int64)
        products = c[:, None] * self.codes
        pairs = products[0::2] + (products[1::2] if len(products) > 1 else 0)
        dots = np.clip(pairs, -32768, 32767).sum(axis=0) - z * self.codes.sum(axis=0)
        out = {"dots": dots[None, :].astype(np.int32), "a": np.float32(a)}
        return [out[name] for name in names]


def test_a_kernel_that_saturates_keeps_unsigned_codes(monkeypatch):
    """The probe multiplies the largest codes: a kernel whose signed products saturate is found
    out, and the pass keeps the unsigned codes (its searches still the float32 scan's)."""
    real = int8_scan._session

    def session(codes_t):
        made, kept = real(codes_t)
        return (_Saturating(made, codes_t), kept) if codes_t.dtype == np.int8 else (made, kept)
    small = np.random.default_rng(15).integers(-63, 64, size=(DIMS, 37)).astype(np.int8)
    made, _kept = real(small)                               # below saturation: the real kernel's products
    for q in (np.ones(DIMS), np.random.default_rng(16).normal(size=DIMS)):
        feed = {"q": q.astype(np.float32).reshape(1, DIMS)}
        assert np.array_equal(_Saturating(made, small).run(["dots"], feed)[0], made.run(["dots"], feed)[0])
    monkeypatch.setattr(int8_scan, "_session", session)
    monkeypatch.setattr(int8_scan, "_SIGNED_EXACT", {})
    assert not int8_scan.signed_exact(DIMS)
    index, x = _index("cosine", seed=13)
    rng = np.random.default_rng(14)
    queries = (x[rng.choice(len(x), 20)] + 0.05 * rng.normal(size=(20, DIMS))).astype(np.float32)
    _compare(index, queries, 10, monkeypatch)
    assert index._derived["int8"]._codes.numpy().dtype == np.uint8
    # and a kernel that fails outright on signed codes
    monkeypatch.setattr(int8_scan, "_SIGNED_EXACT", {})
    monkeypatch.setattr(int8_scan, "_session", lambda codes_t: (_ for _ in ()).throw(RuntimeError("no")) if
                        codes_t.dtype == np.int8 else real(codes_t))
    assert not int8_scan.signed_exact(DIMS)


def test_a_pass_imports_no_onnx():
    """Building and running a pass loads onnxruntime only (onnx's import alone takes ~0.85 s)."""
    code = ("import sys, numpy as np; from tesseradb.storage import int8_scan; "
            "p = int8_scan.Int8Pass(np.random.default_rng(0).normal(size=(64, 8)).astype(np.float32)); "
            "p.scores(np.ones((1, 8), np.float32), 8 ** 0.5); print(sorted(m for m in ('onnx', 'onnxruntime') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["['onnxruntime']"]
