"""Database values as JSON an agent can read, each bounded."""
from __future__ import annotations

import json
from typing import Any

from tesseradb.clients.mcp.limits import cap

VECTOR_PREVIEW = 8      # numbers shown of a vector


def jsonable(value: Any, limit: int) -> tuple[Any, bool]:
    """(a JSON value, whether it was cut)."""
    if value is None or isinstance(value, (bool, int, float)):
        return value, False
    if isinstance(value, str):
        return cap(value, limit)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return f"<{len(value)} bytes>", True
    if hasattr(value, "tolist"):        # a vector (numpy array)
        flat = value.tolist()
        if value.ndim > 1:
            return f"<{value.shape[0]} vectors of {value.shape[1]} dimensions>", True
        return [round(float(x), 6) for x in flat[:VECTOR_PREVIEW]], len(flat) > VECTOR_PREVIEW
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):   # vectors
        return f"<{len(value)} vectors of {len(value[0])} dimensions>", True
    if isinstance(value, list) and len(value) > VECTOR_PREVIEW and all(isinstance(v, float) for v in value):
        return [round(v, 6) for v in value[:VECTOR_PREVIEW]], True
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
                "score": round(1.0 - float(entry["dist"]), 6)}
        if cut:
            item["truncated"] = True
        found.append(item)
    return found
