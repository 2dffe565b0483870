"""The final query of a hybrid search (split from hybrid.py): which WHERE conditions apply after fusion,
the filter every side applies before it, and the SELECT rewritten to join the fused rows' TEMP table
(``_h``), ordered by hybrid_score() descending, id, unless ORDER BY says otherwise."""
from __future__ import annotations

from sqlglot import exp

from tesseradb.sql.search import temp_rows
from tesseradb.sql.search.match import calls, expand_star

TABLE = "_tessera_hybrid"
# joined to the user's tables: the reserved prefix keeps a user column named score or weight unambiguous
CREATE_TABLE = (f"CREATE TEMP TABLE IF NOT EXISTS {TABLE} (_tessera_doc INTEGER PRIMARY KEY, "
                "_tessera_score REAL NOT NULL, _tessera_weight REAL, _tessera_dist REAL, _tessera_chunk INTEGER, "
                "_tessera_rerank REAL)")
SCORES = ("weight", "hybrid_score", "knn_dist", "rerank_score")


def mentions_scores(node: exp.Expression, aliases: set[str]) -> bool:
    return any(calls(node, n) for n in SCORES) or any(
        c.name.lower() in aliases and not c.table for c in node.find_all(exp.Column))


def post_conditions(select: exp.Select, rest: list[exp.Expression]) -> list[exp.Expression]:
    aliases = {p.alias.lower() for p in select.expressions if isinstance(p, exp.Alias) and mentions_scores(p, set())}
    return [c for c in rest if mentions_scores(c, aliases)]


def filter_sql(select: exp.Select, alias: str, pre: list[exp.Expression]) -> str | None:
    if not pre:
        return None
    filt = exp.select(exp.column("id", table=alias)).distinct()
    filt.set("from_", select.args["from_"].copy())
    if select.args.get("joins"):
        filt.set("joins", [j.copy() for j in select.args["joins"]])
    filt.set("where", exp.Where(this=exp.and_(*[c.copy() for c in pre])))
    return filt.sql(dialect="sqlite")


def rewrite(select: exp.Select, alias: str, rest: list[exp.Expression], reranked: bool = False) -> None:
    expand_star(select)
    values = {"weight": exp.column("_tessera_weight", table="_h"), "hybrid_score": exp.column("_tessera_score", table="_h"),
              "knn_dist": exp.column("_tessera_dist", table="_h"), "rerank_score": exp.column("_tessera_rerank", table="_h")}
    for name, value in values.items():
        for node in calls(select, name):
            node.replace(value.copy())
    on = exp.EQ(this=exp.column("_tessera_doc", table="_h"), expression=exp.column("id", table=alias))
    hybrid = exp.Table(this=exp.to_identifier(TABLE), alias=exp.TableAlias(this=exp.to_identifier("_h")))
    temp_rows.join_hits(select, hybrid, alias, on, rest)
    if not (select.args.get("order") or select.args.get("group") or select.find(exp.AggFunc)):
        first_keys = [exp.Ordered(this=exp.column("_tessera_rerank", table="_h"), desc=True, nulls_first=False)] if reranked else []
        select.set("order", exp.Order(expressions=first_keys + [
            exp.Ordered(this=exp.column("_tessera_score", table="_h"), desc=True), exp.Ordered(this=exp.column("id", table=alias))]))
