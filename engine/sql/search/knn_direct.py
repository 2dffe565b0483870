"""A knn() SELECT that shows its table's own rows, run without the hits' TEMP table (issue 37).

The general plan (select_plan) fills ``_tessera_knn`` with the hits and lets SQLite join and order
them. For the common shape, the table alone in FROM, knn() alone in WHERE, a select list of the
table's own expressions plus ``knn_dist()`` / ``knn_score()``, no GROUP BY, ORDER BY, DISTINCT or
window, a literal LIMIT/OFFSET at most, the same rows come from one cached statement that reads the
hits' rows by id in the hits' order (``SELECT ... WHERE id = ? UNION ALL SELECT ... WHERE id = ?
...``, one statement per number of hits up to ``IN_LIST_MAX``: one seek per id, no IN list's sorted
copy, no dict by id; right after a model run 10 ids took 16 us less than ``WHERE id IN (?, ...)``,
which read 10 ids in 70 us p50 where an array, ``IN carray(?)``, took 89; more hits take the IN
array and a dict), the hits' own values put in place. The hits' order is the general plan's ORDER
BY: run_knn returns them by distance, ties by id (or in the ranking's order, ``{mmr}`` /
``{length_penalty}``, the general plan's position column), then cut by LIMIT/OFFSET. Right after a
model run each SQLite call and each Python step costs about three times its warm time
(docs/benchmarks.md, "knn's engine work"): this saves the TEMP fill (three statements in one call),
the join and its sort. The executor runs it with a short bracket and checks the catalog after the
read (sql/executor._direct).

A select list of the table's id alone (``SELECT id``, ``t.id``, ``id AS doc``) reads no row by id:
the hits are the rows, since the index holds exactly the table's documents (a row's id cannot
change, deleting a row deletes its chunks, and run_knn merges the open transaction's own writes),
and one read that returns no row (``SELECT 1 FROM t LIMIT 0``) starts the read transaction that
brings SQLite's data version up to date for the executor's check (right after a model run 20 us
less than reading the 10 rows, paired, whole manual).

The result's columns (names and declared types) are those of the general plan's first execute
(``Direct.columns``); until it ran, a statement takes the general path. A hit whose document the table
no longer holds is left out, as the join leaves it out (``SELECT id`` alone: see above).
tests/vectors/test_knn_direct.py compares the rows of both paths to the last bit.
"""
from __future__ import annotations

from array import array
from operator import itemgetter
from typing import Any

import apsw

from sqlglot import exp

from tesseradb.vectors import knn_rank
from tesseradb.vectors.search import KnnRequest, run_knn

