"""``CALL EVALUATE('<SELECT ... ?>', '<questions table>')``: how well a retrieval query finds the
answers, on the user's own data (docs/evaluation.md).

The questions table has the columns ``question`` (text) and ``answer_id`` (the id of the document
that answers it). The SELECT is run once per question with the question bound to its one ``?``; the
first column of its rows is read as document ids, best first (the first 10 count). One row per
question — its rank (NULL when the answer is not in the first 10), hit@1/@5/@10, reciprocal rank,
nDCG@10 (one relevant document: 1 / log2(rank + 1)) — follows the row ``(all)`` with the means:
recall@1/@5/@10, MRR and nDCG@10.
"""
from __future__ import annotations

import math
from typing import Any

from tesseradb import errors
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql.statements import query
from tesseradb.sql.database import Database
from tesseradb.storage.catalog import quote

DEPTH = 10
COLUMNS = [("question", None), ("answer_id", None), ("rank", None), ("recall@1", None), ("recall@5", None),
           ("recall@10", None), ("mrr", None), ("ndcg@10", None)]


def _value(arg: Any, params: Any) -> Any:
    if not isinstance(arg, ast.Placeholder):
        return arg
    if params is None or isinstance(params, dict) or arg.index >= len(params):
        raise UserError("Incorrect number of bindings supplied for CALL EVALUATE", errors.ProgrammingError)
    return params[arg.index]


def _arguments(stmt: ast.CallEvaluate, params: Any) -> tuple[str, str]:
    values = [_value(a, params) for a in stmt.args]
    if stmt.options or len(values) != 2 or not all(isinstance(v, str) for v in values):
        raise UserError("CALL EVALUATE expects ('<SELECT with ? for the question>', '<table of questions>')", errors.SqlSyntaxError)
    return values[0], values[1]


def _select(db: Database, sql: str) -> ast.Query:
    try:
        stmt = db.statements.parse(sql)
    except errors.Error as exc:
        raise UserError(f"CALL EVALUATE: the query does not parse: {exc}", errors.SqlSyntaxError) from exc
    if not isinstance(stmt, ast.Query) or stmt.kind != "select":
        raise UserError("CALL EVALUATE: the first argument must be a SELECT (with ? for the question)", errors.SqlSyntaxError)
    if sql.count("?") != 1:
        raise UserError("CALL EVALUATE: the SELECT must have exactly one ?, where the question goes", errors.SqlSyntaxError)
    return stmt


def _questions(db: Database, name: str) -> list[tuple[str, int]]:
    table = db.table(name)                      # 'table ... does not exist' otherwise
    names = {c.name.lower() for c in table.columns} | {"id"}
    if not {"question", "answer_id"} <= names:
        raise UserError(f"CALL EVALUATE: table '{table.name}' needs the columns question and answer_id", errors.SqlSyntaxError)
    rows = db.store.execute(f"SELECT question, answer_id FROM {quote(table.name)} ORDER BY id")
    return [(str(q), int(a)) for q, a in rows if q is not None and a is not None]


def _row(question: str, answer: int, ranked: list[Any]) -> tuple:
    ids = [r for r in ranked[:DEPTH]]
    rank = next((n for n, d in enumerate(ids, start=1) if d == answer), None)
    hit = [int(rank is not None and rank <= k) for k in (1, 5, 10)]
    return (question, answer, rank, *hit, 1.0 / rank if rank else 0.0, 1.0 / math.log2(rank + 1) if rank else 0.0)


def call_evaluate(db: Database, stmt: ast.CallEvaluate, params: Any = None) -> Result:
    sql, table = _arguments(stmt, params)
    select = _select(db, sql)
    rows = []
    for question, answer in _questions(db, table):
        if db.check_cancelled():
            raise errors.Interrupted("CALL EVALUATE interrupted")
        ranked = [r[0] for r in query.select(db, select, (question,)).rows]
        rows.append(_row(question, answer, ranked))
    n = max(len(rows), 1)
    means = tuple(round(sum(r[i] for r in rows) / n, 6) for i in range(3, 8))
    return Result(columns=COLUMNS, rows=[(f"(all {len(rows)})", None, None, *means)] + rows, rowcount=len(rows) + 1)
