"""The read tools, plain Python over a Session (no MCP here: server.py wires them to the SDK).

Every statement is built from catalog names and ``?`` parameters; every answer is bounded
(limits.py). Scores are "higher is better": hybrid_score() (RRF) for hybrid, BM25 weight() for
keyword, 1 - knn_dist() for semantic and for passages. Each statement says its ORDER BY: with
knn_chunks() in the select list the engine returns knn rows by id, not by distance."""
from __future__ import annotations

from tesseradb.clients.mcp import filters as filter_sql
from tesseradb.clients.mcp.limits import MAX_FIELD_CHARS, MAX_PASSAGE_CHARS
from tesseradb.clients.mcp.schema import TableInfo, quote
from tesseradb.clients.mcp.session import Session, ToolFailure
from tesseradb.clients.mcp.values import jsonable, passages, short_float

MODES = ("hybrid", "semantic", "keyword")


def _title_sql(info: TableInfo) -> str:
    """The title and the path of a hit (NULL when the table has none): every hit is citable."""
    title, path = info.title_column, info.path_column
    return f"{quote(title.name) if title else 'NULL'}, {quote(path.name) if path else 'NULL'}"


def _hit(info: TableInfo, doc_id: int, title, path, score) -> dict:
    hit = {"id": doc_id}
    if info.path_column is not None:
        hit["path"] = jsonable(path, MAX_FIELD_CHARS)[0]
    hit["title"] = jsonable(title, MAX_FIELD_CHARS)[0]
    hit["score"] = short_float(score)
    return hit


def _hybrid(info: TableInfo, cond: str) -> str:
    return (f"SELECT id, {_title_sql(info)}, hybrid_score(), knn_chunks(?) FROM {quote(info.name)} "
            f"WHERE hybrid_match(?, {quote(info.search_column.name)}){cond} ORDER BY hybrid_score() DESC, id LIMIT ?")


def _semantic(info: TableInfo, cond: str) -> str:
    return (f"SELECT id, {_title_sql(info)}, 1 - knn_dist(), knn_chunks(?) FROM {quote(info.name)} "
            f"WHERE knn({quote(info.search_column.name)}, ?, ?){cond} ORDER BY knn_dist(), id")


def _keyword(info: TableInfo, cond: str) -> str:
    fields = ", ".join(quote(c.name) for c in info.text_columns)
    return (f"SELECT id, {_title_sql(info)}, weight() FROM {quote(info.name)} "
            f"WHERE MATCH({fields}) AGAINST(? IN NATURAL LANGUAGE MODE){cond} ORDER BY weight() DESC, id LIMIT ?")


def search(s: Session, query: str, table: str | None = None, limit: int = 10, mode: str = "hybrid",
           chunks_per_doc: int = 2, filters: dict | None = None) -> dict:
    info = s.table(table, searchable=True)
    if mode not in MODES:
        raise ToolFailure(f"mode must be one of {', '.join(MODES)}")
    if mode != "keyword" and info.search_column is None:
        raise ToolFailure(f"table '{info.name}' has no model-backed vector column: use mode='keyword'")
    if mode == "keyword" and not info.text_columns:
        raise ToolFailure(f"table '{info.name}' has no text column for keyword search")
    cond, params = _filters(info, filters)
    if mode == "hybrid":
        rows = s.reader.execute(_hybrid(info, cond), [chunks_per_doc, query, *params, limit]).fetchall()
    elif mode == "semantic":
        rows = s.reader.execute(_semantic(info, cond), [chunks_per_doc, limit, query, *params]).fetchall()
    else:
        ranked = s.reader.execute(_keyword(info, cond), [query, *params, limit]).fetchall()
        rows = _with_passages(s, info, ranked, query, chunks_per_doc)
    results = [{**_hit(info, doc_id, title, path, score), "passages": passages(chunks, MAX_PASSAGE_CHARS)}
               for doc_id, title, path, score, chunks in rows]
    return {"table": info.name, "mode": mode, "count": len(results), "results": results}


def _with_passages(s: Session, info: TableInfo, ranked: list, query: str, n: int) -> list:
    """Keyword hits get the passages nearest the query among their own chunks."""
    if not ranked or info.search_column is None:
        return [(*row, None) for row in ranked]
    ids = [row[0] for row in ranked]
    marks = ", ".join("?" * len(ids))
    sql = (f"SELECT id, knn_chunks(?) FROM {quote(info.name)} WHERE knn({quote(info.search_column.name)}, ?, ?) "
           f"AND id IN ({marks})")
    chunks = dict(s.reader.execute(sql, [n, len(ids), query, *ids]).fetchall())
    return [(*row, chunks.get(row[0])) for row in ranked]


def _filters(info: TableInfo, filters: dict | None) -> tuple[str, list]:
    try:
        return filter_sql.build(info, filters)
    except filter_sql.FilterError as exc:
        raise ToolFailure(str(exc)) from None


def require_document(s: Session, info: TableInfo, doc_id: int) -> None:
    if s.reader.execute(f"SELECT 1 FROM {quote(info.name)} WHERE id = ?", [doc_id]).fetchone() is None:
        raise ToolFailure(f"table '{info.name}' has no document with id {doc_id}")


def similar(s: Session, table: str, id: int, limit: int = 10) -> dict:
    info = s.table(table, searchable=True)
    if info.search_column is None:
        raise ToolFailure(f"table '{info.name}' has no model-backed vector column to compare documents with")
    require_document(s, info, id)
    sql = (f"SELECT id, {_title_sql(info)}, 1 - knn_dist(), knn_chunks(1) FROM {quote(info.name)} "
           f"WHERE knn({quote(info.search_column.name)}, ?, ?) AND id <> ? ORDER BY knn_dist(), id")
    rows = s.reader.execute(sql, [limit, id, id]).fetchall()
    results = [{**_hit(info, doc_id, title, path, score), "passage": (passages(chunk, MAX_PASSAGE_CHARS) or [None])[0]}
               for doc_id, title, path, score, chunk in rows]
    return {"table": info.name, "id": id, "count": len(results), "results": results}
