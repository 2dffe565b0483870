"""The FAISS graph of a vector column, per quantization: float32, 8-bit, 1-bit or multi-bit RaBitQ codes.

Manticore's ``quantization`` option, built on what FAISS has:

| quantization | graph | code per 384-dim vector | query |
|---|---|---|---|
| none | ``IndexHNSWFlat`` | 1,536 bytes (float32) | float32 |
| 8bit | ``IndexHNSWSQ``, ``QT_8bit``: per-dimension min/max, trained | 384 bytes | float32 against decoded codes |
| 1bit | ``IndexHNSWRaBitQ``, 1 bit per dimension (RaBitQ) | 48 + 8 bytes | quantized to 4 bits (asymmetric, as Manticore's 1bit) |
| 1bitsimple | the same codes | 48 + 8 bytes | quantized to 1 bit (symmetric, faster, less exact) |
| rabitqN (N = 1..8) | ``IndexHNSWRaBitQ`` with ``nb_bits=N``: FAISS's multi-bit RaBitQ (1 sign bit + N-1 extra bits per dimension) | 384 * N / 8 + 8 (+ 4 * 2 for N > 1) bytes: 116 at 2 bits, 212 at 4 | quantized to 8 bits (4 for N = 1, as 1bit) |

The quantized graphs hold no float32 vectors: distances read from codes are approximate, and the
exact ones come from the float32 vectors SQLite holds (``VectorIndex`` rescores a few candidates).
FAISS's HNSW over RaBitQ codes knows only euclidean distance: for ``cosine`` (unit vectors) it ranks
exactly as cosine distance does (|q - x|^2 = 2 * cosine distance); for ``ip`` it ranks by euclidean
distance, which is the same ranking only for vectors of equal length, and the distance without
rescoring is derived from each vector's stored squared norm.

A quantizer must be trained (8bit: each dimension's range; 1bit and rabitqN: the centroid). Training uses the
first ``TRAIN_MIN`` or more vectors added; ``compact()``/a rebuild trains again on everything.
"""
from __future__ import annotations

from typing import Any

import faiss
import numpy as np

from .positions import one_thread

RABITQ_BITS = range(1, 9)   # quantization='rabitq' rabitq_bits='1'..'8' (the catalog keeps 'rabitq<N>')
RABITQ = tuple(f"rabitq{n}" for n in RABITQ_BITS)
QUANTIZATIONS = ("none", "8bit", "1bit", "1bitsimple") + RABITQ
TRAIN_MIN = 1024        # vectors kept as float32 (searched exactly) until this many arrived
TRAIN_MAX = 262_144     # a larger first batch trains on a sample of this many
SQ_RANGE_MARGIN = 0.05  # 8bit: each dimension's trained [min, max] widened by 5% on both sides
# the bits a query is quantized to on RaBitQ codes: 8 on the multi-bit codes (the extra bits would be
# wasted on a coarser query), 4 on one bit (Manticore's asymmetric 1bit)
QUERY_BITS = {"1bit": 4, "1bitsimple": 1, **{q: (4 if n == 1 else 8) for q, n in zip(RABITQ, RABITQ_BITS)}}
GRAPH_TYPES = {"none": faiss.IndexHNSWFlat, "8bit": faiss.IndexHNSWSQ,
               "1bit": faiss.IndexHNSWRaBitQ, "1bitsimple": faiss.IndexHNSWRaBitQ,
               **{q: faiss.IndexHNSWRaBitQ for q in RABITQ}}


def rabitq_bits(quantization: str) -> int:
    """Bits per dimension of a RaBitQ quantization (1 for 1bit/1bitsimple)."""
    return int(quantization[len("rabitq"):]) if quantization.startswith("rabitq") else 1


def check(quantization: str) -> str:
    q = (quantization or "none").lower()
    if q not in QUANTIZATIONS:
        raise ValueError(f"unknown quantization {quantization!r}; expected one of {', '.join(QUANTIZATIONS)}")
    return q


def faiss_metric(metric: str, quantization: str) -> int:
    """The metric FAISS computes: inner product for ip/cosine, except on RaBitQ codes (euclidean only)."""
    if metric == "l2" or quantization in QUERY_BITS:
        return faiss.METRIC_L2
    return faiss.METRIC_INNER_PRODUCT


def make_graph(dims: int, metric: str, m: int, ef_construction: int, quantization: str) -> Any:
    fm = faiss_metric(metric, quantization)
    if quantization == "none":
        graph = faiss.IndexHNSWFlat(dims, m, fm)
    elif quantization == "8bit":
        graph = faiss.IndexHNSWSQ(dims, faiss.ScalarQuantizer.QT_8bit, m, fm)
        sq = faiss.downcast_index(graph.storage).sq
        sq.rangestat, sq.rangestat_arg = faiss.ScalarQuantizer.RS_minmax, SQ_RANGE_MARGIN
    else:
        graph = faiss.IndexHNSWRaBitQ(dims, m, rabitq_bits(quantization), fm)
    graph.hnsw.efConstruction = ef_construction
    prepare(graph, quantization)
    return graph


