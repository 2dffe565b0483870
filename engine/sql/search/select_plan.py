"""Planning a SELECT: lift ``knn(...)`` out of WHERE into a vector search request, rewrite the query
to join the search's (doc id, distance, best chunk) rows from a TEMP table, and rewrite LENGTH() of
vector columns. SELECT, EXPLAIN and INSERT ... SELECT all plan through here."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sqlglot import exp

from tesseradb import errors
from tesseradb.errors import UserError
from tesseradb.sql.search import text_search
from tesseradb.sql.database import Database
from tesseradb.vectors.knn_options import MANTICORE_DEFAULT_LIMIT, limit_k
from tesseradb.vectors.search import KnnCall, KnnRequest, run_knn
from tesseradb.vectors import knn_rank, passages
from tesseradb.sql.search import knn_direct, passage_calls, temp_rows
from tesseradb.sql.search.planned import Planned, check_internal, rewrite_lengths, rewrite_to_string  # noqa: F401
from tesseradb.sql.search.planned import tables_in_from as _tables_in_from

KNN_TABLE = "_tessera_knn"
# The hits table is joined to the user's tables, so its columns carry the reserved prefix: a user column
# named doc_id, dist or score stays unambiguous in the query's WHERE and select list.
DOC, DIST, CHUNK, SCORE, POS = "_tessera_doc", "_tessera_dist", "_tessera_chunk", "_tessera_score", "_tessera_pos"
CREATE_KNN_TABLE = (f"CREATE TEMP TABLE IF NOT EXISTS {KNN_TABLE} ({DOC} INTEGER PRIMARY KEY, "
                    f"{DIST} REAL NOT NULL, {CHUNK} INTEGER, {SCORE} REAL, {POS} INTEGER)")


def _is_call(node: exp.Expression, name: str) -> bool:
    return isinstance(node, exp.Anonymous) and str(node.this).lower() == name


def _is_knn_value(node: exp.Expression) -> bool:
    """knn_dist() (the raw distance) or knn_score() (what {mmr}/{length_penalty} ranked by)."""
    return _is_call(node, "knn_dist") or _is_call(node, "knn_score")


def _conjuncts(where: exp.Expression | None) -> list[exp.Expression]:
    if where is None:
        return []
    return list(where.this.flatten()) if isinstance(where.this, exp.And) else [where.this]


def plan_select(db: Database, expr: exp.Expression, bound: dict[str, Any], options: tuple = ()) -> Planned:
    """The search planning of a SELECT, after the plan passes (tesseradb.sql.passes.plan), on its tree."""
    text = text_search.plan(db, expr, bound, options)    # MATCH(), weight(), HIGHLIGHT(), hybrid search
    if text is not None:
        passage_calls.reject_outside_knn(expr)     # left only when no knn() side took them (hybrid does)
        return Planned(text.sql, bound, prepare=text.prepare, direct=text.direct)
    knn_calls = [n for n in expr.find_all(exp.Anonymous) if _is_call(n, "knn")]
    dist_calls = [n for n in expr.find_all(exp.Anonymous) if _is_knn_value(n)]
    if not knn_calls:
        if dist_calls:      # Manticore's text, with the spelling the user wrote (@knn_dist or knn_dist())
            raise UserError(f"{dist_calls[0].meta.get('spelling', str(dist_calls[0].this).lower() + '()')} "
                            "is only allowed for KNN() queries", errors.SqlSyntaxError)
        passage_calls.reject_outside_knn(expr)
        return Planned(expr.sql(dialect="sqlite"), bound)
    if len(knn_calls) > 1:
        raise UserError("only one knn() is supported per query", errors.SqlSyntaxError)
    call = knn_calls[0]
    if not isinstance(expr, exp.Select) or call not in _conjuncts(expr.args.get("where")):
        raise UserError("knn() must be a condition of the outer WHERE, ANDed with the others", errors.SqlSyntaxError)
    return _plan_knn(db, expr, call, bound)


def _plan_knn(db: Database, select: exp.Select, call: exp.Anonymous, bound: dict[str, Any]) -> Planned:
    tables = _tables_in_from(db, select)
    direct_window = knn_direct.window(select)      # read before the tree is rewritten
    request = KnnRequest.from_call(db, call, tables, bound, default_k=limit_k(select, bound))
    dist_aliases = {p.alias.lower() for p in select.expressions
                    if isinstance(p, exp.Alias) and any(_is_knn_value(n) for n in p.find_all(exp.Anonymous))}

    def is_post(cond: exp.Expression) -> bool:
        return passage_calls.mentions(cond) or any(_is_knn_value(n) for n in cond.find_all(exp.Anonymous)) or any(
            c.name.lower() in dist_aliases and not c.table for c in cond.find_all(exp.Column))

    rest = [c for c in _conjuncts(select.args.get("where")) if c is not call]
    pre = [c for c in rest if not is_post(c)]
    if pre:
        filt = exp.select(exp.column("id", table=request.alias)).distinct()
        filt.set("from_", select.args["from_"].copy())
        if select.args.get("joins"):
            filt.set("joins", [j.copy() for j in select.args["joins"]])
        filt.set("where", exp.Where(this=exp.and_(*[c.copy() for c in pre])))
        request.filter_sql = filt.sql(dialect="sqlite")
    _star_to_tables(select, tables)
    for node in list(select.find_all(exp.Anonymous)):
        if _is_call(node, "knn_dist"):
            node.replace(exp.column(DIST, table="_knn"))
        elif _is_call(node, "knn_score"):      # what was ranked (vectors/knn_rank.py)
            node.replace(exp.column(SCORE, table="_knn"))
    fixed_passages = passage_calls.fixed(select)      # the rewritten SQL holds for any parameters
    request.passages = passage_calls.rewrite(select, request.alias, bound,
                                             passage_calls.searched_chunk(request.table, request.column, f"_knn.{CHUNK}"),
                                             passage_calls.source_of(request.table, request.column))
    on = exp.condition(f"_knn.{DOC} = {exp.column('id', table=request.alias).sql()}")
    knn_table = exp.to_table(KNN_TABLE).as_("_knn")
    first = select.args["from_"].this
    alone = isinstance(first, exp.Table) and first.alias_or_name.lower() == request.alias
    temp_rows.join_hits(select, knn_table, request.alias, on, rest)
    if not select.args.get("order") and not select.args.get("group") and not select.find(exp.AggFunc):
        key = POS if knn_rank.active(request) else DIST      # {mmr}, {length_penalty}: their order
        select.set("order", exp.Order(expressions=[exp.Ordered(this=exp.column(key, table="_knn")),
                                                   exp.Ordered(this=exp.column("id", table=request.alias))]))
    remake = _remaker(call, tables, select, request.filter_sql, request.passages) \
        if request.passages is None or fixed_passages else None
    direct = knn_direct.shape(select, request, first, direct_window, DIST, SCORE) \
        if direct_window is not None and alone and remake is not None else None
    return Planned(select.sql(dialect="sqlite"), bound, request, remake_knn=remake, direct=direct)


def _remaker(call: exp.Anonymous, tables: dict[str, Any], select: exp.Select,
             filter_sql: str | None, needs: Any = None) -> Callable[[Database, dict[str, Any]], KnnRequest]:
    """How a cached plan gets its knn() request for another execute's parameters (the query text or
    vector, k, the options may all be parameters); the tables are looked up again by name."""
    names = [(alias, table.name.lower()) for alias, table in tables.items()]
    held: list[tuple[dict[str, Any], KnnCall]] = []     # the call read against these very tables

    def remake(db: Database, bound: dict[str, Any]) -> KnnRequest:
        knn = None
        if held:        # still the same tables? (a loop: no comprehension's frame on every execute)
            seen, knn = held[0]
            for alias, name in names:
                if db.tables.get(name) is not seen[alias]:
                    knn = None
                    break
        if knn is None:
            current = {alias: db.table(name) for alias, name in names}
            knn = KnnCall(call, current)
            held[:] = [(current, knn)]
        # k from LIMIT only when the call names none (a k of its own always wins: knn_options.resolve_k)
        request = knn.request(db, bound, default_k=MANTICORE_DEFAULT_LIMIT if knn.args.k is not None else limit_k(select, bound))
        request.filter_sql = filter_sql
        request.passages = needs           # what knn_chunk*() read (tesseradb.vectors.passages.Needs)
        return request
    return remake


def _star_to_tables(select: exp.Select, tables: dict[str, Any]) -> None:
    """``SELECT *`` must not show the joined knn table: list the query's own tables instead."""
    stars = [p for p in select.expressions if isinstance(p, exp.Star)]
    if not stars:
        return
    sources = [select.args["from_"].this] + [j.this for j in select.args.get("joins") or []]
    names = [t.alias_or_name for t in sources if t.alias_or_name]    # not tables of subqueries
    expanded = [exp.Column(this=exp.Star(), table=exp.to_identifier(n)) for n in names]
    # as in Manticore, SELECT * of a knn query ends with the distance, named @knn_dist
    expanded.append(exp.alias_(exp.column(DIST, table="_knn"), "@knn_dist", quoted=True))
    new = []
    for p in select.expressions:
        new.extend(expanded if isinstance(p, exp.Star) else [p])
    select.set("expressions", new)


def fill_knn(db: Database, request: KnnRequest) -> None:
    hits = run_knn(db, request)
    scores = request.scores
    shown = knn_rank.similarities([h[1] for h in hits], request.layout.metric) if not scores else \
        [scores[d] if d in scores else knn_rank.similarity(dist, request.layout.metric) for d, dist, _ in hits]
    temp_rows.fill(db.store, CREATE_KNN_TABLE, KNN_TABLE, 5,
                   [(d, dist, c, score, pos) for pos, ((d, dist, c), score) in enumerate(zip(hits, shown))])
    if request.passages is not None:     # knn_chunk(), knn_chunk_text(), ... read these rows
        passages.fill(db, request.table, request.column, request.query, [h[0] for h in hits], request.passages,
                      hits=hits, text=request.text)
