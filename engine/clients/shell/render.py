"""Result sets as text, the way the mysql client prints them: bordered tables, vertical rows (``\\G``)
and tab-separated batch output. Vectors print like Manticore (``0.100000,0.200000`` and
``[[1.000000,0.000000]]``), booleans as 1/0, JSON as JSON text, NULL as ``NULL``."""
from __future__ import annotations

import datetime
import json
import math
from collections.abc import Sequence
from typing import Any

from tesseradb.clients.shell import wrap

NULL = "NULL"
VECTOR_DECLS = {"FLOAT_VECTOR_BLOB", "FLOAT_VECTOR_ARRAY_BLOB"}


# -- one value as text -----------------------------------------------------------------------------
def _significant(text: str) -> int:
    mantissa = text.split("e")[0].lstrip("-").replace(".", "").lstrip("0")
    return len(mantissa.rstrip("0")) if "." in text.split("e")[0] else len(mantissa)


def _float(value: float) -> str:
    """Shortest text for a float. A value that is exactly a float32 prints as one (0.29506326, not
    0.2950632572174072): vectors and distances are float32 underneath. Binary-arithmetic noise
    (0.30000000000000004, 15+ significant digits) is cut to 9 digits."""
    text = repr(value)
    if math.isfinite(value) and _significant(text) >= 10:
        import numpy as np          # loaded by the first long float shown, not by the shell's start
        single = np.float32(value)
        if float(single) == value:
            text = repr(float(str(single)))
        elif _significant(text) >= 15:
            text = format(value, ".9g")
    return text[:-2] if text.endswith(".0") and "e" not in text else text


def _vector(values: Sequence[Any]) -> str:
    return ",".join(f"{float(x):.6f}" for x in values)


def _array(vectors: Sequence[Sequence[Any]]) -> str:
    return "[" + ",".join("[" + _vector(v) + "]" for v in vectors) + "]"


# -- abbreviated vectors (interactive tables) -----------------------------------------------------------
SHORT_WIDTH = 48        # a vector or vector array whose full text is longer prints abbreviated
SHORT_VALUES = 3        # values shown of an abbreviated vector


def _short_vector(values: Sequence[Any]) -> str:
    return _vector(values[:SHORT_VALUES]) + f",... ({len(values)} dims)"


def _short_array(vectors: Sequence[Sequence[Any]]) -> str:
    dims = {len(v) for v in vectors}
    of = f" of {dims.pop()} dims" if len(dims) == 1 else ""
    return f"[{len(vectors)} vector{'s' if len(vectors) != 1 else ''}{of}]"


def short_cell(value: Any, decl: str | None = None) -> str:
    """Like :func:`cell`, but a long vector shows its first values and its width
    (``0.1,0.2,0.3,... (384 dims)``) and a long vector array its size (``[7 vectors of 384 dims]``)."""
    text = cell(value, decl)
    kind = (decl or "").upper()
    if len(text) <= SHORT_WIDTH or not isinstance(value, (list, tuple)) or kind not in VECTOR_DECLS:
        return text
    return _short_array(value) if kind == "FLOAT_VECTOR_ARRAY_BLOB" else _short_vector(value)


def cell(value: Any, decl: str | None = None) -> str:
    """The text of one value; ``decl`` is the column's declared type from cursor.description."""
    if value is None:
        return NULL
    kind = (decl or "").upper()
    if kind == "FLOAT_VECTOR_BLOB" and isinstance(value, (list, tuple)):
        return _vector(value)
    if kind == "FLOAT_VECTOR_ARRAY_BLOB" and isinstance(value, (list, tuple)):
        return _array(value)
    if kind == "JSON_TEXT":
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float):
        return _float(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "0x" + bytes(value).hex().upper()
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(v, (list, tuple)) for v in value):
            return _array(value)
        return _vector(value) if all(isinstance(v, (int, float)) for v in value) else json.dumps(value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, datetime.timedelta):
        return time_text(value)
    return str(value)


def time_text(value: datetime.timedelta) -> str:
    """A TIME as MySQL prints it: ``838:59:59``, ``-01:30:00`` (Python would say ``34 days, 22:59:59``)."""
    micros = value // datetime.timedelta(microseconds=1)
    sign, micros = ("-" if micros < 0 else ""), abs(micros)
    seconds, frac = divmod(micros, 1_000_000)
    text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return text + (f".{frac:06d}" if frac else "")


def width(text: str) -> int:
    """Terminal columns of ``text``: wide (CJK, emoji) characters count two, combining marks zero."""
    from wcwidth import wcswidth, wcwidth       # its tables load with the first aligned table
    w = wcswidth(text)
    if w >= 0:
        return w
    return sum(max(wcwidth(ch), 0) for ch in text)


