"""read() and context(): a document, one of its sections, or a passage with its neighbours.

Passages come from the chunk spans the engine reports (SHOW CHUNKS: ordinal, start, end, text);
nothing is re-chunked here. Sections and the outline come from the headings of the document's own
text (``tesseradb.clients.mcp.sections``), so they do not depend on where the chunks were cut."""
from __future__ import annotations

from tesseradb.clients.mcp import sections
from tesseradb.clients.mcp.limits import MAX_FIELD_CHARS, MAX_READ_CHARS, MAX_SECTION_SCAN, MAX_WINDOW, cap
from tesseradb.clients.mcp.schema import TableInfo, quote
from tesseradb.clients.mcp.session import Session, ToolFailure
from tesseradb.clients.mcp.tools import require_document, similar
from tesseradb.clients.mcp.values import jsonable

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


def _section_texts(s: Session, info: TableInfo, doc_id: int) -> list[tuple[str, str]]:
    """(column, text) of the columns a section is looked for in: the search column's ``from``
    columns in order (title, body), else every text column."""
    vector = info.search_column
    names = [n.strip() for n in vector.properties["from"].split(",")] if vector else []
    columns = [c for c in (info.column(n) for n in names) if c is not None and not c.is_vector] \
        or info.text_columns
    if not columns:
        raise ToolFailure(f"table '{info.name}' has no text column to read a section from")
    listed = ", ".join(quote(c.name) for c in columns)
    row = s.reader.execute(f"SELECT {listed} FROM {quote(info.name)} WHERE id = ?", [doc_id]).fetchone()
    if row is None:
        raise ToolFailure(f"table '{info.name}' has no document with id {doc_id}")
    return [(c.name, v) for c, v in zip(columns, row) if isinstance(v, str)]


def _scanned(text: str) -> str:
    """The part of a text whose headings are read: its first MAX_SECTION_SCAN characters, to the
    end of a line, so that a 50 MB document costs no more than a 2 MB one."""
    if len(text) <= MAX_SECTION_SCAN:
        return text
    return text[:text.rfind("\n", 0, MAX_SECTION_SCAN) + 1 or MAX_SECTION_SCAN]


def _section(s: Session, info: TableInfo, doc_id: int, section: str) -> dict:
    """The section whose heading path ends with ``section``, cut from the document's text as stored
    (its heading line through its sub-sections; ``tesseradb.clients.mcp.sections``)."""
    texts = _section_texts(s, info, doc_id)
    for column, text in texts:
        text = _scanned(text)
        found = sections.find(text, section)
        if found:
            body, cut = cap(sections.section_text(text, found[0]), MAX_READ_CHARS)
            return {"table": info.name, "id": doc_id, "column": column, "section": found[0].heading,
                    "text": body, "truncated": cut, "other_matches": [f.heading for f in found[1:]][:20]}
    headings = [h.heading for _, text in texts for h in sections.sections(_scanned(text))][:MAX_OUTLINE]
    looked = f" in its first {MAX_SECTION_SCAN:,} characters" if any(
        len(text) > MAX_SECTION_SCAN for _, text in texts) else ""
    raise ToolFailure(f"document {doc_id} has no section {section!r}{looked}; its headings: "
                      + ("; ".join(headings[:50]) if headings else "none (read it whole, or a passage "
                                                                 "with chunk and window)"))


def context(s: Session, table: str, id: int) -> dict:
    info = s.table(table)
    fields, cut = _fields(s, info, id, MAX_FIELD_CHARS)
    answer = {"table": info.name, "id": id, "fields": fields, "truncated": cut}
    if info.search_column is None:
        return {**answer, "outline": None, "similar": []}
    chunks = _chunks(s, info, id)
    answer["chunks"] = len(chunks)
    answer["outline"] = [h.heading for _, text in _section_texts(s, info, id)
                         for h in sections.sections(_scanned(text))][:MAX_OUTLINE]     # what read(section=) finds
    answer["similar"] = similar(s, info.name, id, CONTEXT_SIMILAR)["results"]
    return answer
