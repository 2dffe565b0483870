"""Which chunk of a found document answers a text query, at a finer grain: its passage units.

On a column with ``passage_units='windows'`` (embed/units.py) every chunk has the vectors of its
small pieces, made when the row was embedded. For a text query the document's passage is chosen in
two steps: each chunk's score by passage_words.py (similarity + the query's words), then the
:data:`CANDIDATES` best chunks by that score are scored again as

    score + WEIGHT * (the best cosine of the query's vector to the chunk's units)

and the highest wins (ties to the lower ordinal). The other chunks count as having the smallest
unit score of the candidates, so they stay behind them. A candidate without units (written by a
release before the option, or by a shard of supplied vectors) counts its own chunk vector as its
one unit. No model call: the query's vector is the one the search used. The cost is reading the
candidates' units (float16, a few KB each) and a dot product per unit.

The parameters were chosen on the tuning questions of tests/benchmarks/bench_passages.py only.
"""
from __future__ import annotations

import numpy as np

from tesseradb.storage import unit_table

from tesseradb.context import Context

CANDIDATES = 8
WEIGHT = 6.0


def rescore(db: Context, layout, query: np.ndarray, scores: dict[int, np.ndarray],
            vectors: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
    """doc -> each chunk's score with the units' part added (see the module docstring). ``scores``:
    doc -> each chunk's score (higher is better); ``vectors``: doc -> its chunk vectors."""
    candidates = {doc: np.argsort(-s, kind="stable")[:CANDIDATES].tolist() for doc, s in scores.items()}
    blobs = unit_table.read(db.store, layout, [(doc, i) for doc, picks in candidates.items() for i in picks])
    q = np.asarray(query, np.float32).reshape(-1)
    out = {}
    for doc, picks in candidates.items():
        fine = {}
        for i in picks:
            blob = blobs.get((doc, i))
            units = unit_table.unpack(blob, layout.dims).astype(np.float32) if blob else vectors[doc][i:i + 1]
            fine[i] = float((units @ q).max()) if len(units) else float(vectors[doc][i] @ q)
        floor = min(fine.values()) if fine else 0.0
        part = np.full(len(scores[doc]), floor, dtype=np.float64)
        for i, value in fine.items():
            part[i] = value
        out[doc] = scores[doc] + WEIGHT * part
    return out