def _numeric(values: list[Any], decl: str | None) -> bool:
    if (decl or "").upper() in VECTOR_DECLS | {"JSON_TEXT"}:
        return False
    present = [v for v in values if v is not None]
    return bool(present) and all(isinstance(v, (int, float)) for v in present)


# -- whole result sets ---------------------------------------------------------------------------------
def table(names: list[str], decls: list[str | None], rows: list[Sequence[Any]], headers: bool = True,
          abbreviate: bool = False, wrap_width: int | None = None) -> str:
    """A bordered table; numbers right-aligned, widths by display columns; ``abbreviate``: long
    vectors shortened (:func:`short_cell`). Multi-line text keeps inside its column, and with
    ``wrap_width`` long text wraps so that the table fits that many columns (:mod:`.wrap`)."""
    text_of = short_cell if abbreviate else cell
    texts = [[text_of(v, d) for v, d in zip(row, decls)] for row in rows]
    right = [_numeric([row[i] for row in rows], decls[i]) for i in range(len(names))]
    texts = wrap.rows(texts, names if headers else None, wrap_width, width)   # multi-line and long text
    widths = [width(n) if headers else 0 for n in names]
    for row in texts:
        widths = [max(w, width(t)) for w, t in zip(widths, row)]
    border = "+" + "+".join("-" * (w + 2) for w in widths) + "+"
    lines = [border]
    if headers:
        lines += [_row(names, widths, [False] * len(names)), border]
    lines += [_row(row, widths, right) for row in texts]
    lines.append(border)
    return "\n".join(lines)


def _row(texts: list[str], widths: list[int], right: list[bool]) -> str:
    cells = []
    for text, w, r in zip(texts, widths, right):
        pad = " " * max(w - width(text), 0)
        cells.append(" " + (pad + text if r else text + pad) + " ")
    return "|" + "|".join(cells) + "|"


def vertical(names: list[str], decls: list[str | None], rows: list[Sequence[Any]], abbreviate: bool = False) -> str:
    """``\\G``: one block per row, column names right-aligned; ``abbreviate``: long vectors as in
    interactive tables (issue 36: a 4-chunk note was ~90 lines of numbers)."""
    text_of = short_cell if abbreviate else cell
    label = max((width(n) for n in names), default=0)
    lines = []
    for number, row in enumerate(rows, start=1):
        lines.append(f"{'*' * 27} {number}. row {'*' * 27}")
        for name, value, decl in zip(names, row, decls):
            lines.append(" " * (label - width(name)) + f"{name}: {wrap.continued(text_of(value, decl), label + 2)}")
    return "\n".join(lines)


def escape(text: str) -> str:
    """mysql --batch escaping: backslash, newline, tab, carriage return and NUL as \\\\ \\n \\t \\r \\0."""
    if not any(c in text for c in "\\\n\t\r\0"):
        return text
    return (text.replace("\\", "\\\\").replace("\n", "\\n").replace("\t", "\\t")
            .replace("\r", "\\r").replace("\0", "\\0"))


def tab_separated(names: list[str], decls: list[str | None], rows: list[Sequence[Any]],
                  headers: bool = True, raw: bool = False) -> str:
    """``mysql -B``: a header row, then one line per row, fields separated by tabs."""
    esc = (lambda t: t) if raw else escape
    lines = ["\t".join(esc(n) for n in names)] if headers else []
    lines += ["\t".join(esc(cell(v, d)) for v, d in zip(row, decls)) for row in rows]
    return "\n".join(lines)


# -- summary lines ---------------------------------------------------------------------------------------
def duration(seconds: float) -> str:
    """mysql's timing: ``(0.01 sec)``, ``(1 min 2.35 sec)``."""
    if seconds < 60:
        return f"({seconds:.2f} sec)"
    minutes, rest = divmod(seconds, 60)
    if minutes < 60:
        return f"({int(minutes)} min {rest:.2f} sec)"
    hours, minutes = divmod(int(minutes), 60)
    return f"({hours} hour {minutes} min {rest:.2f} sec)"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def summary(*, rows: int | None, affected: int | None, warnings: int, seconds: float | None) -> str:
    """``3 rows in set (0.01 sec)``, ``Empty set``, ``Query OK, 1 row affected, 1 warning (0.00 sec)``."""
    if rows is not None:
        text = "Empty set" if rows == 0 else f"{_plural(rows, 'row')} in set"
    else:
        text = f"Query OK, {_plural(max(affected or 0, 0), 'row')} affected"
    if warnings:
        text += ", " + _plural(warnings, "warning")
    if seconds is not None:
        text += " " + duration(seconds)
    return text
