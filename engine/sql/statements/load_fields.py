"""LOAD DATA with MySQL's clauses (``FIELDS ... LINES ... IGNORE n LINES (col, @var, ...) SET col =
expr``): the file is MySQL's delimited text whatever its extension (``tesseradb.io.mysql_text``
reads it), fields go to the listed columns and variables by position, and SET's expressions are
evaluated by SQLite with the row's values bound as parameters (never pasted into SQL). Rows come
out as load_data's other sources give them: (batch, columns, rows), converted to the column types.

A line with fewer fields than targets leaves the missing columns to their defaults (Warning 1261);
a line with more has the extra ones dropped (Warning 1262), as MySQL does."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from tesseradb import errors
from tesseradb.catalog.tables import ID_COLUMN, Column, Table
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.io import mysql_text
from tesseradb.io.formats import Batch, convert
from tesseradb.sql import passes
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import row_id

MAX_WARNINGS = 1024       # MySQL's max_error_count: warnings past it are not kept
Target = Column | ast.UserVar


def _column(table: Table, name: str) -> Column:
    alias = row_id.alias(table)
    col = table.columns[0] if alias and alias.lower() == name.lower() else table.column(name)
    if col is None:
        raise errors.unknown_column(name)
    return col


def _targets(table: Table, stmt: ast.LoadData) -> list[Target]:
    """The column list; without one, the table's columns in order (not Manticore's implicit id)."""
    if not stmt.columns:
        implicit = table.columns[0] == ID_COLUMN and not row_id.alias(table)
        return list(table.columns[1:] if implicit else table.columns)
    targets: list[Target] = []
    for item in stmt.columns:
        target = item if isinstance(item, ast.UserVar) else _column(table, item)
        if target in targets:
            raise UserError(f"Column '{item}' specified twice", errors.ProgrammingError)
        targets.append(target)
    return targets


@dataclass
class _Assignments:
    """SET's expressions as one SELECT with a named parameter for each @variable and column."""
    columns: list[Column]
    sql: str = ""
    uses: list[tuple[str, Any]] = field(default_factory=list)     # (parameter, "var" name | target index)

    def values(self, db: Database, fields: list[Any], converted: dict[int, Any], variables: dict[str, int]) -> list:
        bound = {}
        for name, (kind, key) in self.uses:
            if kind == "var":
                at = variables[key]
                bound[name] = fields[at] if at < len(fields) else None
            else:
                bound[name] = converted.get(key)
        row = db.store.one(self.sql, bound)
        return list(row) if row else [None] * len(self.columns)


def _assignments(db: Database, table: Table, stmt: ast.LoadData, targets: list[Target]) -> _Assignments:
    plan = _Assignments([_column(table, name) for name, _ in stmt.assignments])
    if not stmt.assignments:
        return plan
    for n, col in enumerate(plan.columns):
        if col in plan.columns[:n]:
            raise UserError(f"Column '{stmt.assignments[n][0]}' specified twice", errors.ProgrammingError)
    variables = {t.name for t in targets if isinstance(t, ast.UserVar)}
    places: dict[tuple[str, Any], str] = {}

    def parameter(kind: str, key: Any) -> exp.Placeholder:
        name = places.setdefault((kind, key), f"load_{len(places)}")
        return exp.Placeholder(this=name)

    def bound(expr: exp.Expression) -> exp.Expression:
        """The row's columns (not those of a subquery's tables) and the listed @variables as parameters."""
        expr = exp.Paren(this=expr.copy())
        for node in list(expr.find_all(exp.Column, exp.Parameter)):
            if isinstance(node, exp.Parameter) and node.name.lower() in variables:
                node.replace(parameter("var", node.name.lower()))
            elif isinstance(node, exp.Column) and not node.table and node.find_ancestor(exp.Select) is None:
                col = _column(table, node.name)
                node.replace(parameter("col", targets.index(col) if col in targets else -1))
        return expr.this

    select = exp.select(*[bound(expr) for _, expr in stmt.assignments])
    select = passes.prepare(db, ast.Query(expr=select, kind="select")).expr     # @session vars, dates, ...
    plan.sql = select.sql(dialect="sqlite")
    plan.uses = [(name, key) for key, name in places.items()]
    return plan


class Loader:
    """One statement's targets, SET plan and row count (for the warnings' ``Row N``), across its files."""

    def __init__(self, db: Database, table: Table, stmt: ast.LoadData):
        self.db, self.table, self.stmt = db, table, stmt
        self.fmt = mysql_text.text_format(stmt.fields, stmt.lines, stmt.charset)
        self.targets = _targets(table, stmt)
        self.assign = _assignments(db, table, stmt, self.targets)
        self.variables = {t.name: i for i, t in enumerate(self.targets) if isinstance(t, ast.UserVar)}
        self.row = 0

    def source(self, path: str) -> Iterator[tuple[Batch, list[Column], list[list[Any]]]]:
        for batch in mysql_text.records(path, self.fmt, self.stmt.ignore_lines or 0):
            yield from self._groups(batch)

    def _width(self, fields: list[Any]) -> int:
        self.row += 1
        wanted = len(self.targets)
        if len(fields) != wanted and len(self.db.pending_warnings) < MAX_WARNINGS:
            self.db.warn(f"Row {self.row} doesn't contain data for all columns" if len(fields) < wanted else
                         f"Row {self.row} was truncated; it contained more data than there were input columns",
                         1261 if len(fields) < wanted else 1262)
        return min(len(fields), wanted)

    def _groups(self, batch: Batch) -> Iterator[tuple[Batch, list[Column], list[list[Any]]]]:
        """Runs of rows with the same number of fields: each run writes the columns it has."""
        widths = [self._width(r) for r in batch.rows]
        start = 0
        for n in range(1, len(widths) + 1):
            if n == len(widths) or widths[n] != widths[start]:
                part = Batch([], batch.rows[start:n], batch.lines[start:n], batch.done)
                yield self._rows(part, widths[start])
                start = n

    def _rows(self, batch: Batch, width: int) -> tuple[Batch, list[Column], list[list[Any]]]:
        listed = [(i, t) for i, t in enumerate(self.targets[:width]) if isinstance(t, Column)]
        columns = [c for _, c in listed]
        values = convert(columns, Batch([], [[r[i] for i, _ in listed] for r in batch.rows], batch.lines,
                                        batch.done), native_json=False)
        if self.assign.columns:
            kept = [n for n, c in enumerate(columns) if c not in self.assign.columns]
            computed = [self.assign.values(self.db, fields, {i: v for (i, _), v in zip(listed, row)}, self.variables)
                        for fields, row in zip(batch.rows, values)]
            computed = convert(self.assign.columns, Batch([], computed, batch.lines, batch.done), native_json=False)
            values = [[row[n] for n in kept] + extra for row, extra in zip(values, computed)]
            columns = [columns[n] for n in kept] + self.assign.columns
        return Batch([c.name for c in columns], values, batch.lines, batch.done), columns, values
