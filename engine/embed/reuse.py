"""Never embed the same chunk twice: stored vectors are found by the exact text they were made from.

Every chunk row whose vector is exactly ``model.embed(chunk text)`` carries a key, a hash of (model
fingerprint, exact chunk text), in its chunk table (``text_key``, indexed; see ``storage.chunk_table``).
Before a statement runs the model, each chunk's key is looked up in the chunk tables of every column
with the same model fingerprint; a hit's vector is read from its document's row and reused, and only
the texts not found (each distinct text once) go to the model. The keys live in the chunk rows, so
they are written, deleted and rolled back with them, and memory does not grow with the collection.

Reused vectors are bit-identical to embedding again: the model's output for a text does not depend on
the batch it runs in (tests/embed/test_chunk_reuse.py checks both). Rows without a key: supplied vectors,
and ``mean`` documents of several chunks (their one vector is an average, not any text's embedding).
"""
from __future__ import annotations

import hashlib
import json
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from tesseradb.storage.blobs import unpack
from tesseradb.storage.catalog import quote
from tesseradb.storage.chunk_table import ColumnLayout, find_keys

from tesseradb.context import Context

DIGEST_BYTES = 16     # 128 bits: a collision among 10^12 chunk texts has odds below 10^-14


def chunk_key(fingerprint: str, text: str) -> str:
    """The key of ``text`` embedded by the model with ``fingerprint``."""
    h = hashlib.blake2b(digest_size=DIGEST_BYTES)
    h.update(fingerprint.encode("utf-8"))
    h.update(b"\0")
    h.update(text.encode("utf-8", "surrogatepass"))
    return h.hexdigest()


@dataclass
class Reuse:
    """The outcome of one embedding pass: a vector per piece, its key, and how many were reused."""
    vectors: np.ndarray
    keys: list[str]
    reused: int
    embedded: int


def _layouts(db: Context, fingerprint: str) -> list[ColumnLayout]:
    """Every chunk table whose vectors came from the model with this fingerprint."""
    return [table.layout(spec.column) for table in db.tables.values() for spec in table.vectors.values()
            if spec.model_name and spec.model_fingerprint == fingerprint]


def stored_vectors(db: Context, fingerprint: str, keys: Sequence[str], dims: int) -> dict[str, np.ndarray]:
    """key -> stored vector, for the keys some chunk of this model already has."""
    wanted = list(dict.fromkeys(keys))
    found: dict[str, np.ndarray] = {}
    for layout in _layouts(db, fingerprint):
        if not wanted:
            break
        hits = find_keys(db.store, layout, wanted)
        found.update(_read(db, layout, hits, dims))
        wanted = [k for k in wanted if k not in found]
    return found


def _read(db: Context, layout: ColumnLayout, hits: list[tuple[str, int, int]], dims: int) -> dict[str, np.ndarray]:
    by_doc: dict[int, list[tuple[str, int]]] = {}
    for key, doc, ordinal in hits:
        by_doc.setdefault(doc, []).append((key, ordinal))
    out = {}
    sql = (f"SELECT id, {quote(layout.column)} FROM {quote(layout.table)} "
           "WHERE id IN (SELECT value FROM json_each(?))")
    docs = list(by_doc)
    for start in range(0, len(docs), 500):
        for doc, blob in db.store.execute(sql, (json.dumps(docs[start:start + 500]),)):
            vectors = _readable(blob, layout.is_array, dims)
            for key, ordinal in by_doc[doc]:
                if ordinal < len(vectors):
                    out[key] = vectors[ordinal]
    return out


def _readable(blob: object, is_array: bool, dims: int) -> np.ndarray:
    """The stored vectors of a document, or none when its blob cannot be trusted (damaged, another
    width, not finite): REPAIR TABLE re-embeds exactly such rows, so they must never be reused."""
    try:
        vectors = unpack(blob, is_array) if isinstance(blob, bytes) else np.zeros((0, dims), np.float32)
    except (struct.error, ValueError):
        return np.zeros((0, dims), np.float32)
    if vectors.ndim != 2 or vectors.shape[1] != dims or not np.isfinite(vectors).all():
        return np.zeros((0, dims), np.float32)
    return vectors


def embed_pieces(db: Context, model, pieces: Sequence[str], *,
                 on_progress: Callable[[int, int], None] | None = None,
                 should_stop: Callable[[], bool] | None = None) -> Reuse:
    """Vectors for ``pieces``: stored ones where the same model embedded the same text, the model
    for the rest (each distinct text once). Progress counts reused pieces as done."""
    keys = [chunk_key(model.fingerprint, p) for p in pieces]
    found = stored_vectors(db, model.fingerprint, keys, model.dims)
    prepared = getattr(db, "prepared", None)     # embed/prepared.py: what the model made before the lock
    memo = prepared.vectors if prepared is not None else None
    missing: dict[str, str] = {}
    remembered = 0                          # embedded by this statement before the lock: not "reused"
    for key, piece in zip(keys, pieces):
        if key in found or key in missing:
            continue
        if memo is not None and key in memo:
            found[key] = memo[key]
            remembered += 1
        else:
            missing[key] = piece
    reused = len(keys) - len(missing)      # stored, or the same text earlier in this statement

    def progress(done: int, total: int) -> None:
        if on_progress is not None:
            on_progress(reused + done, reused + total)

    if keys and not missing:
        progress(0, 0)              # all of it found: done (a statement's second pass, embed/prepared.py)
    fresh = model.embed(list(missing.values()), on_progress=progress, should_stop=should_stop)
    found.update(zip(missing, fresh))
    if prepared is not None and prepared.filling:      # the pass before the lock: kept for the write
        memo.update(zip(missing, fresh))
    vectors = np.stack([found[k] for k in keys]).astype(np.float32) if keys else \
        np.zeros((0, model.dims), np.float32)
    return Reuse(vectors, keys, reused - remembered, len(missing) + remembered)
