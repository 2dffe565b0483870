"""Manticore's TO_STRING(): values as text, vectors in Manticore's own format.

From Manticore's sources (``sphinxexpr.cpp`` Expr_ToString_c, ``attribute.cpp`` FloatVec2Str and
sphFloatVecArray2Str, ``sphinxutils.cpp`` PrintVarFloat): a float prints with ``%f``, or with
``%1.8f`` when six decimals would not read back as the same float32; a float_vector is its values
joined by commas (``0.100000,0.200000``, empty when it has none); a float_vector_array is
``[[a,b],[c,d]]``, or ``[]``. TO_STRING of a float is ``%f``; of an integer or a string its text; of
NULL, NULL.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np     # imported where used: plain SQL does not load numpy (start-up)

from tesseradb.catalog.types import unpack


def float_text(value: float) -> str:
    import numpy as np
    f32 = np.float32(value)
    text = f"{float(f32):f}"
    return text if np.float32(text) == f32 else f"{float(f32):1.8f}"


def _joined(vector: np.ndarray) -> str:
    return ",".join(float_text(v) for v in vector.tolist())


def vector_text(blob: Any) -> str | None:
    """TO_STRING() of a float_vector column's stored value."""
    if blob is None:
        return None
    vectors = unpack(blob, False)
    return _joined(vectors[0]) if len(vectors) else ""


def array_text(blob: Any) -> str | None:
    """TO_STRING() of a float_vector_array column's stored value."""
    if blob is None:
        return None
    return "[" + ",".join(f"[{_joined(v)}]" for v in unpack(blob, True)) + "]"


def to_string(value: Any) -> str | None:
    """TO_STRING() of any other value."""
    if value is None:
        return None
    if isinstance(value, float):
        return f"{value:f}"             # Manticore: Appendf("%f") for a float attribute
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return str(value)


# -- the same text read back (issue 33): a vector a client SELECTed can be written back as it came --
_NUMBER = r"-?\d+\.\d+"           # what %f and %1.8f print: digits, a point, digits
_LIST = rf"{_NUMBER}(?:,{_NUMBER})*"
_VECTOR_TEXT = re.compile(rf"(?:{_LIST})?")
_ARRAY_TEXT = re.compile(rf"\[(?:\[{_LIST}\](?:,\[{_LIST}\])*)?\]")


def read_back(text: str, is_array: bool) -> list | None:
    """The values of ``text`` when it is exactly the form SELECT prints for a column of this kind
    (:func:`vector_text`, :func:`array_text`): ``0.100000,0.200000`` (or empty) for a float_vector,
    ``[[0.100000,0.200000],[...]]`` (or ``[]``) for a float_vector_array. Any other text: None."""
    if is_array:
        if not _ARRAY_TEXT.fullmatch(text):
            return None
        return [[float(x) for x in part.split(",")] for part in text[2:-2].split("],[")] if text != "[]" else []
    if not _VECTOR_TEXT.fullmatch(text):
        return None
    return [float(x) for x in text.split(",")] if text else []
