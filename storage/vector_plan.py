"""How one search of a vector index runs: exact or through the graph, with which efSearch, over how
many candidate documents. Pure arithmetic over the index's counts (``VectorIndex._plan`` finds the
candidates, this module sizes the search); the numbers were chosen by measurement
(tests/benchmarks/bench_vectors.py, docs/vector_index.md)."""
from __future__ import annotations

import math

import numpy as np

EXACT_MIN_CHUNKS = 2048  # at or below this many candidate chunks, always search exactly
EXACT_COST_RATIO = 0.8  # brute force over C chunks costs about as much as a graph search of ef * 2m * ratio >= C
EF_FLOOR = 48  # smallest efSearch used
EF_PER_CHUNK = 2  # efSearch >= this many times the chunks asked for
# On multi-bit RaBitQ codes the graph is built and walked on approximate distances and needs a wider
# search: at 1M clustered 384-d vectors, rabitq2 at oversampling 5 (fetch 50) found 0.726 of the true top
# 10 at ef 100 (2 x fetch), 0.887 at 200, 0.969 at 400, 0.988 at 800; at 50k 0.992 already at 100
# (bench_quantize_index.py, docs/benchmarks.md's RaBitQ section). On 1-bit codes (1bit, rabitq1) 4 x fetch:
# at 1M the true top 10 found at oversampling 10 rose from 0.890 (ef 200 = 2 x fetch) to 0.977 at ef 400
# (4 x), what oversampling 20 at ef 400 found with twice the rows read for rescoring; 0.993 at ef 800.
# From 4 bits 16 x fetch: at 1M rabitq4 found the same 0.969 as rabitq2 at ef 400 (the graph's breadth,
# not the codes, was the limit) and 0.987 at ef 800 (p50 4.1 ms), 0.991 at 1600 (6.9 ms).
EF_PER_CHUNK_CODES = {"rabitq2": 8, "rabitq3": 8, **{f"rabitq{n}": 16 for n in range(4, 9)},
                      "1bit": 4, "rabitq1": 4}
EF_MAX = 1 << 16
RESCORE_TOL = 1e-4  # relative float32 error allowed for before the float64 rescoring
# Quantized indexes: candidate documents = k * this. 8bit keeps Manticore's 3.0; 1-bit codes rank too
# coarsely for that (recall@10 0.75 at 100k, 0.44 at 1M): 10 gave 0.995 at 100k (bench_quantize_index.py).
# 1bit: 20 finds 0.961 of the true top 10 at 1M x 384 at ef 2 x fetch (10: 0.879, 3: 0.44; docs/benchmarks.md#one-file);
# with ef 4 x fetch (above) 10 finds 0.977 at 1M (15: 0.943 and 5: 0.643 at 2 x; bench_quantize_index.py), so 10
# rabitqN (FAISS's multi-bit RaBitQ), at 50k clustered 384-d vectors (bench_quantize_index.py): 5 finds
# 0.995 of the true top 10 at 2 bits and 0.990 at 4 (3.0 found 0.970 at 4 bits: the graph's breadth, ef =
# 2 x the candidates, was too narrow), 1 bit as 1bit; from 5 bits Manticore's 3.0 (not measured: the
# codes are closer to 8bit's than to 4 bits')
OVERSAMPLING = {"none": 1.0, "8bit": 3.0, "1bit": 10.0, "1bitsimple": 10.0, "rabitq1": 10.0,
                **{f"rabitq{n}": 5.0 for n in range(2, 5)}, **{f"rabitq{n}": 3.0 for n in range(5, 9)}}


class Plan:
    """How one search runs (see ``VectorIndex._plan``)."""

    path = "exact"
    positions: np.ndarray | None = None  # live candidate positions when filtered
    excluded: np.ndarray | None = None  # live positions of exclude_doc when unfiltered
    n_candidates = 0
    want_docs = 0
    want = 0
    shortlist = 0  # candidate documents: want * oversampling
    oversampling = 1.0
    rescore = True
    fetch = 0
    ef = 0
    exact_max = 0


def check(k: int, ef: int | None, oversampling: float | None) -> None:
    """ValueError for a search request no index can serve."""
    if k < 1:
        raise ValueError(f"k must be positive, got {k}")
    if ef is not None and ef < 0:
        raise ValueError(f"ef must be non-negative, got {ef}")
    if oversampling is not None and not oversampling >= 1.0:
        raise ValueError(f"oversampling must be >= 1.0, got {oversampling}")


def size(plan: Plan, docs: int, k: int, ef: int | None, oversampling: float | None, *,
         quantization: str, m: int, total: int, trained: bool) -> Plan:
    """Fill in ``plan`` (whose candidates are found: ``n_candidates`` chunks of ``docs`` documents)
    for an index of ``total`` positions with HNSW parameter ``m``."""
    plan.want_docs, plan.want = docs, min(k, docs)
    # Oversampling widens the candidate documents: by default only on quantized codes (float32
    # distances are exact already), as asked on any index (Manticore's meaning).
    default = OVERSAMPLING.get(quantization, 3.0)
    plan.oversampling = float(oversampling) if oversampling is not None else default
    plan.shortlist = min(docs, math.ceil(plan.want * plan.oversampling))
    chunks_per_doc = plan.n_candidates / docs if docs else 1.0
    plan.fetch = min(plan.n_candidates, math.ceil(plan.shortlist * chunks_per_doc))
    # The graph holds dead and filtered-out nodes too: to meet `base` allowed ones, look at base / s.
    selectivity = plan.n_candidates / max(total, 1)
    base = max(ef or 0, EF_FLOOR, EF_PER_CHUNK_CODES.get(quantization, EF_PER_CHUNK) * plan.fetch)
    plan.ef = int(min(math.ceil(base / max(selectivity, 1e-9)), EF_MAX))
    # A graph search computes about ef * 2m distances; brute force computes one per candidate chunk.
    plan.exact_max = max(EXACT_MIN_CHUNKS, int(EXACT_COST_RATIO * plan.ef * 2 * m))
    exact = plan.n_candidates <= plan.exact_max or not trained
    plan.path = "exact" if exact else "graph"
    return plan
