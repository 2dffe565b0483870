"""The full-text part of planning a SELECT, called by ``select_plan.plan_select``: unwrap the side
names (``MATCH(...) AS text``), read the OPTIONs, resolve MATCH()/AGAINST conditions, then either plan
a hybrid search (``tesseradb.sql.search.hybrid``) or rewrite the query in place for plain MATCH() with
``weight()`` (``tesseradb.sql.search.match``) and HIGHLIGHT()/SNIPPET() (``tesseradb.sql.search.highlight``)."""
from __future__ import annotations

from typing import Any

from sqlglot import exp

from tesseradb import errors
from tesseradb.catalog import sql_functions
from tesseradb.errors import UserError
from tesseradb.sql.search import highlight, hybrid, match, rerank_stage
from tesseradb.sql.database import Database
from tesseradb.sql.search.match import FUSION_OPTIONS, TextOptions, calls
from tesseradb.sql.search.hybrid import HybridPlan

TEXT_CALLS = sql_functions.names("text", "hybrid")     # MATCH(), weight(), HIGHLIGHT(), hybrid_match(), ...


def plan(db: Database, select: exp.Expression, bound: dict[str, Any], options: tuple = ()) -> HybridPlan | None:
    """A hybrid plan (run its ``prepare`` before the SQL), or None when ``select`` was rewritten in place."""
    opts = TextOptions.parse(options)
    if not isinstance(select, exp.Select):
        if match.text_nodes(select) or any(calls(select, n) for n in ("hybrid_match", "hybrid_score")):
            raise UserError("MATCH() and hybrid search are supported in a plain SELECT, not in UNION and friends",
                            errors.SqlSyntaxError)
        return None
    if not match.tables_in_from(db, select) and _uses_text_search(select):
        _no_such_table(select)
    names = match.unwrap_aliases(select)
    sides = match.find_sides(db, select, bound, names)
    knns, hybrids = calls(select, "knn"), calls(select, "hybrid_match")
    rerank_stage.check_options(opts, select, bool(sides or knns or hybrids), bool(sides and knns))
    if hybrids or opts.fusion_method or opts.rerank:
        if calls(select, "highlight"):
            marks = [hybrid.highlight_side(db, select, hybrids[0], bound)] if hybrids and not sides else sides
            highlight.rewrite(db, select, bound, [m for m in marks if m is not None])
        elif calls(select, "snippet"):
            highlight.rewrite(db, select, bound, sides)
        return hybrid.plan(db, select, bound, opts, sides, knns, hybrids, names)
    unused = sorted(opts.given & FUSION_OPTIONS)
    if unused:
        raise UserError(f"option {unused[0]} needs OPTION fusion_method='rrf' (hybrid search)", errors.SqlSyntaxError)
    if calls(select, "hybrid_score"):
        raise UserError("hybrid_score() is only allowed in hybrid search (OPTION fusion_method='rrf' or hybrid_match())",
                        errors.SqlSyntaxError)
    if len(knns) > 1:
        raise UserError("only one knn() is supported per query, unless OPTION fusion_method='rrf' fuses them",
                        errors.SqlSyntaxError)
    highlight.rewrite(db, select, bound, sides)
    match.apply(select, bound, sides, opts, has_knn=bool(knns))
    return None


def _uses_text_search(select: exp.Select) -> bool:
    return bool(match.text_nodes(select)) or any(calls(select, n) for n in TEXT_CALLS)


def _no_such_table(select: exp.Select) -> None:
    first = select.args.get("from_")
    table = first.this if first is not None else None
    if isinstance(table, exp.Table) and isinstance(table.this, exp.Identifier):
        raise errors.no_such_table(table.name)
