"""read() and context(): a document, one of its sections, or a passage with its neighbours.

Sections and passages come from the chunk spans the engine reports (SHOW CHUNKS: ordinal, start,
end, text, and the heading path where the engine records one); nothing is re-chunked here."""
from __future__ import annotations

from tesseradb.clients.mcp.limits import MAX_FIELD_CHARS, MAX_READ_CHARS, MAX_WINDOW, cap
from tesseradb.clients.mcp.schema import TableInfo, quote
from tesseradb.clients.mcp.session import Session, ToolFailure
from tesseradb.clients.mcp.tools import require_document, similar
from tesseradb.clients.mcp.values import jsonable

PATH_SEPARATOR = " > "
MAX_OUTLINE = 200
CONTEXT_SIMILAR = 5


def _chunks(s: Session, info: TableInfo, doc_id: int) -> list[dict]:
    """The document's chunks in order: {chunk, start, end, text, heading?}."""
    column = info.search_column
    if column is None:
        raise ToolFailure(f"table '{info.name}' has no model-backed vector column: it has no passages or sections")
    cur = s.reader.execute(f"SHOW CHUNKS FROM {quote(info.name)}.{quote(column.name)} WHERE id = ?", [doc_id])
    names = [d[0].lower() for d in cur.description]
    return [dict(zip(names, row)) for row in cur.fetchall()]


def merged(chunks: list[dict]) -> str:
    """The text the chunks cover, in order, overlaps not repeated (a gap between two becomes a space)."""
    text, end = "", None
    for chunk in chunks:
        piece = chunk["text"] or ""
        if end is not None and chunk["start"] is not None:
            if chunk["start"] < end:
                piece = piece[end - chunk["start"]:]
            elif chunk["start"] > end:
                text += " "
        text += piece
        end = chunk["end"] if chunk["end"] is not None else end
    return text


def _fields(s: Session, info: TableInfo, doc_id: int, limit: int) -> tuple[dict, list[str]]:
    columns = info.data_columns
    listed = ", ".join(quote(c.name) for c in columns)
    row = s.reader.execute(f"SELECT {listed} FROM {quote(info.name)} WHERE id = ?", [doc_id]).fetchone()
    if row is None:
        raise ToolFailure(f"table '{info.name}' has no document with id {doc_id}")
    fields, cut = {}, []
    for column, value in zip(columns, row):
        fields[column.name], was_cut = jsonable(value, limit)
        if was_cut:
            cut.append(column.name)
    return fields, cut


def read(s: Session, table: str, id: int, section: str | None = None, chunk: int | None = None,
         window: int | None = None) -> dict:
    info = s.table(table)
    if section is not None and chunk is not None:
        raise ToolFailure("give either section or chunk (with window), not both")
    if window is not None and chunk is None:
        raise ToolFailure("window counts the chunks on each side of a passage: give its chunk number too "
                          "(the 'chunk' of a search passage)")
    if section is not None:
        return _section(s, info, id, section)
    if chunk is not None:
        return _window(s, info, id, chunk, 1 if window is None else window)
    fields, cut = _fields(s, info, id, MAX_READ_CHARS)
    return {"table": info.name, "id": id, "fields": fields, "truncated": cut}


def _window(s: Session, info: TableInfo, doc_id: int, chunk: int, window: int) -> dict:
    if not 0 <= window <= MAX_WINDOW:
        raise ToolFailure(f"window must be between 0 and {MAX_WINDOW}")
    require_document(s, info, doc_id)
    chunks = _chunks(s, info, doc_id)
    if not 1 <= chunk <= len(chunks):
        raise ToolFailure(f"document {doc_id} has chunks 1 to {len(chunks)}; there is no chunk {chunk}")
    picked = [c for c in chunks if chunk - window <= c["chunk"] <= chunk + window]
    text, cut = cap(merged(picked), MAX_READ_CHARS)
    return {"table": info.name, "id": doc_id, "chunks": [picked[0]["chunk"], picked[-1]["chunk"]],
            "heading": next((c.get("heading") for c in picked if c["chunk"] == chunk), None),
            "text": text, "truncated": cut}


def _path(heading: str | None) -> list[str]:
    return [part.strip().lower() for part in heading.split(PATH_SEPARATOR)] if heading else []


def _in_section(wanted: list[str], path: list[str]) -> bool:
    """The chunk's heading path runs through the wanted heading (a name, or a path ending in one)."""
    n = len(wanted)
    return any(path[i:i + n] == wanted for i in range(len(path) - n + 1))


def _section(s: Session, info: TableInfo, doc_id: int, section: str) -> dict:
    require_document(s, info, doc_id)
    chunks = _chunks(s, info, doc_id)
    if chunks and "heading" not in chunks[0]:
        raise ToolFailure("this database's chunks do not record their heading paths (an engine without "
                          "markdown chunking), so sections cannot be read: use chunk and window instead")
    wanted = _path(section)
    picked = [c for c in chunks if wanted and _in_section(wanted, _path(c.get("heading")))]
    if not picked:
        headings = _outline(chunks)[:50]
        raise ToolFailure(f"document {doc_id} has no section {section!r}; its headings: "
                          + ("; ".join(headings) if headings else "none"))
    text, cut = cap(merged(picked), MAX_READ_CHARS)
    return {"table": info.name, "id": doc_id, "section": picked[0]["heading"],
            "chunks": [picked[0]["chunk"], picked[-1]["chunk"]], "text": text, "truncated": cut}


def _outline(chunks: list[dict]) -> list[str]:
    seen: list[str] = []
    for chunk in chunks:
        heading = chunk.get("heading")
        if heading and heading not in seen:
            seen.append(heading)
    return seen[:MAX_OUTLINE]


def context(s: Session, table: str, id: int) -> dict:
    info = s.table(table)
    fields, cut = _fields(s, info, id, MAX_FIELD_CHARS)
    answer = {"table": info.name, "id": id, "fields": fields, "truncated": cut}
    if info.search_column is None:
        return {**answer, "outline": None, "similar": []}
    chunks = _chunks(s, info, id)
    answer["chunks"] = len(chunks)
    answer["outline"] = _outline(chunks) if chunks and "heading" in chunks[0] else None
    answer["similar"] = similar(s, info.name, id, CONTEXT_SIMILAR)["results"]
    return answer