class Direct:
    """How to make a knn() SELECT's rows without the TEMP table: ``sql`` reads the shown expressions
    of the hits' rows (their id last); ``parts[i]`` is the position in that row of shown column ``i``,
    or ``DIST`` / ``SCORE`` for the hit's own value."""

    def __init__(self, sql: Reads, items: list[str], offset: int, limit: int | None, ids_only: bool = False) -> None:
        self.sql = sql
        self.ids_only = ids_only    # the select list is the table's id alone: the hits are the rows
        self.items = items          # per select-list item: SQL, STAR (a table's columns) or a search's value
        self.offset, self.stop = offset, (None if limit is None else offset + limit)
        self.whole = not offset and limit is None     # no LIMIT/OFFSET: every row is the result's
        self.parts: list[int | str] = []
        self.hit_values = any(item not in (SQL, STAR) for item in items)
        self.columns: list[tuple[str, str | None]] | None = None     # the general path's, once it ran
        self.readers: list[Any] = []
        self.convert = False        # whether any reader converts (readers learnt with the columns)
        self._sql: dict[tuple[int, bool], str] = {}      # the statement for n ids (with their id last or not)
        self._cursor: Any = None    # the connection's cursor these reads run on (kept: one object less a call)

    def learn(self, columns: list[tuple[str, str | None]], readers: list[Any]) -> None:
        """The columns and value readers of the general plan's result (same SQL text, same schema); a
        ``t.*`` item spans the table's columns, as many as the result has beyond the other items."""
        stars = self.items.count(STAR)
        width, odd = divmod(len(columns) - (len(self.items) - stars), stars) if stars else (0, 0)
        if width < 0 or odd:
            return
        parts: list[int | str] = []
        at = 0
        for item in self.items:
            if item not in (SQL, STAR):         # a search's own value (DIST, SCORE, hybrid's WEIGHT)
                parts.append(item)
            else:
                span = width if item == STAR else 1
                parts.extend(range(at, at + span))
                at += span
        if len(parts) == len(columns):
            self.parts, self.columns, self.readers = parts, columns, readers
            self.convert = any(readers)

    def rows(self, db: Any, request: KnnRequest) -> list[tuple] | None:
        """The result's rows before the readers; None when the search found nothing (no row read)."""
        request.distances = self.hit_values     # none shown: the hits' order without float32 distances (ranked)
        hits = run_knn(db, request)
        if not hits:
            return None
        # run_knn's hits come nearest first, ties by document id (the general ORDER BY's distance, id),
        # or in the ranking's order ({mmr}, {length_penalty}: the general ORDER BY's position); without
        # a hit's own value shown, the rows read in that order are the result (parts: every column)
        ids = list(map(_DOC, hits))
        if self.ids_only:           # no row to read by id, only SQLite's data version to bring up to date
            self._cursor_of(db).execute(self.sql.touch()).fetchall()
            rows = list(zip(ids))
            return rows if self.whole else self.cut(rows)
        if not self.hit_values:
            rows = self.ordered(db, ids, with_id=False)
            return rows if self.whole else self.cut(rows)
        return self._with_hit_values(request, hits, self.ordered(db, ids, with_id=True))

    def ordered(self, db: Any, ids: list[int], with_id: bool) -> list[tuple]:
        """The shown expressions of the rows with these ids (``with_id``: their id last), in the ids'
        order, a missing row left out: up to ``IN_LIST_MAX`` ids, one cached statement of one seek per
        id (``... WHERE id = ? UNION ALL ...``: SQLite returns a UNION ALL's rows term by term), which
        needs no IN list's sorted copy nor a dict by id (right after a model run 10 ids took 16 us
        less than ``read``); more ids, ``read``'s."""
        n = len(ids)
        if n > IN_LIST_MAX:
            found = self.read(db, ids)
            rows = [found[i] for i in ids if i in found]
            return rows if with_id else [row[:-1] for row in rows]
        sql = self._sql.get((n, with_id))
        if sql is None:
            sql = self._sql[n, with_id] = " UNION ALL ".join([self.sql.by_id(with_id)] * n)
        return self._cursor_of(db).execute(sql, ids).fetchall()

    def _cursor_of(self, db: Any) -> Any:
        cursor = self._cursor
        if cursor is None:
            cursor = self._cursor = db.store.conn.cursor()
        return cursor

    def read(self, db: Any, ids: list[int]) -> dict[int, tuple]:
        """The shown expressions of the rows with these ids (their id last), by id; one cached
        statement (hybrid_direct reads its fused rows with it too)."""
        n = len(ids)
        if n <= IN_LIST_MAX:
            sql = self._sql.get((n, None))
            if sql is None:
                sql = self._sql[n, None] = self.sql.by_ids() + "(" + ",".join("?" * n) + ")"
            params: Any = ids
        else:
            sql, params = self.sql.by_ids() + "carray(?)", (apsw.carray(array("q", ids)),)
        return {row[-1]: row for row in db.store.conn.execute(sql, params)}

    def cut(self, out: list[tuple]) -> list[tuple]:
        """The rows LIMIT/OFFSET keep."""
        return out[self.offset:self.stop] if self.offset or self.stop is not None else out

    def _with_hit_values(self, request: KnnRequest, hits, found: list[tuple]) -> list[tuple]:
        """``found``: the hits' rows in their order (their id last), a missing one left out."""
        scores = request.scores
        metric = request.layout.metric
        out = []
        rows = iter(found)
        row = next(rows, None)
        for doc, dist, _ in hits:
            if row is None or row[-1] != doc:
                continue            # the table no longer holds this document
            values = []
            for p in self.parts:
                if p == DIST:
                    values.append(float(dist))
                elif p == SCORE:
                    values.append(float(scores[doc]) if scores and doc in scores else knn_rank.similarity(dist, metric))
                else:
                    values.append(row[p])
            out.append(tuple(values))
            row = next(rows, None)
        return self.cut(out)


_DOC = itemgetter(0)
IN_LIST_MAX = 64        # more hits are bound as one array (carray), not one statement per count
DIST, SCORE, SQL, STAR = "dist", "score", "sql", "star"


def window(select: exp.Select, search: str = "knn") -> tuple[int, int | None] | None:
    """(OFFSET, LIMIT) of a knn() SELECT (or ``search``'s: hybrid_match), before planning, whose rows
    can come directly: nothing in it but its one table, the search call alone in WHERE and a select
    list; None otherwise."""
    if any(select.args.get(arg) for arg in _MORE):
        return None
    where = select.args.get("where")
    if where is None or not (isinstance(where.this, exp.Anonymous) and str(where.this.this).lower() == search):
        return None
    source = select.args.get("from_")      # a SELECT without FROM: the general path says what is wrong
    if source is None or not isinstance(source.this, exp.Table) or select.find(exp.AggFunc, exp.Window) is not None:
        return None
    offset, limit = _clause(select.args.get("offset"), 0), _clause(select.args.get("limit"), -1)
    if offset is None or limit is None:
        return None
    return offset, (None if limit == -1 else limit)


