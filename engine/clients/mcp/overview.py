"""describe() (what there is to search) and sql() (one read-only statement, bounded)."""
from __future__ import annotations

import json
import re

import tesseradb
from tesseradb.clients.mcp.limits import MAX_CELL_CHARS, MAX_SQL_ANSWER_CHARS, MAX_SQL_ROWS
from tesseradb.clients.mcp.schema import TableInfo, quote
from tesseradb.clients.mcp.session import Session, ToolFailure
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


# statements that open, end or shape a transaction or the session: refused by sql(), which runs each
# statement on its own (a transaction left open would pin one worker's snapshot, and a SET would
# lift the bounds of its answers)
_SESSION_STATEMENT = re.compile(
    r"(?:start\s+transaction|begin|commit|rollback|savepoint|release\s+savepoint|xa|set|lock|unlock)\b",
    re.IGNORECASE)
_LEADING_COMMENTS = re.compile(r"(?:\s+|/\*.*?\*/|(?:--\s|#)[^\n]*(?:\n|$))*", re.DOTALL)


def refuse_session_statement(query: str) -> None:
    head = query[_LEADING_COMMENTS.match(query).end():].lstrip("(")
    if _SESSION_STATEMENT.match(head):
        word = head.split(None, 1)[0].upper()
        raise ToolFailure(f"sql() runs one read-only statement on its own; {word} is not available: "
                          "there is no transaction or session across calls (each call reads the "
                          "database as last committed)")


def sql(s: Session, query: str) -> dict:
    """One statement on the read-only connection: the engine refuses writes and file statements.
    The answer holds at most MAX_SQL_ROWS rows and MAX_SQL_ANSWER_CHARS characters of values (a
    wide row is cut at the column where the budget ends, and the answer says so)."""
    refuse_session_statement(query)
    reader = s.reader
    try:
        cur = reader.execute(query)
        return _answer(cur, _warnings(reader))
    finally:
        if reader.in_transaction:        # nothing may stay open on a worker's connection
            reader.rollback()


def _answer(cur, warnings: list[str]) -> dict:
    if cur.description is None:
        return {"columns": [], "rows": [], "rowcount": cur.rowcount}
    columns = [d[0] for d in cur.description]
    rows = cur.fetchmany(MAX_SQL_ROWS + 1)
    more = len(rows) > MAX_SQL_ROWS or any(w.startswith("Warning 1301") for w in warnings)
    out, cut, budget, stopped = [], False, MAX_SQL_ANSWER_CHARS, None
    for row in rows[:MAX_SQL_ROWS]:
        values = []
        for value in row:
            shown, was_cut = jsonable(value, MAX_CELL_CHARS)
            cut |= was_cut
            budget -= len(json.dumps(shown, ensure_ascii=False, default=str))
            if budget < 0 and (out or values):
                stopped = (len(out), len(values))
                break
            values.append(shown)
        out.append(values)
        if stopped:
            break
    answer = {"columns": columns, "rows": out, "row_count": len(out), "warnings": warnings}
    if stopped:
        row, kept = stopped
        answer["truncated"] = (f"the answer is cut at {MAX_SQL_ANSWER_CHARS:,} characters of values: row "
                               f"{row + 1} has its first {kept} of {len(columns)} columns, and no row follows; "
                               "select fewer columns, a narrower WHERE or a LIMIT")
    elif more:
        answer["truncated"] = f"only the first {len(out)} rows are returned: add a LIMIT or a narrower WHERE"
    if cut:
        answer["values_truncated"] = f"values longer than {MAX_CELL_CHARS} characters are cut"
    return answer


def _warnings(con: tesseradb.Connection) -> list[str]:
    return [f"{level} {code}: {message}" for level, code, message in con.warnings][:20]
