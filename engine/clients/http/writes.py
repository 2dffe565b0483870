"""``/insert``, ``/replace``, ``/update``, ``/delete`` and the Elasticsearch-style ``/<table>/_doc``.

Each becomes one engine statement with the document's values bound (``INSERT INTO t (id, a, b)
VALUES (?, ?, ?)``, ``UPDATE t SET a = ? WHERE id = ?``, ``DELETE FROM t WHERE <query>``); column
names are quoted. Answers as Manticore's: ``{"table", "id", "created", "result", "status"}``,
``{"table", "updated"}``, ``{"table", "id", "found", "result"}`` or ``{"table", "deleted"}``.
"""
from __future__ import annotations

import json
from typing import Any

from tesseradb.clients.http import query_dsl, tables
from tesseradb.clients.http.fields import RequestError, get, table_name
from tesseradb.clients.http.tables import quote


def document_id(obj: dict[str, Any], name: str = "id", many: bool = False) -> Any:
    """A document id: a non-negative integer (0 or none: the engine assigns one); with ``many``, a
    list of them too."""
    value = obj.get(name)
    if value is None:
        return None
    if isinstance(value, list) and many:
        return [document_id({"id": v}) for v in value]
    if isinstance(value, str) and value.isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise RequestError("Document ids should be integer")
    if value < 0:
        raise RequestError("Negative document ids are not allowed")
    return value


def bind_value(value: Any) -> Any:
    """A JSON value as the engine binds it: objects as JSON text, vectors as lists, booleans as 0/1."""
    if isinstance(value, dict):
        return json.dumps(value)
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, list) and not all(isinstance(v, (int, float, list)) and not isinstance(v, bool) for v in value):
        return json.dumps(value)
    return value


def _doc(obj: dict[str, Any]) -> dict[str, Any]:
    doc = get(obj, "doc", "object", required=True)
    for name in doc:
        if not name or name.lower() == "id":
            raise RequestError("the document's id goes in \"id\", not in \"doc\"" if name else "empty column name")
    return doc


def write_document(con: Any, table: str, doc_id: int | None, doc: dict[str, Any], replace: bool) -> tuple[int, bool]:
    """INSERT or REPLACE one document; returns its id and whether it is new."""
    names = ([] if not doc_id else ["id"]) + list(doc)
    values = ([] if not doc_id else [doc_id]) + [bind_value(v) for v in doc.values()]
    verb = "REPLACE" if replace else "INSERT"
    cur = con.cursor()
    cur.execute(f"{verb} INTO {quote(table)} ({', '.join(quote(n) for n in names)}) "
                f"VALUES ({', '.join('?' * len(values))})", values)
    new_id = doc_id or cur.lastrowid
    return int(new_id), not (replace and cur.rowcount > 1)


def insert(con: Any, request: dict[str, Any], replace: bool = False) -> dict[str, Any]:
    table = table_name(request)
    doc_id = document_id(request)
    new_id, created = write_document(con, table, doc_id, _doc(request), replace)
    return {"table": table, "id": new_id, "created": created, "result": "created" if created else "updated",
            "status": 201 if created else 200}


def _target(con: Any, request: dict[str, Any], table: str) -> tuple[str, list[Any], Any]:
    """The WHERE of an update or delete: ``id`` (one or a list) or ``query``."""
    doc_id = document_id(request, many=True)
    if doc_id is not None and request.get("query") is not None:
        raise RequestError('give either "id" or "query", not both')
    if doc_id is not None:
        ids = doc_id if isinstance(doc_id, list) else [doc_id]
        if not ids:
            raise RequestError('"id" should not be an empty array')
        return f"`id` IN ({', '.join('?' * len(ids))})", ids, doc_id
    if request.get("query") is None:
        raise RequestError('"id" or "query" property missing')
    condition = query_dsl.compile_query(request["query"], tables.read(con, table))
    conds, params = [], []
    if condition.text:
        conds.append("MATCH(?)")
        params.append(condition.text)
    if condition.sql:
        conds.append(f"({condition.sql})")
        params += condition.params
    return (" AND ".join(conds) or "1 = 1"), params, None


def update(con: Any, request: dict[str, Any]) -> dict[str, Any]:
    table = table_name(request)
    doc = _doc(request)
    if not doc:
        raise RequestError('"doc" should name at least one column')
    where, params, doc_id = _target(con, request, table)
    cur = con.cursor()
    sets = ", ".join(f"{quote(n)} = ?" for n in doc)
    cur.execute(f"UPDATE {quote(table)} SET {sets} WHERE {where}", [bind_value(v) for v in doc.values()] + params)
    out: dict[str, Any] = {"table": table, "updated": max(cur.rowcount, 0)}
    if isinstance(doc_id, int):
        out.update(id=doc_id, result="updated" if cur.rowcount > 0 else "noop")
    return out


def delete(con: Any, request: dict[str, Any]) -> dict[str, Any]:
    table = table_name(request)
    where, params, doc_id = _target(con, request, table)
    cur = con.cursor()
    cur.execute(f"DELETE FROM {quote(table)} WHERE {where}", params)
    deleted = max(cur.rowcount, 0)
    if isinstance(doc_id, int):
        return {"table": table, "id": doc_id, "found": deleted > 0, "result": "deleted" if deleted else "not found"}
    return {"table": table, "deleted": deleted}


# -- Elasticsearch-style /<table>/_doc/<id>, /_create/<id>, /_update/<id> ---------------------------
def es_document(con: Any, table: str, doc_id: str | None, body: dict[str, Any], replace: bool) -> dict[str, Any]:
    new_id, created = write_document(con, table, document_id({"id": doc_id}), body, replace)
    return {"_index": table, "_id": new_id, "_type": "_doc", "_version": 1,
            "result": "created" if created else "updated", "status": 201 if created else 200}


def es_update(con: Any, table: str, doc_id: str, body: dict[str, Any]) -> dict[str, Any]:
    return update(con, {"table": table, "id": doc_id, "doc": get(body, "doc", "object", required=True)})


def es_delete(con: Any, table: str, doc_id: str) -> dict[str, Any]:
    out = delete(con, {"table": table, "id": doc_id})
    return {"_index": table, "_id": out["id"], "_type": "_doc", "found": out["found"], "result": out["result"],
            "status": 200 if out["found"] else 404}
