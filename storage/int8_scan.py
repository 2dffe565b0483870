"""An 8-bit first pass over a vector index's live chunks, with a deterministic error bound per chunk.

The exact scan of every live chunk (``Searching._scan_live``) reads all their float32 vectors: on a
table of a few thousand chunks that is megabytes, read back from memory after the query's model run
has pushed them out of the caches. This pass reads a quarter of the bytes: each vector as 8-bit codes
with a step of its own (``x ≈ code * step``, ``step = max|x| / 127`` of that vector), the query as 8-bit
codes too (``q ≈ (c - z) * a``, ONNX's ``DynamicQuantizeLinear``), multiplied as integers by
onnxruntime's ``MatMulInteger`` (MLAS's quantized GEMM, the codes a constant that it packs once, when
the session is created). Integer products of unsigned 8-bit values (the vector codes carrying a zero
point of 128) are exact on every MLAS kernel; the signed-by-unsigned ones may saturate on AVX2
(onnxruntime's quantization notes say) and are exact, and faster, with VNNI, so the codes are signed
where a probe finds them exact (``signed_exact``). The approximate inner product
``ŝ = q̂·x̂ = (c - z)·code * a * step`` is so known to float64's rounding, and so is its distance from
the true one, chunk by chunk::

    |q·x - ŝ| <= |q·(x - x̂)| + |(q - q̂)·x̂| <= |q| * ||x - x̂|| + a / 2 * max ||x̂||_1

(Cauchy-Schwarz for the vector's own coding error, known for each vector when its codes are made; each
dimension of the query within a / 2 of its code's value).
``candidates`` turns the bounds into the chunks that can be the closest chunk of a document near
enough; the caller ranks them in float64 as the scan does the ones it keeps, so a search returns
what the scan returns, to the last bit (tests/storage/test_int8_scan.py, tests/vectors/test_int8_knn.py;
the bound itself against onnxruntime's quantization by a property test).

Inner products only (``cosine`` and ``ip``); an ``l2`` index keeps the float32 scan. Where the pass
does not pay (few chunks, many left after it) the scan runs instead: see the constants below and
docs/vector_index.md.
"""
from __future__ import annotations

import base64
import logging
import math
from typing import Any

import numpy as np

from . import ranking

log = logging.getLogger(__name__)

SLACK = 1e-4       # relative, on every term of the bound: float64's rounding of the error norms (~1e-15)
# and float32's of q / a (< 2e-5 of a step)
# float32's subnormal range: a query whose values span less than ~2 ** -118 gets a scale a that lost
# bits (or is 0, its codes then meaning nothing): what its coding misses is below this in every dimension
SUBNORMAL = 2.0 ** -120
ROUNDING = 1e-4    # of 1 + |q| max|x|: more than float64's rounding of ŝ and of the cut
TINY = 1e-30       # a row whose largest |value| is below this gets no codes (subnormal steps)
ZERO = 128          # the codes' zero point: codes in 1..255 stand for -127..127
# Searches of one state of the index before its codes are built (``Searching``): the build (~9 ms of
# numpy and 2-5 ms for the session on the manual) pays for itself after ~100 searches at ~0.13 ms each;
# building after 64 keeps a table written every few dozen searches from paying it again and again
BUILD_AFTER = 64
MIN_CHUNKS = 2048   # fewer live chunks: the float32 scan (``Searching._int8_pass``)
LARGEST = 1e15     # vectors (and queries) longer than this: the float32 scan (no float32 overflow below)
SMALLEST = 1e-15   # the query's |q| max|x| below this: the float32 scan (no subnormal query scale)
RANK_AT_ONCE = 128  # at most this many candidates: all rescored in float64, with no float32 pass between
# Right after a model run on the whole manual (5,097 chunks), the pass cost ~0.27 ms and the float32
# scan ~0.33; rescoring the chunks left ~0.28 us each beyond the scan's own ~10. With each document's
# non-closest chunks ruled out too (``candidates``), k 10 leaves 27 at the median and k 50 150, where
# the pass (those 150 through the float32 kernel first) now beats the scan too: 0.016-0.032 ms less per
# search, paired, 4 runs (session 45: ~490 left, 0.2 ms more)
WORTH_SHARE = 20    # searches leaving more than 1 in this many chunks on average: the float32 scan
RETRY = 8           # ... except every 8th, which tries the pass again
MEAN_WEIGHT = 0.25
RESCAN_SHARE = 4    # more candidates than 1 in this many chunks: the float32 scan instead


