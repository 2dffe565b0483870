"""Where CALL CHAT's sources come from: the engine's own search on the table (docs/chat.md#retrieval).

``hybrid_match`` by default (BM25 on the chunks fused with knn, what ranks best on our questions), or
``knn`` (``retrieval='knn'``, as Manticore searches), each with the matched passage, its heading path and
its section (``knn_chunk_text()``, ``knn_chunk_heading()``, ``knn_chunk_section()``), one hit per
document, best first; then the hits' rows, vector columns left out (Manticore's ``sources``). Every
statement is built from names the catalog resolved (quoted) and binds the question as a parameter.
"""
from __future__ import annotations

from typing import Any

from tesseradb import errors
from tesseradb.catalog.tables import Table
from tesseradb.chat.prompt import Hit
from tesseradb.catalog.vector_columns import VectorSpec
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.sql.database import Database
from tesseradb.sql.statements import query

TITLE_COLUMNS = ("path", "title")        # shown in a source's label when the table has one
SEARCHES = {
    "hybrid": "SELECT id, hybrid_score(), knn_chunk_heading(), knn_chunk_text(), knn_chunk_section() "
              "FROM {table} WHERE hybrid_match(?, {column}) LIMIT {limit}",
    "knn": "SELECT id, knn_dist(), knn_chunk_heading(), knn_chunk_text(), knn_chunk_section() "
           "FROM {table} WHERE knn({column}, {limit}, ?)",
}
SCORE_NAMES = {"hybrid": "hybrid_score", "knn": "knn_dist"}


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def vector_field(table: Table, name: str | None) -> VectorSpec:
    """The column CALL CHAT searches: the one named (it must embed its from= columns), else the first
    such column of the table, as Manticore picks the first FLOAT_VECTOR field."""
    if name:
        spec = table.vectors.get(name.lower())
        if spec is None:
            raise UserError(f"CALL CHAT: table '{table.name}' has no vector field '{name}'", errors.NoSuchColumn)
        if not spec.model_name:
            raise UserError(f"CALL CHAT: vector field '{name}' has no model_name; conversational search needs "
                            "a column that embeds its from= columns", errors.ProgrammingError)
        return spec
    models = table.model_columns()
    if not models:
        raise UserError(f"CALL CHAT: table '{table.name}' has no vector field with model_name and from=",
                        errors.ProgrammingError)
    return models[0]


def _select(db: Database, sql: str, params: tuple) -> list[tuple]:
    stmt = db.statements.parse(sql)
    assert isinstance(stmt, ast.Query)
    return query.select(db, stmt, params).rows


def _rows(db: Database, table: Table, ids: list[int]) -> dict[int, dict[str, Any]]:
    """The hits' rows without their vector columns, by id."""
    names = [c.name for c in table.columns if not table.is_vector(c.name) and c.name.lower() != "id"]
    marks = ", ".join("?" for _ in ids)
    columns = ", ".join(["id", *(quote(n) for n in names)])
    rows = _select(db, f"SELECT {columns} FROM {quote(table.name)} WHERE id IN ({marks})", tuple(ids))
    return {r[0]: dict(zip(["id", *names], r)) for r in rows}


def search(db: Database, table: Table, spec: VectorSpec, text: str, *, retrieval: str, limit: int) -> list[Hit]:
    sql = SEARCHES[retrieval].format(table=quote(table.name), column=quote(spec.column), limit=int(limit))
    found = _select(db, sql, (text,))
    rows = _rows(db, table, [r[0] for r in found]) if found else {}
    hits = []
    for doc_id, score, heading, passage, section in found:
        row = rows.get(doc_id, {"id": doc_id})
        title = next((str(row[k]) for k in row if k.lower() in TITLE_COLUMNS and row[k]), None)
        hits.append(Hit(id=doc_id, score=score, passage=passage, section=section, heading=heading or None,
                        title=title, row=row))
    return hits