# what a SELECT may hold besides its select list, FROM, WHERE, LIMIT and OFFSET (sqlglot's names)
_MORE = ("joins", "group", "having", "order", "distinct", "with_", "with", "qualify", "windows", "into",
         "locks", "sample", "laterals", "pivots", "prewhere", "connect", "match", "settings", "format",
         "options", "kind", "operation_modifiers", "hint")


def shape(select: exp.Select, request: KnnRequest, table: exp.Table, window: tuple[int, int | None],
          dist_column: str, score_column: str) -> Direct | None:
    """The direct form of the planned knn() ``select`` (``window``: its OFFSET and LIMIT, read before
    planning), or None when its select list asks more than the table's own expressions and the hits'
    values."""
    if request.passages is not None or request.filter_sql is not None:
        return None
    shown = items_of(select, "_knn", {dist_column: DIST, score_column: SCORE})
    if shown is None:
        return None
    ids_only = shown[0] == [SQL] and is_id(select.expressions[0], request.alias)
    return Direct(statement(table, request.alias, shown[1]), shown[0], *window, ids_only=ids_only)


def is_id(item: exp.Expression, alias: str) -> bool:
    """Whether a select-list item is the searched table's id column (``id``, ``t.id``, ``id AS doc``)."""
    inner = item.this if isinstance(item, exp.Alias) else item
    return isinstance(inner, exp.Column) and inner.name.lower() == "id" and inner.table.lower() in ("", alias)


def items_of(select: exp.Select, joined: str, values: dict[str, str]) -> tuple[list[str], list[str]] | None:
    """(the kinds of the rewritten ``select``'s items, the SQL of those the table's rows give), or None
    when an item needs more than the table's own expressions and the search's values (``values``:
    the joined TEMP table's column -> its kind; ``joined``: that table's alias)."""
    sql_items: list[str] = []
    items: list[str] = []
    for item in select.expressions:
        inner = item.this if isinstance(item, exp.Alias) else item
        if isinstance(inner, exp.Column) and inner.table == joined and inner.name in values:
            items.append(values[inner.name])
            continue
        if any(c.table == joined for c in item.find_all(exp.Column)) or item.find(exp.Placeholder) is not None:
            return None
        items.append(STAR if isinstance(item, exp.Star) or (isinstance(item, exp.Column) and isinstance(item.this, exp.Star))
                     else SQL)
        sql_items.append(item.sql(dialect="sqlite"))
    return items, sql_items


class Reads:
    """The SQL of a direct read of ``table``'s rows by id: its shown expressions (``shown``), the id."""

    def __init__(self, shown: list[str], id_column: str, source: str) -> None:
        self.shown, self.id_column, self.source = shown, id_column, source

    def by_ids(self) -> str:
        """The rows by ``IN``, their id last, the IN list left to ``Direct.read``."""
        return f"SELECT {', '.join(self.shown + [self.id_column])} FROM {self.source} WHERE {self.id_column} IN "

    def touch(self) -> str:
        """A read of the table that returns no row: it starts a read transaction, which brings SQLite's
        data version up to date (the executor's catalog check after the rows)."""
        return f"SELECT 1 FROM {self.source} LIMIT 0"

    def by_id(self, with_id: bool) -> str:
        """One row by its id (a ``?``), its id last when ``with_id``."""
        return f"SELECT {', '.join(self.shown + [self.id_column] if with_id else self.shown)} " \
               f"FROM {self.source} WHERE {self.id_column} = ?"


def statement(table: exp.Table, alias: str, sql_items: list[str]) -> Reads:
    """The direct reads of ``table``'s rows by id."""
    return Reads(sql_items, exp.column("id", table=alias).sql(dialect="sqlite"), table.sql(dialect="sqlite"))


def _clause(node: exp.Expression | None, absent: int) -> int | None:
    """LIMIT's or OFFSET's value when it is a plain integer literal (``absent`` when there is none)."""
    if node is None:
        return absent
    if any(v is not None for k, v in node.args.items() if k != "expression"):
        return None
    value = node.args.get("expression")
    if isinstance(value, exp.Literal) and not value.is_string and str(value.this).isdigit():
        return int(value.this)
    return None
