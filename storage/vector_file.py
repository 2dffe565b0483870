"""A ``VectorIndex`` saved and loaded: what its header says and which arrays follow it.

The byte format itself (prefix, checksum, atomic write, the FAISS graph at the end) is ``index_file``'s;
this module decides the content: a JSON header (shape, HNSW parameters, quantization, the caller's
watermark, counts) and five arrays: chunk ids and doc ids (int64 per position), the alive bits, the
staged float32 vectors of a quantized index not trained yet, and the squared norms kept for ip on
1-bit codes. Files written before quantization have only the first three.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import index_file
from .errors import IndexCorrupt
from .positions import Column

#: A ``vectors.VectorIndex`` (named, not imported: that module imports this one).
VectorIndex = Any


def save(index: VectorIndex, target: Any, watermark: str) -> None:
    """Write ``index`` to ``target``: a stream of ``index_cache`` (inside the database), or a file path
    (temp file, fsync, rename, fsync of the folder). The caller holds the index's read lock."""
    arrays = [_bytes_of(a) for a in (index._chunk.view, index._doc.view,
                                     np.packbits(index._alive.view, bitorder="little"),
                                     index._staged, index._sqnorm.view)]
    header = {"dims": index.dims, "metric": index.metric, "m": index.m,
              "ef_construction": index.ef_construction, "watermark": watermark,
              "count": index._total, "max_norm": index._max_norm, "quantization": index.quantization,
              "staged": len(index._staged), "sqnorms": index._sqnorm.n}
    write = index_file.save if isinstance(target, str) else index_file.save_stream
    write(target, header, arrays, index._index)


def _bytes_of(array: np.ndarray) -> memoryview:
    """The array's bytes, without copying them (they are written while the caller holds the lock)."""
    return memoryview(np.ascontiguousarray(array).reshape(-1).view(np.uint8))


def load(cls: Any, source: Any) -> tuple[VectorIndex, str] | None:
    """``(index, watermark)`` from a file path or an ``index_cache`` stream; None when no file
    exists; IndexCorrupt when it cannot be trusted."""
    if isinstance(source, str):
        path, loaded = source, index_file.load(source, array_sizes)
    else:
        path = source.name
        loaded = index_file.load_stream(source, source.size, path, array_sizes)
    if loaded is None:
        return None
    header, arrays, graph = loaded
    try:
        index = cls(int(header["dims"]), str(header["metric"]), m=int(header["m"]),
                    ef_construction=int(header["ef_construction"]),
                    quantization=str(header.get("quantization", "none")))
        watermark = str(header["watermark"])
    except (KeyError, TypeError, ValueError) as e:
        raise IndexCorrupt(path, f"bad header: {e}") from e
    n = int(header["count"])
    # each array keeps the buffer it was read into (index_file.read_into): no copy of the id maps
    chunks = np.frombuffer(arrays[0], np.int64)
    docs = np.frombuffer(arrays[1], np.int64)
    alive = np.unpackbits(np.frombuffer(arrays[2], np.uint8), count=n, bitorder="little").view(bool)
    index._adopt(graph, chunks, docs, alive, float(header.get("max_norm", 0.0)), path)
    if len(arrays) > 3:
        index._staged = np.frombuffer(arrays[3], np.float32).reshape(-1, index.dims)
        index._sqnorm = Column.owning(np.frombuffer(arrays[4], np.float32))
    if index._index.ntotal + len(index._staged) != n or index._sqnorm.n not in (0, n):
        raise IndexCorrupt(path, "the vectors do not match the header")
    return index, watermark


def array_sizes(header: dict[str, Any]) -> list[int]:
    """Bytes of the saved arrays: chunk ids, doc ids (int64 each), alive bits; then (files written
    since quantization) the staged float32 vectors of an untrained quantized index and the squared
    norms kept for ip on 1-bit codes."""
    n = int(header["count"])
    if n < 0:
        return [-1]
    sizes = [8 * n, 8 * n, (n + 7) // 8]
    if "staged" in header:
        sizes += [4 * int(header["dims"]) * int(header["staged"]), 4 * int(header["sqnorms"])]
    return sizes
