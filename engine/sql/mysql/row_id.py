"""A declared integer PRIMARY KEY is the table's row id (MySQL's ``user_id int PRIMARY KEY``).

Every table keeps its row id in SQLite's ``id`` column (the engine's vectors, chunks and full-text
rows hang off it). When CREATE TABLE declares an integer primary key under another name, that name
becomes the id's name for the user: the catalog's id column records it (constraint ``alias``), the
table has no other implicit column, and statements are rewritten before they run — ``user_id`` is
``id`` underneath, and ``SELECT *`` lists the declared columns with the id under its declared name.
"""
from __future__ import annotations

from sqlglot import exp

from tesseradb.catalog.tables import Column, Table
from tesseradb.grammar import ast
from tesseradb.sql.mysql.scope import table_scope

INTEGER_TYPES = {"int", "bigint"}
ALIAS = "alias"


# -- CREATE TABLE ------------------------------------------------------------------------------------
def _primary(d: ast.ColumnDef) -> bool:
    return any(kind == "primary_key" for kind, _ in d.constraints)


def _declared(d: ast.ColumnDef) -> bool:
    return any(kind in ("primary_key", "auto_increment") for kind, _ in d.constraints)


def declared_key(stmt: ast.CreateTable) -> ast.ColumnDef | None:
    """The integer column declared MySQL's way: PRIMARY KEY (column or table level) or AUTO_INCREMENT,
    whatever its name. A column named ``id`` declared so is a MySQL key too (it keeps 0, issue 36);
    ``id bigint`` alone is Manticore's implicit id, and then no other column is the row id."""
    defs = {d.name.lower(): d for d in stmt.columns}
    table_primary = [k.columns[0].lower() for k in stmt.keys if k.kind == "primary" and len(k.columns) == 1]
    if "id" in defs and not (_declared(defs["id"]) or "id" in table_primary):
        return None
    named = [d for d in stmt.columns if _primary(d)]
    named += [defs[k] for k in table_primary if k in defs]
    if not named and "id" in defs:
        named = [defs["id"]]                            # `id int AUTO_INCREMENT` (a key in MySQL)
    if len(named) != 1 or named[0].type not in INTEGER_TYPES or named[0].options:
        return None
    return named[0]


def id_column(d: ast.ColumnDef, table_keys: tuple[ast.TableKey, ...] = ()) -> Column:
    kept = tuple((k, v) for k, v in d.constraints if k in ("auto_increment", "comment"))
    return Column("id", "bigint", "bigint", (), ((ALIAS, d.name), ("alias_type", d.type_text)) + kept)


# -- the catalog's view of it -------------------------------------------------------------------------
def alias(table: Table) -> str | None:
    value = dict(table.columns[0].constraints or ()).get(ALIAS) if table.columns else None
    return str(value) if value else None


def renamed(table: Table) -> bool:
    """The key has another name than ``id`` (statements are rewritten: ``user_id`` is ``id`` underneath)."""
    return alias(table) not in (None, "id")


def auto_increment(table: Table) -> bool:
    return alias(table) is None or "auto_increment" in dict(table.columns[0].constraints or ())


def display_name(table: Table, col: Column) -> str:
    return (alias(table) or col.name) if col is table.columns[0] else col.name


def display_type(table: Table, col: Column) -> str:
    if col is table.columns[0] and alias(table):
        return str(dict(col.constraints).get("alias_type", "bigint"))
    return col.type_text


# -- statements ---------------------------------------------------------------------------------------


def needs_rewrite(tables: dict[str, Table], expr: exp.Expression) -> bool:
    return any(renamed(t) for t in table_scope(tables, expr).values())


def _owner(column: exp.Column, scope: dict[str, Table]) -> Table | None:
    if column.table:
        return scope.get(column.table.lower())
    low = column.name.lower()
    owners = {id(t): t for t in scope.values() if (alias(t) or "").lower() == low}
    others = [t for t in scope.values() if t.column(column.name) is not None]
    return next(iter(owners.values())) if len(owners) == 1 and not others else None


