"""What every SELECT's planning needs, kept apart from the search planning so that a plain SELECT does
not import it (start-up, issue 37): the :class:`Planned` result, :func:`searches` (does the statement
use a search function at all?), and the plan passes over vector columns (LENGTH(), TO_STRING(), the
engine's own tables refused). ``select_plan`` does the rest, loaded with the first search."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlglot import exp

from tesseradb import errors
from tesseradb.catalog import sql_functions
from tesseradb.errors import UserError
from tesseradb.grammar.select_ext import MATCH_FUNCTION
from tesseradb.sql.database import Database

if TYPE_CHECKING:
    from tesseradb.vectors.search import KnnRequest

# the calls that need the search planning: knn(), MATCH(), hybrid_match(), the passages, ... (the
# catalog's table of the engine's functions, but LENGTH()/TO_STRING(), which the plan passes serve)
SEARCH_CALLS = frozenset({f.name for f in sql_functions.FUNCTIONS if f.searches} | {MATCH_FUNCTION})


def searches(expr: exp.Expression, options: tuple = ()) -> bool:
    """Does this SELECT need the search planning (sql/search/select_plan.py)?"""
    if options:
        return True
    for node in expr.walk():
        if isinstance(node, exp.MatchAgainst) or (
                isinstance(node, exp.Anonymous) and str(node.this).lower() in SEARCH_CALLS):
            return True
    return False


def _is_call(node: exp.Expression, name: str) -> bool:
    return isinstance(node, exp.Anonymous) and str(node.this).lower() == name


@dataclass
class Planned:
    sql: str
    bound: dict[str, Any]
    knn: KnnRequest | None = None
    prepare: Callable[[], None] | None = None     # run before the SQL (hybrid search fills its table)
    remake_knn: Callable[[Database, dict[str, Any]], KnnRequest] | None = None  # the knn request for new parameters
    direct: Any = None      # knn_direct.Direct: the rows without the hits' TEMP table, or None


def tables_in_from(db: Database, select: exp.Select) -> dict[str, Any]:
    """alias (lower) -> Table, for the catalog tables named in FROM and JOINs."""
    out = {}
    for tbl in select.find_all(exp.Table):
        if tbl.name.lower() in db.tables:
            out[(tbl.alias_or_name).lower()] = db.tables[tbl.name.lower()]
    return out


def rewrite_lengths(db: Database, select: exp.Expression) -> None:
    """LENGTH(vector column) is its number of vectors (arrays) or dimensions (float_vector)."""
    if not isinstance(select, exp.Select):
        return
    tables = tables_in_from(db, select)
    for node in list(select.find_all(exp.Length)):
        arg = node.this
        if not isinstance(arg, exp.Column):
            continue
        owners = [t for alias, t in tables.items() if (not arg.table or arg.table.lower() == alias)
                  and t.is_vector(arg.name)]
        if owners:
            kind = owners[0].column(arg.name).type
            fn = "_tessera_array_length" if kind == "float_vector_array" else "_tessera_vector_length"
            node.replace(exp.Anonymous(this=fn, expressions=[arg.copy()]))


# Manticore's TO_STRING(vector column): its text form (catalog/vector_text.py), by column type
TO_STRING_OF = {"float_vector": "_tessera_vector_text", "float_vector_array": "_tessera_array_text"}


def rewrite_to_string(db: Database, select: exp.Expression) -> None:
    if not isinstance(select, exp.Select):
        return
    tables = tables_in_from(db, select)
    for node in [n for n in select.find_all(exp.Anonymous) if _is_call(n, "to_string")]:
        arg = node.expressions[0] if len(node.expressions) == 1 else None
        if not isinstance(arg, exp.Column):
            continue
        owners = [t for alias, t in tables.items() if (not arg.table or arg.table.lower() == alias)
                  and t.is_vector(arg.name)]
        if owners:
            fn = TO_STRING_OF[owners[0].column(arg.name).type]
            node.replace(exp.Anonymous(this=fn, expressions=[arg.copy()]))


def check_internal(expr: exp.Expression) -> None:
    """The engine's own tables (catalog, chunk tables) are not part of the user's database."""
    for tbl in expr.find_all(exp.Table):
        if tbl.name.lower().startswith("_tessera_"):
            raise errors.no_such_table(tbl.name)