class Int8Pass:
    """The 8-bit codes of ``x``'s rows (float32, the scan's order), a step for each row, in a session
    that multiplies them with a query's. ``usable`` is False when there is nothing to code (no rows,
    or every value (nearly) zero)."""

    def __init__(self, x: np.ndarray) -> None:
        x = np.asarray(x, np.float32)
        self.n, self.dims = x.shape
        amax = np.maximum.reduce(np.abs(x), axis=1).astype(np.float64) if self.n else np.zeros(0)
        self.usable = bool(self.n) and float(np.maximum.reduce(amax)) >= TINY
        if not self.usable:
            return
        coded = amax >= TINY
        self.steps = np.where(coded, amax / 127.0, 0.0)        # a row too small to code: codes 0, x̂ = 0
        y = x / np.where(coded, self.steps, 1.0)[:, None]       # float64: |y| <= 127 to its rounding
        np.rint(y, out=y)
        np.clip(y, -127, 127, out=y)
        codes = y.astype(np.int8)
        # each row's own coding error ||x - x̂|| and ||x̂||_1, in float64 from the codes as made (the
        # bound's factors: its rounding ~1e-15 relative, well within SLACK)
        x_hat = codes * self.steps[:, None]
        self.errors = np.sqrt(np.add.reduce((x - x_hat) ** 2, axis=1)) * (1.0 + SLACK)
        self.l1 = float(np.maximum.reduce(np.add.reduce(np.abs(x_hat), axis=1))) * (1.0 + SLACK)
        codes_t = np.ascontiguousarray(codes.T)
        if not signed_exact(self.dims):
            codes_t = codes_t.view(np.uint8)
            codes_t ^= 0x80                     # + ZERO, as unsigned bytes
        try:
            self._session, self._codes = _session(codes_t)
            self._run = _runner(self._session, self.dims)
        except Exception as exc:  # noqa: BLE001 - any onnxruntime failure: the exact float32 scan answers
            # The pass only saves time: an onnxruntime that refuses the session (the swapped-in
            # codes' shape differs from the stored graph's placeholder) leaves the float32 scan.
            log.warning("knn's 8-bit first pass is off for this index: %s", exc)
            self.usable = False
            return
        self._seen: dict[int, list] = {}        # shortlist -> [mean candidates, searches since the last try]

    def worth(self, shortlist: int) -> bool:
        """Whether a search for ``shortlist`` documents should take the pass: not while its recent
        searches left more than ``1 / WORTH_SHARE`` of the chunks (rescoring that many costs more than
        the float32 scan saves: a large k on a table of few documents), except every ``RETRY``-th."""
        seen = self._seen.get(shortlist)
        if seen is None or seen[0] * WORTH_SHARE <= self.n:
            return True
        seen[1] += 1
        if seen[1] < RETRY:
            return False
        seen[1] = 0
        return True

    def saw(self, shortlist: int, left: int) -> None:
        """A search for ``shortlist`` documents left ``left`` chunks (a moving mean, weight ``MEAN_WEIGHT``)."""
        seen = self._seen.get(shortlist)
        if seen is None:
            self._seen[shortlist] = [float(left), 0]
        else:
            seen[0] += MEAN_WEIGHT * (left - seen[0])

    def scores(self, q: np.ndarray, q_norm: float) -> tuple[np.ndarray, np.ndarray, float, float]:
        """(approx, width, spread, unit): each row's approximate inner product ŝ with ``q`` (one float32
        row of ``dims`` values, of length at most ``q_norm``) is ``approx * unit``, within
        ``(width + spread) * unit`` of the true one (float64; ``unit`` > 0, else no bound: the float32
        scan). In units of the query's scale a: two multiplies of the rows' arrays, not four.

        ŝ = (c - z) a · code * step, where c are the query's codes (scale a, zero point z, ONNX's
        ``DynamicQuantizeLinear``: |q - (c - z) a| <= a / 2 in every dimension); so
        |q·x - ŝ| <= |q·(x - x̂)| + |(q - q̂)·x̂| <= |q| ||x - x̂|| + a / 2 ||x̂||_1 (+ SUBNORMAL ||x̂||_1
        for a query too small for float32 to scale: never searched this way, ``SMALLEST``)."""
        dots, a = self._run(_OUTPUTS, {"q": q})
        unit = float(a)
        if not unit > 0.0:
            return dots[0], dots[0], math.inf, 0.0
        approx = dots[0] * self.steps
        width = self.errors * (q_norm * (1.0 + SLACK) / unit)
        return approx, width, (0.5 + SLACK + SUBNORMAL / unit) * self.l1, unit