def _star_columns(select: exp.Select, scope: dict[str, Table], only: str | None) -> list[exp.Expression] | None:
    sources = [select.args["from_"].this] if select.args.get("from_") else []
    sources += [j.this for j in select.args.get("joins") or []]
    out: list[exp.Expression] = []
    for source in sources:
        if not isinstance(source, exp.Table) or source.name.lower() not in scope:
            return None
        qualifier = source.alias or source.name
        if only is not None and qualifier.lower() != only.lower():
            continue
        table = scope[source.name.lower()]
        for col in table.columns:
            ref = exp.column(col.name, table=exp.to_identifier(qualifier, quoted=True), quoted=True)
            shown = display_name(table, col)
            out.append(exp.alias_(ref, shown, quoted=True) if shown != col.name else ref)
    return out


def _expand_stars(select: exp.Select, scope: dict[str, Table]) -> None:
    expanded: list[exp.Expression] = []
    for p in select.expressions:
        only = p.table if isinstance(p, exp.Column) and isinstance(p.this, exp.Star) else None
        if isinstance(p, exp.Star) or only is not None:
            columns = _star_columns(select, scope, only)
            if columns is None:
                return
            expanded.extend(columns)
        else:
            expanded.append(p)
    select.set("expressions", expanded)


def rewrite(tables: dict[str, Table], expr: exp.Expression) -> exp.Expression:
    """The statement with declared key names as ``id`` and ``SELECT *`` spelled out."""
    expr = expr.copy()
    scope = table_scope(tables, expr)
    for select in list(expr.find_all(exp.Select)):
        _expand_stars(select, scope)
        select.set("expressions", [
            exp.alias_(p, p.name, quoted=True) if isinstance(p, exp.Column) and _renamed(p, scope) else p
            for p in select.expressions])
    for column in list(expr.find_all(exp.Column)):
        if _renamed(column, scope):
            owner = _owner(column, scope)
            found, source = _source(column, owner)
            if not found and not column.table and column.find_ancestor(exp.Select) is not None:
                continue            # a derived table's column of that name (`SELECT pk FROM (...) AS d`)
            column.set("this", exp.to_identifier("id", quoted=True))
            if source is not None and not column.table:
                column.set("table", exp.to_identifier(source.alias or source.name, quoted=True))
    if isinstance(expr, exp.Insert) and isinstance(expr.this, exp.Schema):
        table = scope.get(expr.this.this.name.lower())
        name = alias(table) if table is not None else None
        for ident in expr.this.expressions:
            if name and ident.name.lower() == name.lower():
                ident.set("this", "id")
    return expr


def _source(column: exp.Column, owner: Table | None) -> tuple[bool, exp.Table | None]:
    """The FROM entry of ``owner`` that a bare key name refers to: in the column's own SELECT, else in
    an enclosing one (a correlated subquery). Named so, the key becomes ``<that table>.id``: every table
    has an ``id``, so a bare one is ambiguous as soon as a SELECT joins two tables (``FROM t1, t2 WHERE
    a1 = b2``). (False, None) when no SELECT reads the table directly; (True, None) when one reads it
    twice (a bare name is then ambiguous, as in MySQL)."""
    select = column.find_ancestor(exp.Select)
    while select is not None and owner is not None:
        sources = [select.args["from_"].this] if select.args.get("from_") else []
        sources += [j.this for j in select.args.get("joins") or []]
        named = [s for s in sources if isinstance(s, exp.Table) and s.name.lower() == owner.name.lower()]
        if named:
            return True, named[0] if len(named) == 1 else None
        select = select.find_ancestor(exp.Select)
    return False, None


def _renamed(column: exp.Column, scope: dict[str, Table]) -> bool:
    if isinstance(column.this, exp.Star):
        return False
    table = _owner(column, scope)
    name = alias(table) if table is not None and renamed(table) else None
    return name is not None and column.name.lower() == name.lower()
