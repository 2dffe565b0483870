"""DuckDB's output modes for results (``--csv``, ``--json``, ``--html``, ``--markdown``), next to the
mysql client's tables, tab-separated batch output and ``\\G``.

- csv: RFC 4180 (fields with a comma, quote or newline are quoted), a header line first as DuckDB and
  ``mysql -B`` print it, dropped by ``-N``; NULL is an empty field.
- json: one array of objects per result, keyed by column name (DuckDB's ``.mode json``), with numbers,
  booleans and null as JSON values, vectors as arrays, dates as ISO text.
- html: a ``<table>`` with a ``<tr><th>`` header row (``mysql --html``), text escaped.
- markdown: a pipe table (DuckDB's ``.mode markdown``), ``|`` in a value escaped.
"""
from __future__ import annotations

import csv
import datetime
import html
import io
import json
import struct
from collections.abc import Callable, Sequence
from typing import Any

from tesseradb.clients.shell.render import cell

Rows = list[Sequence[Any]]


def _csv(names: list[str], decls: list[str | None], rows: Rows, headers: bool) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    if headers:
        writer.writerow(names)
    for row in rows:
        writer.writerow(["" if v is None else cell(v, d) for v, d in zip(row, decls)])
    return buf.getvalue().rstrip("\n")


def short_float(value: float) -> float:
    """A float that is exactly a float32 (a FLOAT column, knn_dist(), a vector entry) as the shortest
    decimal that reads back as the same float32 (``0.8123``, not ``0.8123000264167786``); a true double
    is left as it is."""
    packed = struct.pack("<f", value) if abs(value) < 3.4e38 else None
    if packed is None or struct.unpack("<f", packed)[0] != value:
        return value
    for digits in range(1, 10):
        shorter = float(f"{value:.{digits}g}")
        if struct.pack("<f", shorter) == packed:
            return shorter
    return value


def _json_value(value: Any, decl: str | None) -> Any:
    if isinstance(value, float):
        return short_float(value)
    if value is None or isinstance(value, (bool, int, list, dict)):
        return value
    if isinstance(value, (datetime.date, datetime.datetime)):
        return value.isoformat(sep=" ") if isinstance(value, datetime.datetime) else value.isoformat()
    return cell(value, decl)


def _json(names: list[str], decls: list[str | None], rows: Rows, headers: bool) -> str:
    objects = [{n: _json_value(v, d) for n, v, d in zip(names, row, decls)} for row in rows]
    return "[" + ",\n".join(json.dumps(o, ensure_ascii=False) for o in objects) + "]"


def _html(names: list[str], decls: list[str | None], rows: Rows, headers: bool) -> str:
    lines = ["<TABLE BORDER=1>"]
    if headers:
        lines.append("<TR>" + "".join(f"<TH>{html.escape(n)}</TH>" for n in names) + "</TR>")
    for row in rows:
        lines.append("<TR>" + "".join(f"<TD>{html.escape(cell(v, d))}</TD>" for v, d in zip(row, decls)) + "</TR>")
    return "\n".join(lines + ["</TABLE>"])


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", "<br>")


def _markdown(names: list[str], decls: list[str | None], rows: Rows, headers: bool) -> str:
    lines = ["| " + " | ".join(_md(n) for n in names) + " |", "|" + "|".join("---" for _ in names) + "|"]
    lines += ["| " + " | ".join(_md(cell(v, d)) for v, d in zip(row, decls)) + " |" for row in rows]
    return "\n".join(lines)


MODES: dict[str, Callable[[list[str], list[str | None], Rows, bool], str]] = {
    "csv": _csv, "json": _json, "html": _html, "markdown": _markdown,
}


def render(mode: str, names: list[str], decls: list[str | None], rows: Rows, headers: bool = True) -> str:
    return MODES[mode](names, decls, rows, headers)
