"""The write tools of ``--allow-writes``: add, update, delete documents, sync a folder.

They run on the one writable connection with statements built from catalog names and ``?``
parameters; ``sql`` never reaches this connection."""
from __future__ import annotations

import os
import re
from typing import Any

from tesseradb.clients.mcp.limits import MAX_WRITE_DOCUMENTS
from tesseradb.clients.mcp.schema import TableInfo, quote
from tesseradb.clients.mcp.session import Session, ToolFailure


def _columns(info: TableInfo, values: dict[str, Any], *, allow_id: bool) -> list[str]:
    if not isinstance(values, dict) or not values:
        raise ToolFailure("a document is an object {column: value} with at least one column")
    names = []
    for name in values:
        column = info.column(name)
        if column is None or (column.name.lower() == "id" and not allow_id):
            known = ", ".join(c.name for c in info.columns if allow_id or c.name.lower() != "id")
            raise ToolFailure(f"table '{info.name}' has no column {name!r} to write (it has: {known})")
        if column.model_backed:
            raise ToolFailure(f"column {column.name} is embedded by the database from "
                              f"{column.properties['from']}: write those columns instead")
        names.append(column.name)
    return names


def add(s: Session, table: str, documents: list[dict[str, Any]]) -> dict:
    con = s.write_connection()
    info = s.table(table)
    if not documents or len(documents) > MAX_WRITE_DOCUMENTS:
        raise ToolFailure(f"add takes 1 to {MAX_WRITE_DOCUMENTS} documents")
    statements = []
    for doc in documents:
        names = _columns(info, doc, allow_id=True)
        marks = ", ".join("?" * len(names))
        statements.append((f"INSERT INTO {quote(info.name)} ({', '.join(quote(n) for n in names)}) VALUES ({marks})",
                           list(doc.values())))
    ids = []
    con.execute("BEGIN")
    try:
        for sql, params in statements:
            ids.append(con.execute(sql, params).lastrowid)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return {"table": info.name, "added": len(ids), "ids": ids}


def update(s: Session, table: str, id: int, values: dict[str, Any]) -> dict:
    con = s.write_connection()
    info = s.table(table)
    names = _columns(info, values, allow_id=False)
    assignments = ", ".join(f"{quote(n)} = ?" for n in names)
    cur = con.execute(f"UPDATE {quote(info.name)} SET {assignments} WHERE id = ?", [*values.values(), id])
    if cur.rowcount == 0:
        raise ToolFailure(f"table '{info.name}' has no document with id {id}")
    return {"table": info.name, "id": id, "updated": True}


def delete(s: Session, table: str, ids: list[int]) -> dict:
    con = s.write_connection()
    info = s.table(table)
    if not ids or len(ids) > MAX_WRITE_DOCUMENTS:
        raise ToolFailure(f"delete takes 1 to {MAX_WRITE_DOCUMENTS} ids")
    marks = ", ".join("?" * len(ids))
    cur = con.execute(f"DELETE FROM {quote(info.name)} WHERE id IN ({marks})", list(ids))
    return {"table": info.name, "deleted": cur.rowcount}


# The path is LOAD DATA's bound parameter, read as a glob: a folder name with glob characters would
# name other folders, and the engine refuses NUL.
UNSAFE_PATH_CHARACTERS = set("*?[\0")
SYNC_COUNTS = re.compile(r"(\d+) (added|changed|unchanged|removed|skipped)")


def sync_target(root: str, path: str) -> str:
    """``path`` (relative to the --allow-sync folder, or absolute) resolved, symlinks included; it
    must stay inside the folder."""
    if any(ch in UNSAFE_PATH_CHARACTERS for ch in path):
        raise ToolFailure("the path holds a glob character (* ? [) or NUL: name a folder without them")
    target = os.path.realpath(os.path.join(root, path))
    if target != root and not target.startswith(root + os.sep):
        raise ToolFailure(f"sync works only inside {root} (given at start with --allow-sync)")
    if not os.path.exists(target):
        raise ToolFailure(f"{path!r} does not exist inside {root}")
    if any(ch in UNSAFE_PATH_CHARACTERS for ch in target):
        raise ToolFailure("the folder's full path holds a glob character (* ? [): sync a folder without them")
    return target


def sync(s: Session, table: str, path: str = ".") -> dict:
    """LOAD DATA ... SYNC of a folder inside --allow-sync, on the writer connection, which the engine
    confines to that folder (secure_file_priv): a link inside leading out is skipped, not followed."""
    con = s.write_connection()
    if s.sync_root is None:
        raise ToolFailure("sync is off: start tessera mcp with --allow-sync DIR")
    info = s.table(table)
    target = sync_target(s.sync_root, path)
    pattern = os.path.join(target, "**", "*") if os.path.isdir(target) else target
    cur = con.execute(f"LOAD DATA INFILE ? SYNC INTO TABLE {quote(info.name)}", [pattern])
    notes = [message for _, _, message in con.warnings]
    summary = next((n for n in notes if n.startswith("LOAD DATA SYNC")), "")
    counts = {kind: int(n) for n, kind in SYNC_COUNTS.findall(summary.rpartition(": ")[2])}
    return {"table": info.name, "path": target, "counts": counts, "rowcount": cur.rowcount, "notes": notes[:20]}
