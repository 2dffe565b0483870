"""``/sql``, ``/cli`` and ``/cli_json``: SQL over HTTP, as Manticore reads and answers it.

Which text is the statement (``searchdhttp.cpp``): a body starting ``query=``, ``mode=raw&query=`` or
``raw_response=true&query=`` is form-decoded; any other body is the statement itself, unencoded
(``UtilsApi.sql`` sends it so, as ``text/plain``); ``GET /sql?query=...`` reads the URL. ``mode=raw``
(or ``raw_response=true``; ``mode`` wins) runs any statements, several separated by ``;``, and answers
``[{"columns", "data", "total", "error", "warning"}]`` per statement; without it only a SELECT is
allowed, answered in the ``/search`` shape.
"""
from __future__ import annotations

import re
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any

from tesseradb.clients.http.responses import json_value, plain, raw_ok, raw_result
from tesseradb.clients.shell.render import summary, table as text_table
from tesseradb.clients.shell.scanner import split_script

FORM_PREFIXES = (b"query=", b"mode=raw&query=", b"raw_response=true&query=")
SELECT_START = re.compile(r"^(?:\s+|/\*.*?\*/|--[^\n]*\n|#[^\n]*\n|\()*select\b", re.I | re.S)


@dataclass
class SqlRequest:
    query: str
    raw: bool


def read_request(body: bytes, url_options: dict[str, str]) -> SqlRequest:
    options = dict(url_options)
    if body.startswith(FORM_PREFIXES):
        options.update({k: v[-1] for k, v in urllib.parse.parse_qs(
            body.decode("utf-8", "replace"), keep_blank_values=True).items()})
    elif body:
        options["query"] = body.decode("utf-8", "replace")
    if "mode" in options:
        raw = options["mode"] == "raw"
    else:
        raw = options.get("raw_response", "").lower() == "true"
    return SqlRequest(options.get("query", ""), raw)


def _statements(text: str) -> list[str]:
    return [s.text for s in split_script(text) if hasattr(s, "text") and s.text.strip()]


def _warning(con: Any) -> str:
    return "; ".join(message for _, _, message in con.warnings)


def run_raw(con: Any, text: str) -> list[dict[str, Any]]:
    """Every statement of ``text``; the first error ends the request (HTTP 500 ``{"error"}``)."""
    out = []
    for statement in _statements(text) or [text]:
        cur = con.cursor()
        cur.execute(statement)
        if cur.description is None:
            out.append(raw_ok(cur.rowcount, _warning(con)))
        else:
            out.append(raw_result(list(cur.description), cur.fetchall(), _warning(con)))
    return out


def run_select(con: Any, text: str) -> dict[str, Any]:
    """A SELECT answered as ``/search`` answers: hits with ``_id``, ``_score`` and ``_source``."""
    if not SELECT_START.match(text):
        raise plain("only SELECT queries are supported", 501)
    started = time.perf_counter()
    cur = con.cursor()
    cur.execute(text)
    if cur.description is None:
        raise plain("only SELECT queries are supported", 501)
    names = [str(d[0]) for d in cur.description]
    hits = []
    for row in cur.fetchall():
        values = dict(zip(names, row))
        hit: dict[str, Any] = {}
        if "id" in values and isinstance(values["id"], int):
            hit["_id"] = values.pop("id")
        hit["_score"] = 1
        hit["_source"] = {k: json_value(v) for k, v in values.items()}
        hits.append(hit)
    return {"took": int((time.perf_counter() - started) * 1000), "timed_out": False,
            "hits": {"total": len(hits), "total_relation": "eq", "hits": hits}}


def run_cli(con: Any, text: str) -> str:
    """What the mysql client would print (Manticore's ``/cli``)."""
    parts = []
    for statement in _statements(text) or [text]:
        started = time.perf_counter()
        cur = con.cursor()
        cur.execute(statement)
        warnings = len(con.warnings)
        if cur.description is None:
            parts.append(summary(rows=None, affected=cur.rowcount, warnings=warnings,
                                 seconds=time.perf_counter() - started))
            continue
        rows = cur.fetchall()
        names = [str(d[0]) for d in cur.description]
        decls = [d[1] for d in cur.description]
        if rows:
            parts.append(text_table(names, decls, rows))
        parts.append(summary(rows=len(rows), affected=None, warnings=warnings, seconds=time.perf_counter() - started))
    return "\n".join(parts) + "\n"