def candidates(approx: np.ndarray, width: np.ndarray, spread: float, unit: float, groups: ranking.Grouping,
               docs: np.ndarray, shortlist: int, margin: float) -> np.ndarray | None:
    """Indexes (ascending) of the chunks that can be, within ``margin``, the closest chunk of a document
    among the shortlist nearest, or None (too few documents, or no finite bound). ``Int8Pass.scores``
    gives the first four; ``docs``: the chunks' doc ids, ``groups`` their ``ranking.grouping``.

    With every true product within ``(width + spread) * unit`` of ``approx * unit``, a document's best
    product is at least ``(B - spread) unit`` (B: its best ``approx - width``) and a chunk's at most
    ``(approx + width + spread) unit``. So a chunk with ``approx + width < S - 2 spread - margin / unit``
    (S: the shortlist-th largest B) is farther than the shortlist-th best document by more than
    ``margin``, and one with ``approx + width < B - 2 spread - margin / unit`` (its own document's B)
    is farther than a chunk of its own document: neither is the closest chunk of a document that
    makes the shortlist. Every chunk that is, is kept: ranking the kept chunks exactly gives the
    documents and distances that ranking every chunk gives (about half as many as the first test
    alone keeps: 28 instead of 52 at the median on the manual, k 10).
    """
    order, starts, firsts = groups
    if len(starts) <= shortlist or not unit > 0.0:
        return None
    low = approx - width
    best = np.maximum.reduceat(low if order is None else low[order], starts)
    at = len(best) - shortlist
    part = best.copy()
    part.partition(at)
    slack = 2.0 * spread + margin / unit
    cut = float(part[at]) - slack
    if not -math.inf < cut < math.inf:      # NaN or infinite: no bound to go by
        return None
    approx += width                         # the chunks' highest possible products (approx is the caller's own)
    near = (approx >= cut).nonzero()[0]
    own = best[firsts.searchsorted(docs[near])]     # each one's document's B (runs in doc id order)
    own -= slack
    return near[approx[near] >= own]


_OUTPUTS = ["dots", "a"]


GRAPH = base64.b64decode(
    "CAg6uAEKIwoBcRIBYxIBYRIBeiIVRHluYW1pY1F1YW50aXplTGluZWFyCigKAWMKBWNvZGVzCgF6CgR6ZXJvEgRkb3RzIg1NYXRN"
    "dWxJbnRlZ2VyEglpbnQ4X3NjYW4qCxACQgR6ZXJvSgGAKhAIAQgBEAJCBWNvZGVzSgEAWhcKAXESEgoQCAESDAoCCAEKBhIEZGlt"
    "c2IXCgRkb3RzEg8KDQgGEgkKAggBCgMSAW5iCwoBYRIGCgQIARIAQgQKABAN")
GRAPH_SIGNED = base64.b64decode(
    "CAg6pQEKIwoBcRIBYxIBYRIBeiIVRHluYW1pY1F1YW50aXplTGluZWFyCiIKAWMKBWNvZGVzCgF6EgRkb3RzIg1NYXRNdWxJbnRl"
    "Z2VyEglpbnQ4X3NjYW4qEAgBCAEQA0IFY29kZXNKAQBaFwoBcRISChAIARIMCgIIAQoGEgRkaW1zYhcKBGRvdHMSDwoNCAYSCQoC"
    "CAEKAxIBbmILCgFhEgYKBAgBEgBCBAoAEA0=")


