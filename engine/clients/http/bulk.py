"""``/bulk`` (Manticore's NDJSON) and ``/_bulk`` (Elasticsearch's).

``/bulk``: one statement per line (``insert``/``create``, ``replace``/``index``, ``update``,
``delete``). As in Manticore, consecutive lines on the same table run in one transaction, committed
when the table changes and at the end; the first error rolls back the open transaction and stops
(what was committed before it stays). Consecutive inserts with the same columns go to the engine as
one ``executemany``, so their text is embedded in one batch. The answer: ``{"items": [{"bulk":
{"table", "_id", "created", "deleted", "updated", "result", "status"}}], "current_line",
"skipped_lines", "errors", "error"}``.

``/_bulk``: pairs of an action line (``index``, ``create``, ``update``, ``delete`` with ``_index``
and ``_id``) and a source line; every item stands alone, as in Elasticsearch.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from tesseradb import errors
from tesseradb.clients.http import writes
from tesseradb.clients.http.fields import RequestError, get, table_name
from tesseradb.clients.http.responses import PARSE, REFUSED, engine_message
from tesseradb.clients.http.tables import quote

ACTIONS = {"insert": "insert", "create": "insert", "replace": "replace", "index": "replace",
           "update": "update", "delete": "delete"}


def ndjson_lines(body: bytes) -> list[tuple[int, Any]]:
    """(line number, parsed JSON or a RequestError) of every non-blank line."""
    out = []
    for number, line in enumerate(body.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            out.append((number, json.loads(line)))
        except (ValueError, RecursionError) as exc:
            out.append((number, RequestError(f"JSON parse error at line {number}: {exc}")))
    return out


@dataclass
class Group:
    """The open transaction: its table and what it did."""
    table: str | None = None
    first_line: int = 0
    last_id: int = 0
    created: int = 0
    updated: int = 0
    deleted: int = 0
    batch_key: tuple | None = None
    batch: list[list[Any]] = field(default_factory=list)


def bulk(con: Any, body: bytes) -> tuple[dict[str, Any], int]:
    items: list[dict[str, Any]] = []
    group = Group()
    line = committed = 0
    error = ""
    cur = con.cursor()
    try:
        for line, parsed in ndjson_lines(body):
            op, request = _statement(parsed)
            table = table_name(request)
            if group.table is not None and table.lower() != group.table.lower():
                _commit(cur, group, items)
                committed = line - 1
                group = Group()
            if group.table is None:
                cur.execute("BEGIN")
                group.table, group.first_line = table, line
            _apply(con, cur, group, op, request)
        if group.table is not None:
            _commit(cur, group, items)
        committed = line
    except RequestError as exc:
        error = exc.message
        items.append({"bulk": {"table": group.table, "error": {"type": PARSE, "reason": error}, "status": 400}})
    except errors.Error as exc:             # the engine refused a statement: answered, not raised
        error = engine_message(exc)
        items.append({"bulk": {"table": group.table, "error": {"type": REFUSED, "reason": error}, "status": 409}})
    if error and con.in_transaction:
        con.rollback()
    out = {"items": items, "current_line": line, "skipped_lines": line - committed,
           "errors": bool(error), "error": error}
    return out, 500 if error else 200


def _statement(parsed: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(parsed, RequestError):
        raise parsed
    if not isinstance(parsed, dict) or len(parsed) != 1:
        raise RequestError("each line should be an object with one statement: insert, replace, update or delete")
    name, request = next(iter(parsed.items()))
    if name not in ACTIONS:
        raise RequestError(f"unknown bulk operation: {name}")
    if not isinstance(request, dict):
        raise RequestError(f'"{name}" property value should be an object')
    return ACTIONS[name], request


def _apply(con: Any, cur: Any, group: Group, op: str, request: dict[str, Any]) -> None:
    if op in ("insert", "replace"):
        doc_id = writes.document_id(request)
        doc = get(request, "doc", "object", required=True)
        key = (op, bool(doc_id), tuple(doc))
        if group.batch_key != key:
            _flush(cur, group)
            group.batch_key = key
        group.batch.append(([doc_id] if doc_id else []) + [writes.bind_value(v) for v in doc.values()])
        return
    _flush(cur, group)
    if op == "update":
        group.updated += writes.update(con, request)["updated"]
    else:
        out = writes.delete(con, request)
        group.deleted += out.get("deleted", 1 if out.get("found") else 0)


def _flush(cur: Any, group: Group) -> None:
    if not group.batch:
        return
    op, with_id, columns = group.batch_key  # type: ignore[misc]
    names = (["id"] if with_id else []) + list(columns)
    sql = (f"{'REPLACE' if op == 'replace' else 'INSERT'} INTO {quote(group.table or '')} "
           f"({', '.join(quote(n) for n in names)}) VALUES ({', '.join('?' * len(names))})")
    cur.executemany(sql, group.batch)
    group.created += len(group.batch)
    group.last_id = group.batch[-1][0] if with_id else (cur.lastrowid or group.last_id)
    group.batch, group.batch_key = [], None


def _commit(cur: Any, group: Group, items: list[dict[str, Any]]) -> None:
    _flush(cur, group)
    cur.execute("COMMIT")
    items.append({"bulk": {"table": group.table, "_id": group.last_id, "created": group.created,
                           "deleted": group.deleted, "updated": group.updated, "result": "created",
                           "status": 201}})


# -- Elasticsearch's /_bulk --------------------------------------------------------------------------
def es_bulk(con: Any, body: bytes) -> dict[str, Any]:
    started = time.perf_counter()
    lines = ndjson_lines(body)
    items: list[dict[str, Any]] = []
    i = 0
    while i < len(lines):
        _, action = lines[i]
        i += 1
        if isinstance(action, RequestError) or not isinstance(action, dict) or len(action) != 1:
            items.append({"error": {"type": PARSE, "reason": "malformed action line"}, "status": 400})
            continue
        name, meta = next(iter(action.items()))
        source: Any = None
        if name != "delete" and i < len(lines):
            source = lines[i][1]
            i += 1
        items.append({name: _es_item(con, name, meta, source)})
    return {"items": items, "errors": any("error" in next(iter(item.values())) for item in items),
            "took": int((time.perf_counter() - started) * 1000)}


def _es_item(con: Any, name: str, meta: Any, source: Any) -> dict[str, Any]:
    table = meta.get("_index") if isinstance(meta, dict) else None
    doc_id = meta.get("_id") if isinstance(meta, dict) else None
    try:
        if not isinstance(table, str) or not table:
            raise RequestError('"_index" property missing')
        if name == "delete":
            return writes.es_delete(con, table, doc_id)
        if not isinstance(source, dict):
            raise RequestError("the source line should be a JSON object")
        if name == "update":
            return writes.es_update(con, table, doc_id, source)
        if name not in ("index", "create"):
            raise RequestError(f"unknown bulk operation: {name}")
        return writes.es_document(con, table, doc_id, source, replace=name == "index")
    except RequestError as exc:
        return {"_index": table, "_id": doc_id, "error": {"type": PARSE, "reason": exc.message}, "status": 400}
    except errors.Error as exc:             # the engine refused this item only
        return {"_index": table, "_id": doc_id, "error": {"type": REFUSED, "reason": engine_message(exc)},
                "status": 409}
