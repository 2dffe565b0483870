"""describe() (what there is to search) and sql() (one read-only statement, bounded)."""
from __future__ import annotations

import tesseradb
from tesseradb.clients.mcp.limits import MAX_CELL_CHARS, MAX_SQL_ROWS
from tesseradb.clients.mcp.schema import TableInfo, quote
from tesseradb.clients.mcp.session import Session
from tesseradb.clients.mcp.values import jsonable

INDEXES_NOTE = ("indexes are always current: full-text indexes change in the same transaction as the rows, "
                "and a vector search first catches its index up with every committed row")


def _vector_count(column) -> str:
    """Vectors stored in a column: LENGTH() of a float_vector_array is its number of vectors, of a
    float_vector its dimensions (docs/types.md), so a single vector counts once per row."""
    if column.type == "float_vector_array":
        return f"COALESCE(SUM(LENGTH({quote(column.name)})), 0)"
    return f"COUNT({quote(column.name)})"


def _table(s: Session, info: TableInfo) -> dict:
    counts = ["COUNT(*)"] + [_vector_count(c) for c in info.columns if c.is_vector]
    row = s.reader.execute(f"SELECT {', '.join(counts)} FROM {quote(info.name)}").fetchone()
    vectors = [c for c in info.columns if c.is_vector]
    return {
        "name": info.name,
        "rows": row[0],
        "chunks": {c.name: n for c, n in zip(vectors, row[1:])},
        "search_column": info.search_column.name if info.search_column else None,
        "title_column": info.title_column.name if info.title_column else None,
        "full_text_columns": [c.name for c in info.text_columns],
        "columns": [c.describe() for c in info.columns],
        "resource": f"tessera://schema/{info.name}",
    }


def describe(s: Session) -> dict:
    s.refresh()
    used = {c.properties.get("model") for t in s.tables.values() for c in t.columns if c.model_backed}
    models = [{"name": name, "dimensions": dims}       # the catalog names a model as written: an alias
              for name, aliases, dims, *_ in s.reader.execute("SHOW MODELS").fetchall()
              if used & {name, *(a.strip() for a in str(aliases or "").split(","))}]
    return {"database": s.name, "read_only": not s.allow_writes, "sql_is_read_only": True,
            "tables": [_table(s, info) for info in s.tables.values()], "models": models,
            "indexes": INDEXES_NOTE}


def schema_text(s: Session, table: str) -> str:
    """The resource tessera://schema/<table>: the table's CREATE TABLE statement, from the catalog."""
    return s.table(table).schema


def sql(s: Session, query: str) -> dict:
    """One statement on the read-only connection: the engine refuses writes and file statements."""
    cur = s.reader.execute(query)
    if cur.description is None:
        return {"columns": [], "rows": [], "rowcount": cur.rowcount}
    columns = [d[0] for d in cur.description]
    rows = cur.fetchmany(MAX_SQL_ROWS + 1)
    more = len(rows) > MAX_SQL_ROWS
    out, cut = [], False
    for row in rows[:MAX_SQL_ROWS]:
        values = [jsonable(v, MAX_CELL_CHARS) for v in row]
        cut |= any(c for _, c in values)
        out.append([v for v, _ in values])
    answer = {"columns": columns, "rows": out, "row_count": len(out), "warnings": _warnings(s.reader)}
    if more:
        answer["truncated"] = f"only the first {MAX_SQL_ROWS} rows are returned: add a LIMIT or a narrower WHERE"
    if cut:
        answer["values_truncated"] = f"values longer than {MAX_CELL_CHARS} characters are cut"
    return answer


def _warnings(con: tesseradb.Connection) -> list[str]:
    return [f"{level} {code}: {message}" for level, code, message in con.warnings][:20]