def matches(graph: Any, quantization: str) -> bool:
    """Does a loaded graph hold the codes ``quantization`` names (its type; a RaBitQ graph's bits)?"""
    if type(graph) is not GRAPH_TYPES[quantization]:
        return False
    return quantization not in RABITQ or faiss.downcast_index(graph.storage).rabitq.nb_bits == rabitq_bits(quantization)


def prepare(graph: Any, quantization: str) -> None:
    """Settings FAISS does not save with the graph (query bits of the 1-bit variants)."""
    if quantization in QUERY_BITS:
        faiss.downcast_index(graph.storage).qb = QUERY_BITS[quantization]


def train(graph: Any, x: np.ndarray, rng_seed: int = 0) -> None:
    if len(x) > TRAIN_MAX:
        x = x[np.random.default_rng(rng_seed).choice(len(x), TRAIN_MAX, replace=False)]
    graph.train(np.ascontiguousarray(x, np.float32))


def reserve(graph: Any, more: int) -> None:
    """Allocate room for ``more`` vectors in the graph's codes, links, levels and offsets at once. FAISS grows them as
    ``std::vector``s do, by doubling: adding page after page would leave up to twice the codes
    allocated and move them at each growth. Growing to the size needed and back keeps the capacity
    (the links are estimated from HNSW's levels: 2M at level 0, and M/(M-1) above it on average)."""
    storage = faiss.downcast_index(graph.storage)
    hnsw = graph.hnsw
    if more <= 0 or not graph.is_trained or not storage.codes.is_owned or not hnsw.neighbors.is_owned:
        return
    for vector, extra in ((storage.codes, more * int(storage.code_size)),
                          (hnsw.neighbors, more * (int(hnsw.nb_neighbors(0)) + 2)),
                          (hnsw.levels, more), (hnsw.offsets, more)):
        size = vector.size()
        vector.resize(size + extra)
        vector.resize(size)


def code_bytes(graph: Any) -> int:
    """Bytes of the vectors (codes) the graph holds, without its links."""
    return int(graph.ntotal) * int(faiss.downcast_index(graph.storage).code_size)


def link_bytes(graph: Any) -> int:
    """Bytes of the HNSW links, levels and offsets (the graph's own structure)."""
    hnsw = graph.hnsw
    return int(hnsw.neighbors.size() * 4 + hnsw.levels.size() * 4 + hnsw.offsets.size() * 8)


def to_metric(raw: np.ndarray, metric: str, quantization: str, sqnorm: np.ndarray | None,
              q: np.ndarray) -> np.ndarray:
    """Distances FAISS returned, in the column's metric (l2 squared, ip 1 - dot, cosine 1 - cos)."""
    raw = np.asarray(raw, np.float64)
    if faiss_metric(metric, quantization) == faiss.METRIC_INNER_PRODUCT:
        return 1.0 - raw
    if metric == "l2":
        return raw
    if metric == "cosine":
        return raw / 2.0
    qn = float(np.dot(q[0], q[0]))
    return 1.0 - (qn + sqnorm - raw) / 2.0


def code_distances(graph: Any, q: np.ndarray, pos: np.ndarray, quantization: str) -> np.ndarray:
    """Raw FAISS distances from q to the codes at ``pos`` (no float32 vectors needed).

    A throw-away flat index of the same quantizer is filled with just those codes and searched:
    one pass over the candidates, whatever the size of the graph.
    """
    storage = faiss.downcast_index(graph.storage)
    n, size = graph.ntotal, storage.code_size
    codes = faiss.rev_swig_ptr(storage.codes.data(), n * size).reshape(n, size)[pos]
    sub = _empty_like(storage, quantization)
    sub.add_sa_codes(np.ascontiguousarray(codes))
    with one_thread():
        dist, idx = sub.search(q, len(pos))
    out = np.empty(len(pos), np.float32)
    found = idx[0] >= 0
    out[idx[0][found]] = dist[0][found]
    return out


def _empty_like(storage: Any, quantization: str) -> Any:
    if quantization == "8bit":
        sub = faiss.IndexScalarQuantizer(storage.d, faiss.ScalarQuantizer.QT_8bit, storage.metric_type)
        sub.sq = storage.sq
    else:
        sub = faiss.IndexRaBitQ(storage.d, storage.metric_type, rabitq_bits(quantization))
        sub.center = storage.center
        sub.qb = storage.qb
    sub.is_trained = True
    return sub
