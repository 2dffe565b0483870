"""INSERT ... SELECT and REPLACE ... SELECT in batches: the SELECT's rows flow from its SQLite cursor
to the one write path ``BATCH_ROWS`` rows (or about ``BATCH_BYTES`` of text) at a time, so a copy of
any size holds one batch in Python memory (docs/statements.md#insert--select).

- **Halloween safety**: when the SELECT reads the table it writes (directly, through a view, a join
  or a subquery; SQLite's authorizer says which tables its plan reads) or searches (knn(), MATCH),
  its rows are first copied into a TEMP table and read from there, so every source row is copied
  once, as the table was before the statement.
- **Keys** are checked per batch (``keys.conflicts``): against the table, which holds the earlier
  batches, and within the batch. A duplicate in any batch fails the statement, and the statement's
  savepoint (sql/executor.py) undoes the earlier batches too. REPLACE: a later row replaces an
  earlier one of the same statement on the id or a unique key, in a batch as across batches.
- **Embedding** runs per batch, across its rows (``write.write_rows``); chunk rows are recorded per
  batch and applied to the vector index at COMMIT, as for any write.
- Ids are generated as for one batch: above every id the earlier batches wrote (even rows a later
  batch replaced), and (Manticore's rule) after every explicit id of the statement: a statement that
  mixes both reads the source once more for its largest explicit id.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from sqlglot import exp

from tesseradb.catalog.tables import Column, Table
from tesseradb.catalog.values import bind_many
from tesseradb.results import Result
from tesseradb.sql import passes
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import auto_value, keys
from tesseradb.sql.statements.update_delete import delete_ids
from tesseradb.sql.write import IdRule, explicit_id, highest_id, write_rows

BATCH_ROWS = 1000           # rows per write (tests lower it) ...
BATCH_BYTES = 4 << 20       # ... or fewer, once their text and blobs pass this many bytes
SOURCE = "_tessera_insert_source"       # the TEMP copy of a SELECT that reads its own target


def write_batch(db: Database, table: Table, columns: list[Column], rows: list[list[Any]], replace: bool,
                rule: IdRule, *, first_row: int = 1, id_floor: int = 0) -> Result:
    """One batch through MySQL's key rules and the write path: 1062 for a repeated key, or (REPLACE)
    the rows it conflicts with deleted first and a row that a later one replaces left out."""
    names = [c.name for c in columns]
    doomed = keys.conflicts(db, table, names, rows, replace)
    deleted = delete_ids(db, table, doomed) if doomed else 0
    replaced = keys.replaced_within(db, table, names, rows, rule.zero_generates) if replace else set()
    with keys.mysql_errors(db, table):
        result = write_rows(db, table, columns, rows, replace=replace, id_rule=rule,
                            first_row=first_row, id_floor=id_floor, replaced=replaced)
    result.rowcount += deleted
    return result


def stream(db: Database, table: Table, columns: list[Column], expr: exp.Insert, param_sets: Sequence[Any],
           replace: bool) -> Result:
    """INSERT/REPLACE ... SELECT, once per parameter set, in batches."""
    rule = auto_value.id_rule(db, table)
    id_at = next((n for n, c in enumerate(columns) if c.name.lower() == "id"), None)
    total = Result(rowcount=0)
    row = 1
    for bound_expr, bound in bind_many(expr, param_sets):
        with source_rows(db, table, bound_expr.expression, bound) as source:
            explicit: int | None = None         # the source's largest explicit id, when it matters
            high = 0                            # the largest id the earlier batches wrote
            for batch, last in batches(source.rows):
                if explicit is None and not last and _generates(batch, id_at, rule):
                    explicit = source.largest_id(id_at, rule)
                result = write_batch(db, table, columns, batch, replace, rule, first_row=row,
                                     id_floor=max(high, explicit or 0))
                if not last:        # the next batch generates above it, even if it deletes this one's rows
                    high = max(high, highest_id(db, table))
                row += len(batch)
                total.rowcount += result.rowcount
                if result.lastrowid is not None:
                    total.lastrowid = result.lastrowid
    return total


def _generates(batch: list[list[Any]], id_at: int | None, rule: IdRule) -> bool:
    """Some row of the batch has its id generated while others may give theirs (only then do later
    batches' explicit ids matter to the ids generated now)."""
    if id_at is None or rule.in_row_order:
        return False
    return any(explicit_id(row[id_at], rule.zero_generates) is None for row in batch)


class _Source:
    def __init__(self, db: Database, sql: str, bound: Any):
        self.db, self.sql, self.bound = db, sql, bound
        self.cursor = db.store.execute(sql, bound)
        self.rows: Iterator = self.cursor

    def largest_id(self, id_at: int | None, rule: IdRule) -> int:
        """The largest explicit id the whole source gives (read once more, apart)."""
        top = 0
        for row in self.db.store.execute(self.sql, self.bound):
            value = explicit_id(row[id_at], rule.zero_generates)
            if value is not None:
                top = max(top, value)
        return top


@contextlib.contextmanager
def source_rows(db: Database, table: Table, select: exp.Expression, bound: dict[str, Any]) -> Iterator[_Source]:
    """The SELECT's rows, read lazily from its cursor (or from a TEMP copy when it reads ``table``)."""
    planned = passes.plan(db, select, bound)        # INSERT ... SELECT may use knn() and LENGTH(v)
    if planned.prepare is not None:
        planned.prepare()
    if planned.knn is not None:
        from tesseradb.sql.search.select_plan import fill_knn     # loads with the first search
        fill_knn(db, planned.knn)
    sql, params = planned.sql, planned.bound
    copied = reads_target(db, table, select, sql, params)
    if copied:
        db.store.execute(f"DROP TABLE IF EXISTS temp.{SOURCE}")
        db.store.execute(f"CREATE TEMP TABLE {SOURCE} AS {sql}", params)
        sql, params = f"SELECT * FROM temp.{SOURCE} ORDER BY rowid", None
    source = _Source(db, sql, params)
    try:
        yield source
    finally:
        source.cursor.close()
        if copied:
            db.store.execute(f"DROP TABLE IF EXISTS temp.{SOURCE}")


def reads_target(db: Database, table: Table, select: exp.Expression, sql: str, params: Any) -> bool:
    """The SELECT reads the table it writes (views seen through), one of the engine's own tables (a
    vector column's chunks, a full-text index), or calls a search function that reads them."""
    if any(isinstance(node, exp.MatchAgainst) or (isinstance(node, exp.Anonymous) and node.name.lower()
           in _search_functions()) for node in select.walk()):
        return True
    read = db.store.tables_read(sql, params)
    return table.name.lower() in read or any(name.startswith("_tessera") for name in read)


def _search_functions() -> frozenset[str]:
    from tesseradb.catalog import sql_functions
    return frozenset(sql_functions.names())


def batches(rows: Iterable[Sequence[Any]]) -> Iterator[tuple[list[list[Any]], bool]]:
    """(batch, last): lists of at most BATCH_ROWS rows and about BATCH_BYTES of text and blobs, read
    as needed (one row ahead, to say which batch is the last)."""
    batch: list[list[Any]] = []
    size = 0
    it = iter(rows)
    row = next(it, None)
    while row is not None:
        batch.append(list(row))
        size += sum(len(v) for v in row if isinstance(v, (str, bytes)))
        row = next(it, None)
        if len(batch) >= BATCH_ROWS or size >= BATCH_BYTES or row is None:
            yield batch, row is None
            batch, size = [], 0
