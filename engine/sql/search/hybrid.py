"""Hybrid search: full-text and knn() sides fused by reciprocal rank (Manticore's semantics).

``WHERE MATCH('q') AS text AND knn(col, k, 'q') AS dense [AND filters] OPTION fusion_method='rrf'
[, rank_constant=60] [, window_size=N] [, fusion_weights=(text=0.7, dense=0.3)]`` and the shortcut
``hybrid_match('q' [, col] [, {k=N}])``:

* every side retrieves ``window`` candidates (``window_size``, or when 0: the largest of the knn sides'
  k and the query's LIMIT + OFFSET, default 20), each with *all* the other WHERE conditions applied
  (conditions on ``weight()``, ``knn_dist()`` or ``hybrid_score()`` are applied after fusion);
* one or more knn sides; a text side whose query has no words is skipped;
* ``hybrid_score()`` = sum of weight/(rank_constant + rank) over the sides that found the row; rows
  come by ``hybrid_score()`` descending unless ORDER BY says otherwise;
* ``weight()`` is the text side's BM25 and ``knn_dist()`` the smallest distance over the knn sides,
  both NULL for a row that side did not find.

``hybrid_match('q', col)`` embeds ``q`` once for a knn side over ``col`` and ranks the *chunks* of the
same column by BM25 for the text side (each document by its best chunk, like knn's MaxP), the text
read as natural language (any word may match); measured best on the manual (docs/benchmarks.md).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sqlglot import exp

from tesseradb import embed
from tesseradb.catalog import fulltext as catalog_fulltext
from tesseradb.catalog.tables import Table
from tesseradb.catalog.values import literal
from tesseradb.embed.rows import check_text
from tesseradb import errors
from tesseradb.errors import UserError
from tesseradb.grammar.match_fts5 import to_fts5
from tesseradb.grammar.match_mysql import parse_against
from tesseradb.grammar.stopwords import ENGLISH
from tesseradb.sql.database import Database
from tesseradb.sql.search.match import (TextOptions, TextSide, calls, checked_query, conjuncts,
                                    resolve_side, tables_in_from, weight_sql)
from tesseradb.storage.catalog import quote
from tesseradb.storage.fulltext import ChunkTextIndex
from tesseradb.vectors import score_fusion
from tesseradb.vectors.fusion import RankedList
from tesseradb.vectors.knn_options import limit_k
from tesseradb.vectors.search import KnnRequest
from tesseradb.vectors import passages
from tesseradb.sql.search import hybrid_defaults, hybrid_direct, knn_direct, passage_calls, rerank_stage, temp_rows
from tesseradb.sql.search import hybrid_query
from tesseradb.sql.search.hybrid_query import CREATE_TABLE, TABLE
from tesseradb.sql.search.cores import spare_core
from tesseradb.sql.search.hybrid_sides import Search, knn_search, ready_index, run_sides

# hybrid_match()'s text side leaves English stop words out: on the manual's questions recall@1 rose
# from 64% to 68% (MRR 0.761 -> 0.790), headings unchanged. Candidates per side stay Manticore's
# (the LIMIT): 50 measured +0.6 points of deep recall@1 on the headings, the same on the questions,
# for about 4 ms more a query (docs/benchmarks.md)


_LITERAL_LIMIT = (exp.Select, exp.Limit, exp.Offset, exp.Literal)


@dataclass
class SideSpec:
    """What the sides are, as written (value-independent): each execute of the statement makes its
    searches from these and the parameters of that execute."""
    texts: list[tuple[exp.Expression, str | None]]       # MATCH() / AGAINST conditions and their names
    knns: list[tuple[exp.Anonymous, str | None]]
    hybrids: list[exp.Anonymous]
    tables: dict[str, Table]
    opts: TextOptions
    limits: exp.Select                                    # the statement's LIMIT / OFFSET (for k and window)
    filter_sql: str | None = None
    needs: Any = None                                     # what knn_chunk*() calls need (passage_calls)
    models: dict[str, Any] = field(default_factory=dict)  # hybrid_match()'s local models by column, and its
                                                          # calls' (alias, table, column) by id(call), kept for
                                                          # every execute (as knn()'s plan keeps its own)
    planned: bool = False                                 # filter_sql is known: a text side may start early
    fixed_k: int | None = None    # LIMIT + OFFSET when neither is a parameter (shown_k)
    shown_first: bool = False     # the query shows the fused list's first LIMIT + OFFSET rows as they are (no
                                  # ORDER BY, post-fusion condition, join, grouping or rerank): only they need passages

    def shown_k(self, bound: dict[str, Any]) -> int:
        """LIMIT + OFFSET (``limit_k``), worked out once when neither is a parameter."""
        if self.fixed_k is not None:
            return self.fixed_k
        k = limit_k(self.limits, bound)
        if all(isinstance(node, _LITERAL_LIMIT) for node in self.limits.walk()):
            self.fixed_k = k            # LIMIT/OFFSET are plain numbers: no execute changes them
        return k

    def build(self, db: Database, bound: dict[str, Any]) -> tuple[list[Search], int, str, Table]:
        sides = [resolve_side(db, node, bound, self.tables, name) for node, name in self.texts]
        names = {id(node): name for node, name in self.knns if name}
        default_k = self.shown_k(bound)
        early = (self.filter_sql,) if self.planned else None
        searches, alias, table = _searches(db, bound, self.opts, sides, [n for n, _ in self.knns], self.hybrids,
                                           names, self.tables, default_k, early, self.models)
        _apply_weights(searches, self.opts)
        window = self.opts.window_size or max([default_k] + [s.k for s in searches]
                                              + hybrid_defaults.window(self.hybrids, self.opts))
        return searches, window, alias, table


class Prepare:
    """Runs the sides, fuses them and fills the TEMP table the rewritten query joins. ``remake`` gives
    the step for another execute of the same statement (the statement cache keeps the plan's SQL)."""

    def __init__(self, db: Database, spec: SideSpec, bound: dict[str, Any]):
        self.db, self.spec = db, spec
        self.searches, self.window, self.alias, self.table = spec.build(db, bound)
        self.shown = spec.shown_k(bound)                  # LIMIT + OFFSET
        self.rerank_text = rerank_stage.query_text([n for n, _ in spec.texts], [n for n, _ in spec.knns], spec.hybrids,
                                                   bound) if spec.opts.rerank else None

    def remake(self, db: Database, bound: dict[str, Any]) -> "Prepare":
        return Prepare(db, self.spec, bound)

    def describe(self) -> list[tuple[str, str]]:
        """EXPLAIN's rows: each side, the candidates per side, the filter every side applies."""
        rows = [("hybrid", f"{s.kind} side{' ' + s.name if s.name else ''}: weight {s.weight:g}, "
                           f"{self.window} candidates") for s in self.searches]
        rows.append(("hybrid", score_fusion.describe(hybrid_defaults.method(self.spec.opts, self.spec.hybrids),
                                                     self.spec.opts.rank_constant, self.spec.opts.normalization)))
        if self.spec.filter_sql:
            rows.append(("hybrid filter", self.spec.filter_sql))
        return rows

    def fused(self) -> tuple[list, dict[int, float]]:
        """Run the sides and fuse them: the fused rows the query can show, and the reranker's scores."""
        db, spec = self.db, self.spec
        lists = run_sides(self.searches, spec.filter_sql, self.window)
        # only the rows the query can show: all of them, or when it shows the fused list's first rows as
        # they are (SideSpec.shown_first), those scoring at least the last shown one (ties are ordered
        # by id later). Only they go into the TEMP table and get passages: the query's ORDER BY score,
        # id and LIMIT pick the same rows from them as from every fused row
        fused = score_fusion.fuse(lists, hybrid_defaults.method(spec.opts, spec.hybrids), spec.opts.rank_constant,
                                  spec.opts.normalization, top=self.shown if spec.shown_first else None)
        reranked: dict[int, float] = {}
        if spec.opts.rerank:
            column, chunks = _best_chunks(self.searches, lists)
            fused, reranked = rerank_stage.apply(db, self.table, column, fused, chunks, spec.opts.rerank,
                                                 spec.opts.rerank_window, self.rerank_text)
        return fused, reranked

    def shown_rows(self) -> list:
        """The fused rows the query can show, for hybrid_direct (which takes no rerank)."""
        return self.fused()[0]

    def __call__(self) -> None:
        db, spec = self.db, self.spec
        shown, reranked = self.fused()
        temp_rows.fill(db.store, CREATE_TABLE, TABLE, 6,
                       [(h.doc_id, h.score, h.weight, h.dist, h.chunk_id, reranked.get(h.doc_id)) for h in shown])
        if spec.needs is not None:  # every fused row, found by text or by knn, scored against the first knn query
            source = next(s.request for s in self.searches if s.request is not None)
            passages.fill(db, self.table, source.column, source.query, [h.doc_id for h in shown], spec.needs,
                          text=source.text)


@dataclass
class HybridPlan:
    sql: str
    prepare: Prepare
    direct: hybrid_direct.HybridDirect | None = None    # the rows without the TEMP table, or None


def plan(db: Database, select: exp.Select, bound: dict[str, Any], opts: TextOptions, sides: list[TextSide],
         knns: list[exp.Anonymous], hybrids: list[exp.Anonymous], names: dict[int, str]) -> HybridPlan:
    where = conjuncts(select.args.get("where"))
    nodes = [s.node for s in sides] + knns + hybrids
    if any(not any(n is c for c in where) for n in nodes):
        raise UserError("knn(), MATCH() and hybrid_match() must be conditions of the outer WHERE, ANDed with the others",
                        errors.SqlSyntaxError)
    if hybrids and (sides or knns or len(hybrids) > 1):
        raise UserError("hybrid_match() cannot be combined with MATCH(), knn() or another hybrid_match()",
                        errors.SqlSyntaxError)
    if not hybrids and not knns and not opts.rerank:
        raise UserError("fusion_method='rrf' needs at least one knn() next to MATCH()", errors.SqlSyntaxError)
    score_fusion.check_options(hybrid_defaults.method(opts, hybrids), opts.given)
    if calls(select, "knn_score"):
        raise UserError("knn_score() is only allowed in a knn() query, not in hybrid search (see hybrid_score())",
                        errors.SqlSyntaxError)
    if select.args.get("from_") is None:
        raise UserError(f"{'hybrid_match' if hybrids else 'MATCH'}() needs a table in FROM", errors.SqlSyntaxError)
    direct_window = knn_direct.window(select, "hybrid_match") if hybrids and not opts.rerank else None
    first = select.args["from_"].this           # both read before the tree is rewritten
    limits = exp.Select()
    for clause in ("limit", "offset"):
        if select.args.get(clause) is not None:
            limits.set(clause, select.args[clause].copy())
    spec = SideSpec([(s.node.copy(), s.alias) for s in sides], [(c.copy(), names.get(id(c))) for c in knns],
                    [c.copy() for c in hybrids], tables_in_from(db, select), opts, limits)
    prepare = Prepare(db, spec, bound)
    rest = [c for c in where if not any(c is n for n in nodes)]
    post = hybrid_query.post_conditions(select, rest)
    spec.shown_first = (select.args.get("limit") is not None and not post and not opts.rerank
                        and not any(select.args.get(a) for a in ("order", "group", "joins", "distinct", "having"))
                        and not select.find(exp.AggFunc))
    pre = [c for c in rest if not any(c is p for p in post)]
    spec.filter_sql = hybrid_query.filter_sql(select, prepare.alias, pre)
    db.store.execute(CREATE_TABLE)
    hybrid_query.rewrite(select, prepare.alias, rest, reranked=bool(opts.rerank))
    searched = next((s.request for s in prepare.searches if s.request is not None), None)
    spec.needs = passage_calls.rewrite(select, prepare.alias, bound, source=passage_calls.source_of(
        prepare.table, searched.column) if searched is not None else None)
    spec.planned = True
    direct = hybrid_direct.shape(select, first, prepare.alias, direct_window) if direct_window is not None \
        and spec.needs is None and isinstance(first, exp.Table) and first.alias_or_name.lower() == prepare.alias else None
    return HybridPlan(select.sql(dialect="sqlite"), prepare, direct)


# -- the sides -------------------------------------------------------------------------------------
def _searches(db, bound, opts, sides, knns, hybrids, names, tables, default_k, early=None, models=None):
    searches: list[Search] = []
    owners: set[str] = set()
    for side in sides:
        owners.add(side.table_alias)
        if side.fts is not None:
            searches.append(_text_search(db, side, opts, bound))
    for call in knns:
        request = KnnRequest.from_call(db, call, tables, bound, default_k=default_k)
        owners.add(request.alias)
        searches.append(knn_search(db, request, names.get(id(call))))
    for call in hybrids:
        alias, table, column, text, k = _hybrid_args(db, call, tables, bound, default_k, models)
        owners.add(alias)
        window = opts.window_size or max([default_k, k] + hybrid_defaults.window(hybrids, opts))   # as SideSpec.build
        searches.extend(_hybrid_searches(db, table, alias, column, text, k, bound,
                                         None if early is None else (early[0], window), models))
    if len(owners) > 1:
        raise UserError("the searches of a hybrid query must be on one table", errors.SqlSyntaxError)
    alias = owners.pop()
    return searches, alias, tables[alias]


def _ranked(db: Database, sql: str, bound: dict[str, Any]) -> list[tuple[int, float, int | None]]:
    return [(int(r[0]), float(r[1]), r[2]) for r in db.store.execute(sql, bound)]


def _text_search(db: Database, side: TextSide, opts: TextOptions, bound: dict[str, Any]) -> Search:
    fts = quote(side.index.name)
    weight = weight_sql(side.index, opts).sql(dialect="sqlite")
    param = "_tessera_text_q"
    bound = {**bound, param: side.fts}         # its own parameters: the statement's stay as they are

    def run(filter_sql: str | None, window: int) -> list[tuple[int, float, int | None]]:
        where = f"WHERE {fts}.rowid IN ({filter_sql})" if filter_sql else ""
        return _ranked(db, f"SELECT {fts}.rowid, {weight} AS s, NULL FROM {fts}(:{param}) {where} "
                           f"ORDER BY s DESC, {fts}.rowid LIMIT {int(window)}", bound)
    return Search(side.alias, "text", run)


def _hybrid_args(db: Database, call: exp.Anonymous, tables: dict[str, Table], bound: dict[str, Any],
                 default_k: int, kept: dict[Any, Any] | None = None) -> tuple[str, Table, str, str, int]:
    """(alias, table, column, text, k) of a hybrid_match() call; ``kept`` (the plan's) keeps the searched
    table and column after the first execute: only the text and k depend on the parameters."""
    args = list(call.expressions)
    k = default_k
    if args and isinstance(args[-1], exp.Struct):
        k = _struct_k(args.pop(), bound, k)
    if not args or len(args) > 2:
        raise UserError("hybrid_match() expects ('query' [, column] [, {k=N}])", errors.SqlSyntaxError)
    ok, text = literal(args[0], bound)
    if not ok or not isinstance(text, str):
        raise UserError("hybrid_match(): the query must be a string or a ? parameter", errors.SqlSyntaxError)
    target = None if kept is None else kept.get(id(call))
    if target is None:
        target = _hybrid_target(args, tables)
        if kept is not None:
            kept[id(call)] = target
    return target[0], target[1], target[2], text, k


def _hybrid_target(args: list[exp.Expression], tables: dict[str, Table]) -> tuple[str, Table, str]:
    """The alias, table and auto-embedding column a hybrid_match() call searches."""
    for alias, table in tables.items():
        models = [s.column for s in table.model_columns()]
        if len(args) == 2:
            col = args[1]
            if not isinstance(col, exp.Column) or (col.table and col.table.lower() != alias):
                continue
            if table.column(col.name) is None:
                continue                                  # another table's, or missing (below)
            spec = table.vectors.get(col.name.lower())
            if spec is None or not spec.model_name:
                raise UserError(f"hybrid_match(): column '{col.name}' has no model_name and from "
                                "(auto-embeddings)", errors.SqlSyntaxError)
            return alias, table, spec.column
        if len(models) == 1:
            return alias, table, models[0]
        if len(models) > 1:
            raise UserError("hybrid_match(): the table has several auto-embedding columns; name one",
                            errors.SqlSyntaxError)
    if len(args) == 2 and isinstance(args[1], exp.Column):
        raise errors.missing_search_column(args[1].name, "hybrid_match")
    raise UserError("hybrid_match() needs a table with an auto-embedding column (model_name and from)",
                    errors.SqlSyntaxError)


def highlight_side(db: Database, select: exp.Select, call: exp.Anonymous, bound: dict[str, Any]) -> TextSide | None:
    """What HIGHLIGHT() marks in a hybrid_match() query: the words of its text, in the table's text fields."""
    alias, table, _, text, _ = _hybrid_args(db, call, tables_in_from(db, select), bound, 1)
    index = catalog_fulltext.text_index(table)
    if index is None:
        return None
    tree = checked_query(lambda: parse_against(text, [], boolean=False), table)
    marks = to_fts5(tree, index.columns, catalog_fulltext.stopwords(table) | ENGLISH)
    return TextSide(call, None, alias, table, index, tree, None, marks)


def _struct_k(node: exp.Struct, bound: dict[str, Any], default: int) -> int:
    k = default
    for item in node.expressions:
        is_eq = isinstance(item, (exp.PropertyEQ, exp.EQ))
        name = (item.this.name if is_eq else item.alias).lower()
        ok, value = literal(item.expression if is_eq else item.this, bound)
        if name != "k" or not ok or isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise UserError(f"hybrid_match(): unknown or bad option '{name}' (only {{k=N}}, N > 0)",
                            errors.SqlSyntaxError)
        k = value
    return k


def _hybrid_searches(db: Database, table: Table, alias: str, column: str, text: str, k: int,
                     bound: dict[str, Any], early: tuple[str | None, int] | None = None,
                     models: dict[str, Any] | None = None) -> list[Search]:
    """The chunk BM25 side and the knn side of hybrid_match(). With ``early`` (filter, window), the
    text side starts in a worker thread before the model embeds the text when a core is free; that
    thread also reads the text into the FTS5 query (a text of stop words only then ranks nothing,
    which fuses as no text side), off the caller's way to the model."""
    spec = table.vectors[column.lower()]
    check_text(text, "hybrid_match() query")
    index, layout = _column_parts(db, table, spec.column, models)
    beside = index is not None and early is not None and spare_core()
    if beside:
        searches = [_chunk_search(db, index, lambda: _fts5_query(table, text), bound, spec.column)]
    else:
        expression = _fts5_query(table, text)
        searches = [_chunk_search(db, index, expression, bound, spec.column)] if index is not None and expression is not None else []
    # the knn side searches the index alone when it needs no SQLite, whether or not a thread runs the text side
    ready = ready_index(db, table, spec.column, layout) if early is not None and early[0] is None else None
    if beside:
        searches[0].start(*early)
    try:
        vector = _model(db, spec, models).embed_query(text).reshape(1, -1).astype(np.float32)
    except BaseException:
        for search in searches:
            search.settle()
        raise
    request = KnnRequest(table, alias, spec.column, k, vector, bound=bound, text=text, _layout=layout)
    return searches + [knn_search(db, request, None, ready)]


def _column_parts(db: Database, table: Table, column: str, models: dict[Any, Any] | None) -> tuple[Any, Any]:
    """The column's chunk full-text index and its vector index's layout, kept in ``models`` (the plan's,
    dropped when the catalog changes) after the first execute, as knn()'s plan keeps its layout."""
    parts = None if models is None else models.get(("parts", column))
    if parts is None:
        parts = (catalog_fulltext.chunk_index(table, column), db.column_index(table, column).layout)
        if models is not None:
            models[("parts", column)] = parts
    return parts


def _fts5_query(table: Table, text: str) -> str | None:
    """hybrid_match()'s text as an FTS5 query over the chunk index's fields: natural language, common
    English words left out (measured: the note at the top of this module); None when no word is left."""
    tree = checked_query(lambda: parse_against(text, [], boolean=False), table)
    return to_fts5(tree, list(ChunkTextIndex.COLUMNS), catalog_fulltext.stopwords(table) | ENGLISH)


def _model(db: Database, spec: Any, models: dict[str, Any] | None) -> Any:
    """The column's model: a local one is kept in ``models`` (the plan's) after its first use; a remote
    one is resolved each time (the operator's allow-list is asked on every use)."""
    model = None if models is None else models.get(spec.column)
    if model is None:
        model = embed.spec_model(spec, db.remote_access)
        if models is not None and not embed.is_remote(spec.model_name):
            models[spec.column] = model
    return model


def _chunk_search(db: Database, index, expression: str | Callable[[], str | None], bound: dict[str, Any],
                  column: str | None = None) -> Search:
    """BM25 over the column's chunks; a document ranks by its best chunk (MaxP). ``expression``: the
    FTS5 query, or what makes it when the side runs (None: nothing to rank)."""
    fts, chunks = quote(index.name), quote(index.chunks)
    param = "_tessera_chunk_q"
    given = bound

    def run(filter_sql: str | None, window: int) -> list[tuple[int, float, int | None]]:
        query = expression() if callable(expression) else expression
        if query is None:
            return []
        bound = {**given, param: query}
        if not filter_sql:
            return hybrid_defaults.best_chunks(db.store, fts, chunks, param, bound, window)
        where = f"WHERE k.doc_id IN ({filter_sql})" if filter_sql else ""
        # MATERIALIZED: bm25() cannot run inside the aggregate a flattened subquery would become
        return _ranked(db, f"WITH x AS MATERIALIZED (SELECT rowid AS chunk_id, {index.bm25()} AS s FROM {fts}(:{param})) "
                           f"SELECT k.doc_id, MAX(x.s) AS best, x.chunk_id FROM x JOIN {chunks} k "
                           f"ON k.chunk_id = x.chunk_id {where} GROUP BY k.doc_id ORDER BY best DESC, k.doc_id "
                           f"LIMIT {int(window)}", bound)
    return Search(None, "text", run, column=column)


def _best_chunks(searches: list[Search], lists: list[RankedList]) -> tuple[str | None, dict[int, int]]:
    """The first chunked column of the sides, and each document's chunk of it from the side that ranked
    the document highest (what the reranker reads)."""
    column = next((s.column for s in searches if s.column), None)
    best: dict[int, tuple[int, int]] = {}
    for search, ranked in zip(searches, lists):
        if search.column != column or column is None:
            continue
        for rank, (doc, _, chunk) in enumerate(ranked.hits):
            if chunk is not None and (doc not in best or rank < best[doc][0]):
                best[doc] = (rank, int(chunk))
    return column, {doc: chunk for doc, (_, chunk) in best.items()}


def _apply_weights(searches: list[Search], opts: TextOptions) -> None:
    named = {s.name.lower(): s for s in searches if s.name}
    for name, weight in opts.fusion_weights.items():
        if name not in named:
            raise UserError(f"fusion_weights: unknown search name '{name}' (name a search with MATCH(...) AS "
                            "name or knn(...) AS name)", errors.SqlSyntaxError)
        named[name].weight = weight