def build_graph(signed: bool = False) -> bytes:
    """The session's graph, serialized by onnx: the query's 8-bit codes c (``DynamicQuantizeLinear``:
    scale a, zero point z) and their exact integer products with the vector codes (``MatMulInteger``),
    the codes a 1 x 1 placeholder that each session replaces: unsigned with a zero point of ``ZERO``
    (``GRAPH``), or signed (``GRAPH_SIGNED``). The constants hold these bytes, so that a search never
    imports onnx (~0.85 s: its ml_dtypes); tests/storage/test_int8_scan.py compares them."""
    from onnx import TensorProto, helper, numpy_helper

    nodes = [helper.make_node("DynamicQuantizeLinear", ["q"], ["c", "a", "z"]),
             helper.make_node("MatMulInteger", ["c", "codes", "z"] + ([] if signed else ["zero"]), ["dots"])]
    constants = [numpy_helper.from_array(np.zeros((1, 1), np.int8 if signed else np.uint8), "codes")]
    if not signed:
        constants.insert(0, numpy_helper.from_array(np.array(ZERO, np.uint8), "zero"))
    graph = helper.make_graph(
        nodes, "int8_scan", [helper.make_tensor_value_info("q", TensorProto.FLOAT, [1, "dims"])],
        [helper.make_tensor_value_info("dots", TensorProto.INT32, [1, "n"]),
         helper.make_tensor_value_info("a", TensorProto.FLOAT, [])], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


_SIGNED_EXACT: dict[int, bool] = {}


def signed_exact(dims: int) -> bool:
    """Whether this process's onnxruntime multiplies the query's unsigned codes by signed vector codes
    exactly, at ``dims`` (known after one probe per ``dims``). MLAS picks its kernels by the CPU: with
    VNNI (``vpdpbusd``) the signed-by-unsigned products are summed into 32 bits, exact and faster than
    unsigned-by-unsigned (right after a model run, whole manual, paired: 0.007-0.024 ms less per
    search); without it (AVX2's ``vpmaddubsw``) two adjacent products are summed into 16 bits and
    saturate. The probe multiplies the largest codes, where any such sum saturates, and compares
    with the unsigned codes' products (exact on every kernel); any difference or failure keeps
    the unsigned codes."""
    known = _SIGNED_EXACT.get(dims)
    if known is None:
        known = _SIGNED_EXACT[dims] = _probe(dims)
    return known


def _probe(dims: int) -> bool:
    n = 37                                  # columns: MLAS's blocks of 16 and a tail
    codes = np.random.default_rng(0).integers(-127, 128, size=(dims, n)).astype(np.int8)
    row = np.arange(dims)
    codes[:, 0], codes[:, 1] = 127, -127                    # every pair of products at its largest
    codes[:, 2] = np.where(row % 2 == 0, 127, -127)
    codes[:, 3] = np.where(row % 4 < 2, 127, -127)
    queries = [np.ones(dims), -np.ones(dims), np.where(row % 2 == 0, 1.0, -1.0), np.where(row % 4 < 2, 1.0, 0.5),
               np.random.default_rng(1).normal(size=dims)]
    try:
        signed, _kept = _session(codes)
        unsigned, _kept_u = _session(codes.view(np.uint8) ^ np.uint8(0x80))
        for q in queries:
            feed = {"q": np.asarray(q, np.float32).reshape(1, dims)}
            if not np.array_equal(signed.run(["dots"], feed)[0], unsigned.run(["dots"], feed)[0]):
                return False
    except Exception:  # noqa: BLE001 - whatever onnxruntime does with signed codes: the unsigned ones
        return False
    return True


def _session(codes_t: np.ndarray) -> tuple[Any, Any]:
    """A one-thread onnxruntime session of ``GRAPH`` (``codes_t`` unsigned) or ``GRAPH_SIGNED`` (int8)
    with ``codes_t`` (dims x n) in place of its placeholder: a constant initializer, packed once by MLAS when the session is created. (The
    graph's own shapes are the placeholder's: onnxruntime checks the outputs' against them and only
    logs the difference, at a level the session does not log.) Returns the session and the codes'
    OrtValue, which must live as long as the session."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    codes = ort.OrtValue.ortvalue_from_numpy(codes_t)
    options.add_initializer("codes", codes)
    graph = GRAPH_SIGNED if codes_t.dtype == np.int8 else GRAPH
    return ort.InferenceSession(graph, options, providers=["CPUExecutionProvider"]), codes


def _runner(session: Any, dims: int) -> Any:
    """``session.run`` without the Python wrapper's checks of the feed's names and values (~13 us
    right after a model run, of a pass of ~0.2 ms): the pybind session's own ``run`` when this
    onnxruntime has it and it answers as the wrapper does, else the wrapper's."""
    inner = getattr(getattr(session, "_sess", None), "run", None)
    if inner is None:
        return session.run
    try:
        inner(_OUTPUTS, {"q": np.ones((1, dims), np.float32)}, None)
    except Exception:  # noqa: BLE001 - another onnxruntime's private API: the public one
        return session.run
    return lambda names, feed: inner(names, feed, None)
