"""Full-text conditions of a SELECT: ``MATCH('query')`` (Manticore's language) and MySQL's
``MATCH(col, ...) AGAINST('text' [mode])``, ``weight()`` and ``OPTION field_weights=(...)``.

A text condition must be a conjunct of the outer WHERE. Its query is parsed into a tree
(``tesseradb.grammar.match``) and compiled to an FTS5 expression that is *bound* as a parameter; the
query then joins the table's FTS5 index as a table-valued function, so SQLite runs the match, the
filters and the ordering. ``weight()`` is the row's BM25 (FTS5's ``bm25()``, negated so that higher is
better); without ORDER BY, rows come by ``weight()`` descending, ties by id.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from tesseradb import errors
from tesseradb.catalog import fulltext as catalog_fulltext
from tesseradb.catalog.tables import Table
from tesseradb.catalog.values import literal
from tesseradb.errors import UserError
from tesseradb.grammar.match import And, MatchError, Near, Node, Not, Or, Phrase, Query, Term, parse
from tesseradb.grammar.match_fts5 import to_fts5
from tesseradb.grammar.match_mysql import parse_against
from tesseradb.grammar.select_ext import ALIAS_FUNCTION, MATCH_FUNCTION
from tesseradb.grammar.stopwords import ENGLISH
from tesseradb.storage.fulltext import TextIndex
from tesseradb.sql.database import Database
from tesseradb.vectors import score_fusion

FTS_PARAM = "_tessera_fts_q"
FUSION_OPTIONS = {"fusion_method", "rank_constant", "window_size", "fusion_weights", "normalization"}
KNOWN_OPTIONS = FUSION_OPTIONS | {"field_weights", "rerank", "rerank_window"}
AGAINST_MODES = {None: False, "IN NATURAL LANGUAGE MODE": False, "IN BOOLEAN MODE": True}


def is_call(node: exp.Expression, name: str) -> bool:
    return isinstance(node, exp.Anonymous) and str(node.this).lower() == name


def calls(expr: exp.Expression, name: str) -> list[exp.Anonymous]:
    return [n for n in expr.find_all(exp.Anonymous) if is_call(n, name)]


def conjuncts(where: exp.Expression | None) -> list[exp.Expression]:
    if where is None:
        return []
    return list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]


def tables_in_from(db: Database, select: exp.Select) -> dict[str, Table]:
    out = {}
    for tbl in select.find_all(exp.Table):
        if isinstance(tbl.this, exp.Identifier) and tbl.name.lower() in db.tables:
            out[tbl.alias_or_name.lower()] = db.tables[tbl.name.lower()]
    return out


@dataclass
class TextSide:
    """One full-text condition of the query, resolved."""
    node: exp.Expression
    alias: str | None
    table_alias: str
    table: Table
    index: TextIndex
    tree: Query
    fts: str | None                      # the FTS5 expression (None: the query has no words)
    highlight: str | None = None         # every positive word or phrase, ORed, for HIGHLIGHT()


@dataclass
class TextOptions:
    field_weights: dict[str, float] = field(default_factory=dict)
    fusion_method: str | None = None
    rank_constant: int = 60
    window_size: int = 0
    fusion_weights: dict[str, float] = field(default_factory=dict)
    normalization: str = "minmax"                   # fusion_method='linear' only
    rerank: str | None = None                       # a cross-encoder's directory (sql/rerank_stage.py)
    rerank_window: int = 50
    given: set[str] = field(default_factory=set)

    @classmethod
    def parse(cls, options: tuple) -> "TextOptions":
        out = cls()
        for name, value in options:
            if name not in KNOWN_OPTIONS:
                raise UserError(f"unknown option '{name}'", errors.SqlSyntaxError)
            out.given.add(name)
            setattr(out, name, _OPTION_READERS[name](name, value))
        return out


def _number(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise UserError(f"option {name} needs a number, not '{value}'", errors.SqlSyntaxError)
    return float(value)


def _int_at_least(low: int):
    def read(name: str, value: Any) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise UserError(f"option {name} needs an integer >= {low}, not '{value}'", errors.SqlSyntaxError)
        return value
    return read


def _weights(name: str, value: Any) -> dict[str, float]:
    if not isinstance(value, tuple):
        raise UserError(f"option {name} needs a list: {name}=(name=weight, ...)", errors.SqlSyntaxError)
    weights = {k.lower(): _number(f"{name} {k}", v) for k, v in value}
    if any(w < 0 for w in weights.values()):
        raise UserError(f"option {name}: weights must not be negative", errors.SqlSyntaxError)
    return weights


def _fusion_method(name: str, value: Any) -> str:
    if str(value).lower() not in score_fusion.METHODS:
        raise UserError(f"unknown fusion_method '{value}', supported: {', '.join(score_fusion.METHODS)}",
                        errors.SqlSyntaxError)
    return str(value).lower()


def _model_directory(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise UserError(f"option {name} needs a model directory as a string, e.g. {name}='/models/ms-marco-MiniLM'", errors.SqlSyntaxError)
    return value


def _normalization(name: str, value: Any) -> str:
    if str(value).lower() not in score_fusion.NORMALIZATIONS:
        raise UserError(f"unknown normalization '{value}', supported: {', '.join(score_fusion.NORMALIZATIONS)}", errors.SqlSyntaxError)
    return str(value).lower()


_OPTION_READERS = {"field_weights": _weights, "fusion_weights": _weights, "fusion_method": _fusion_method,
                   "rank_constant": _int_at_least(1), "window_size": _int_at_least(0),
                   "normalization": _normalization, "rerank": _model_directory, "rerank_window": _int_at_least(1)}


# -- finding the conditions ------------------------------------------------------------------------
def unwrap_aliases(select: exp.Expression) -> dict[int, str]:
    """``_tessera_as(call, 'name')`` (``call AS name`` in WHERE) -> ``call``; {id(call): name}."""
    names = {}
    for node in calls(select, ALIAS_FUNCTION):
        inner, name = node.expressions
        node.replace(inner)
        names[id(inner)] = str(name.this)
    seen = set()
    for name in names.values():
        if name.lower() in seen:
            raise UserError(f"duplicate name '{name}' for a search in WHERE", errors.SqlSyntaxError)
        seen.add(name.lower())
    return names


def text_nodes(select: exp.Expression) -> list[exp.Expression]:
    return calls(select, MATCH_FUNCTION) + list(select.find_all(exp.MatchAgainst))


def find_sides(db: Database, select: exp.Select, bound: dict[str, Any], names: dict[int, str]) -> list[TextSide]:
    where = conjuncts(select.args.get("where"))
    tables = tables_in_from(db, select)
    sides = []
    for node in text_nodes(select):
        if node not in where:
            if isinstance(node, exp.MatchAgainst) and node.find_ancestor(exp.Where) is None:
                continue            # MySQL's relevance in the select list: weight()
            raise UserError("MATCH() must be a condition of the outer WHERE, ANDed with the others "
                            "(OR between full-text matches and other conditions is not supported)",
                            errors.SqlSyntaxError)
        sides.append(resolve_side(db, node, bound, tables, names.get(id(node))))
    if len({s.table_alias for s in sides}) > 1:
        raise UserError("MATCH() on more than one table of a join is not supported", errors.SqlSyntaxError)
    return sides


def resolve_side(db: Database, node: exp.Expression, bound: dict[str, Any], tables: dict[str, Table],
          alias: str | None) -> TextSide:
    if isinstance(node, exp.MatchAgainst):
        table_alias, table, columns = _against_columns(node, tables)
        mode = node.args.get("modifier")
        if mode not in AGAINST_MODES:
            raise UserError(f"MATCH ... AGAINST {mode} is not supported", errors.NotSupportedError)
        text = _query_text(node.this, bound)
        tree = checked_query(lambda: parse_against(text, columns, AGAINST_MODES[mode]), table)
        natural = not AGAINST_MODES[mode]
    else:
        natural = False
        if len(node.expressions) != 1:
            raise UserError("MATCH() expects one argument: MATCH('query')", errors.SqlSyntaxError)
        table_alias, table = _first_table(tables)
        text = _query_text(node.expressions[0], bound)
        tree = checked_query(lambda: parse(text), table)
    index = catalog_fulltext.text_index(table)
    if index is None:
        raise UserError(f"table '{table.name}' has no full-text fields (text columns)", errors.SqlSyntaxError)
    # natural language mode ignores common English words, as MySQL's does (measured: docs/benchmarks.md)
    stop = catalog_fulltext.stopwords(table) | (ENGLISH if natural else frozenset())
    fts = checked_query(lambda: to_fts5(tree, index.columns, stop), table)
    marks = checked_query(lambda: to_fts5(Query(positive_leaves(tree.root), tree.relaxed), index.columns, stop), table)
    return TextSide(node, alias, table_alias, table, index, tree, fts, marks)


def checked_query(fn, table: Table):
    try:
        return fn()
    except MatchError as exc:
        raise UserError(f"table {table.name}: {exc.msg}", errors.SqlSyntaxError) from None


def _query_text(node: exp.Expression, bound: dict[str, Any]) -> str:
    ok, value = literal(node, bound)
    if not ok or not isinstance(value, str):
        raise UserError("the full-text query must be a string or a ? parameter", errors.SqlSyntaxError)
    return value


def _first_table(tables: dict[str, Table]) -> tuple[str, Table]:
    if not tables:
        raise UserError("MATCH() needs a table in FROM", errors.SqlSyntaxError)
    return next(iter(tables.items()))


def _against_columns(node: exp.MatchAgainst, tables: dict[str, Table]) -> tuple[str, Table, list[str]]:
    found = []
    for col in node.expressions:
        if not isinstance(col, exp.Column):
            raise UserError("MATCH(...) AGAINST needs column names in MATCH()", errors.SqlSyntaxError)
        owner = next(((a, t) for a, t in tables.items() if (not col.table or col.table.lower() == a)
                      and t.column(col.name) is not None), None)
        if owner is None:
            raise errors.unknown_column(col.name, "where clause")
        if owner[1].column(col.name).type != "text":
            raise UserError(f"column '{col.name}' is not a full-text field (only text columns are)",
                            errors.SqlSyntaxError)
        found.append((owner[0], owner[1], owner[1].column(col.name).name))
    if len({a for a, _, _ in found}) != 1:
        raise UserError("MATCH(...) AGAINST columns must belong to one table", errors.SqlSyntaxError)
    return found[0][0], found[0][1], [c for _, _, c in found]


def positive_leaves(node: Node | None) -> Node | None:
    """Every word and phrase that can match, ORed (what HIGHLIGHT() marks)."""
    leaves: list[Node] = []

    def walk(n: Node | None) -> None:
        if n is None or isinstance(n, Not):
            return
        if isinstance(n, (Term, Phrase)):
            leaves.append(Phrase(n.words, None, n.fields) if isinstance(n, Phrase) else n)
        elif isinstance(n, Near):
            for p in n.parts:
                walk(p)
        else:
            for i in n.items:
                walk(i)
    walk(node)
    return None if not leaves else leaves[0] if len(leaves) == 1 else Or(tuple(leaves))


# -- the non-hybrid rewrite ----------------------------------------------------------------------
def combined(sides: list[TextSide]) -> str | None:
    exprs = [s.fts for s in sides if s.fts is not None]
    return None if not exprs else exprs[0] if len(exprs) == 1 else " AND ".join(f"({e})" for e in exprs)


def weight_sql(index: TextIndex, opts: TextOptions) -> exp.Expression:
    for name in opts.field_weights:
        if index.column_index(name) is None:
            raise UserError(f"field_weights: no field '{name}' found in schema", errors.SqlSyntaxError)
    args: list[exp.Expression] = [exp.column(index.name, quoted=True)]
    if opts.field_weights:
        args += [exp.Literal.number(opts.field_weights.get(c.lower(), 1.0)) for c in index.columns]
    return exp.Neg(this=exp.Anonymous(this="bm25", expressions=args))


MATCHED = "_tessera_fts"           # the joined subquery of matching rows: (_tessera_doc, _tessera_w)


def fts_source(index: TextIndex, param: str) -> exp.Table:
    """``"<index>"(:param)``: the index as a table-valued function of the bound FTS5 expression."""
    return exp.Table(this=exp.Anonymous(this=exp.to_identifier(index.name, quoted=True),
                                        expressions=[exp.Placeholder(this=param)]))


def fts_rowid(index: TextIndex) -> exp.Column:
    return exp.column("rowid", table=exp.to_identifier(index.name, quoted=True))


def matched_rows(index: TextIndex, opts: TextOptions, param: str) -> exp.Subquery:
    """``(SELECT rowid, BM25 FROM <index>(:param))``: a subquery, so that the index's columns (named
    like the table's) never make the user's column names ambiguous. Built as a tree (no parsing)."""
    rows = exp.select(exp.alias_(fts_rowid(index), "_tessera_doc"),
                      exp.alias_(weight_sql(index, opts), "_tessera_w")).from_(fts_source(index, param))
    return exp.Subquery(this=rows, alias=exp.TableAlias(this=exp.to_identifier(MATCHED)))


def matching_ids(index: TextIndex, param: str) -> exp.Select:
    return exp.select(fts_rowid(index)).from_(fts_source(index, param))


def apply(select: exp.Select, bound: dict[str, Any], sides: list[TextSide], opts: TextOptions,
          has_knn: bool) -> None:
    """Rewrite a SELECT with full-text conditions (no fusion): join the matching rows, weight() = BM25."""
    rest = [c for c in conjuncts(select.args.get("where")) if not any(c is s.node for s in sides)]
    select.set("where", exp.Where(this=exp.and_(*rest)) if rest else None)
    expression = combined(sides)
    weight: exp.Expression = exp.null()
    if expression is not None:
        side = sides[0]
        bound[FTS_PARAM] = expression
        doc = exp.column("id", table=side.table_alias)
        if has_knn:
            # MATCH next to knn() filters the knn search: a WHERE condition its filter sees; the k rows
            # left each read their BM25 by rowid
            ids = matching_ids(side.index, FTS_PARAM)
            select.set("where", exp.Where(this=exp.and_(*rest, doc.copy().isin(query=ids))))
            weight = exp.Subquery(this=exp.select(weight_sql(side.index, opts)).from_(
                fts_source(side.index, FTS_PARAM)).where(exp.EQ(this=fts_rowid(side.index), expression=doc.copy())))
        else:
            expand_star(select)
            join = exp.Join(this=matched_rows(side.index, opts, FTS_PARAM),
                            on=exp.EQ(this=exp.column("_tessera_doc", table=MATCHED), expression=doc.copy()))
            select.set("joins", list(select.args.get("joins") or []) + [join])
            weight = exp.column("_tessera_w", table=MATCHED)
    replace_scores(select, {"weight": weight})
    for node in list(select.find_all(exp.MatchAgainst)):
        node.replace(weight.copy())
    if expression is not None and not has_knn and not _ordered(select):
        select.set("order", exp.Order(expressions=[
            exp.Ordered(this=weight.copy(), desc=True), exp.Ordered(this=exp.column("id", table=sides[0].table_alias))]))


def replace_scores(select: exp.Expression, values: dict[str, exp.Expression]) -> None:
    for name, value in values.items():
        for node in calls(select, name):
            if node.expressions:
                raise UserError(f"{name}() takes no arguments", errors.SqlSyntaxError)
            node.replace(value.copy())


def _ordered(select: exp.Select) -> bool:
    return bool(select.args.get("order") or select.args.get("group") or select.find(exp.AggFunc))


def write_filter(db: Database, table: Table, expr: exp.Expression, bound: dict[str, Any]) -> exp.Expression:
    """UPDATE / DELETE ... WHERE MATCH('q'): the condition becomes ``id IN (the matching rows)``."""
    nodes = text_nodes(expr)
    if not nodes:
        return expr
    expr = expr.copy()
    for n, node in enumerate(text_nodes(expr), start=1):
        side = resolve_side(db, node, bound, {table.name.lower(): table}, None)
        if side.fts is None:
            node.replace(exp.true())
            continue
        param = f"_tessera_fts_w{n}"
        bound[param] = side.fts
        node.replace(exp.column("id").isin(query=matching_ids(side.index, param)))
    return expr


def expand_star(select: exp.Select) -> None:
    """``SELECT *`` lists the query's own tables (not the joined search rows)."""
    if not any(isinstance(p, exp.Star) for p in select.expressions):
        return
    sources = [select.args["from_"].this] + [j.this for j in select.args.get("joins") or []]
    stars = [exp.Column(this=exp.Star(), table=exp.to_identifier(t.alias_or_name)) for t in sources if t.alias_or_name]
    new = []
    for p in select.expressions:
        new.extend(stars if isinstance(p, exp.Star) else [p])
    select.set("expressions", new)
