"""knn()'s second look at its candidates: ``{length_penalty=α}`` and ``{mmr=λ[, mmr_candidates=N]}``.

* **Similarity.** What is ranked is a similarity that grows as the distance falls and is never
  negative: max(0, 1 - d) for cosine and inner-product columns (d = 1 - cos: the cosine itself, the
  score markdown-vault-mcp's penalty divides), and 1 / (1 + d) for l2 columns. ``knn_dist()`` stays the raw distance; ``knn_score()`` shows the ranked
  value.
* **Length penalty** (markdown-vault-mcp's downweight): a document's similarity is divided by
  1 + α·ln(its number of chunks), so a 150-chunk book does not top every list by having 150 chances.
  Not applied to document-id queries (``knn(col, k, id)``): there the question is which documents
  resemble that one as a whole, and a long neighbour is not more likely to resemble it by chance.
* **MMR** (``tesseradb.vectors.mmr``) over the documents' best chunk vectors, relevance = the
  (penalised) similarity; ``knn_score()`` is each pick's marginal score.
* **Candidates.** Both look at ``mmr_candidates`` (default max(4·k, 50)) nearest documents, never
  just k, and keep k.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

import numpy as np

from tesseradb.storage.catalog import quote
from tesseradb.storage.chunk_table import read_vectors
from tesseradb.vectors import mmr

Context = Any       # tesseradb.context.Context
KnnRequest = Any    # tesseradb.vectors.search.KnnRequest (which imports this module)

Hits = list[tuple[int, float, int]]


def active(req: KnnRequest) -> bool:
    """Whether the request ranks by something else than the distance (its rows then come in ``pos`` order)."""
    options = req.options
    return options.mmr is not None or (options.length_penalty is not None and penalised(req))


def penalised(req: KnnRequest) -> bool:
    return bool(req.options.length_penalty) and req.exclude_doc is None


def candidates(req: KnnRequest) -> int:
    return req.options.mmr_candidates or max(4 * req.k, 50)


def similarity(dist: float, metric: str) -> float:
    return 1.0 / (1.0 + max(dist, 0.0)) if metric == "l2" else max(0.0, 1.0 - dist)


def similarities(dists: list[float], metric: str) -> list[float]:
    """``similarity`` of each of ``dists`` (a query's hits: one call, not one per hit)."""
    if metric == "l2":
        return [1.0 / (1.0 + max(d, 0.0)) for d in dists]
    return [max(0.0, 1.0 - d) for d in dists]


def _chunk_counts(db: Context, req: KnnRequest, docs: list[int]) -> dict[int, int]:
    chunks = req.layout.chunks
    marks = ",".join("?" * len(docs))
    return {int(d): int(n) for d, n in db.store.execute(
        f"SELECT doc_id, COUNT(*) FROM {quote(chunks)} WHERE doc_id IN ({marks}) GROUP BY doc_id", docs)}


def _best_vectors(db: Context, req: KnnRequest, hits: Hits) -> np.ndarray:
    layout = req.layout
    marks = ",".join("?" * len(hits))
    chunk_ids, _, vectors = read_vectors(db.store, layout, f"WHERE c.chunk_id IN ({marks})",
                                         tuple(int(c) for _, _, c in hits))
    row = {int(c): i for i, c in enumerate(chunk_ids.tolist())}
    out = np.zeros((len(hits), layout.dims), np.float32)
    for i, (_, _, chunk) in enumerate(hits):
        if int(chunk) in row:
            out[i] = vectors[row[int(chunk)]]
    return out


def rank(db: Context, req: KnnRequest, run) -> tuple[Hits, dict[int, float]]:
    """Run the search (``run(request)``) over the candidates and keep k: (hits in rank order, doc -> knn_score)."""
    hits = run(db, replace(req, k=max(candidates(req), req.k)))
    if not hits:
        return [], {}
    metric = req.layout.metric
    score = np.array([similarity(d, metric) for _, d, _ in hits])
    if penalised(req):
        counts = _chunk_counts(db, req, [h[0] for h in hits])
        alpha = req.options.length_penalty
        score = score / np.array([1.0 + alpha * math.log(max(counts.get(h[0], 1), 1)) for h in hits])
    if req.options.mmr is None:
        order = sorted(range(len(hits)), key=lambda i: (-score[i], hits[i][1], hits[i][0]))[:req.k]
        return [hits[i] for i in order], {hits[i][0]: float(score[i]) for i in order}
    picks, marginal = mmr.select(_best_vectors(db, req, hits), score, req.k, req.options.mmr)
    return [hits[i] for i in picks], {hits[i][0]: s for i, s in zip(picks, marginal)}
