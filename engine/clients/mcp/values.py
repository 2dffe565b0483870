"""Database values as JSON an agent can read, each bounded."""
from __future__ import annotations

import json
from typing import Any

import numpy as np

from tesseradb.clients.mcp.limits import cap

VECTOR_PREVIEW = 8      # numbers shown of a vector


def short_float(value: Any) -> float:
    """A score or a float32 value as its shortest float32 text reads (``0.8123``, not
    ``0.8123000264167786``): the engine computes and stores floats as float32."""
    return float(str(np.float32(value)))


def _float(value: float) -> float:
    """A float that is exactly a float32 (a FLOAT column, a vector entry) printed short; a true double kept."""
    return short_float(value) if float(np.float32(value)) == value else value


def jsonable(value: Any, limit: int) -> tuple[Any, bool]:
    """(a JSON value, whether it was cut)."""
    if isinstance(value, float):
        return _float(value), False
    if value is None or isinstance(value, (bool, int)):
        return value, False
    if isinstance(value, str):
        return cap(value, limit)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>", True
    if hasattr(value, "tolist"):        # a vector (numpy array)
        flat = value.tolist()
        if value.ndim > 1:
            return f"<{value.shape[0]} vectors of {value.shape[1]} dimensions>", True
        return [short_float(x) for x in flat[:VECTOR_PREVIEW]], len(flat) > VECTOR_PREVIEW
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):   # vectors
        return f"<{len(value)} vectors of {len(value[0])} dimensions>", True
    if isinstance(value, list) and len(value) > VECTOR_PREVIEW and all(isinstance(v, float) for v in value):
        return [short_float(v) for v in value[:VECTOR_PREVIEW]], True
    if isinstance(value, (list, dict)):
        text = json.dumps(value, default=str)
        return (value, False) if len(text) <= limit else (text[:limit], True)
    return cap(str(value), limit)


def passages(knn_chunks_json: str | None, text_limit: int) -> list[dict]:
    """knn_chunks(n) JSON -> [{heading, text, chunk, score}], score = 1 - distance."""
    found = []
    for entry in json.loads(knn_chunks_json or "[]"):
        text, cut = cap(entry.get("text"), text_limit)
        item = {"heading": entry.get("heading"), "text": text, "chunk": entry["chunk"],
                "score": short_float(1.0 - float(entry["dist"]))}
        if cut:
            item["truncated"] = True
        found.append(item)
    return found
