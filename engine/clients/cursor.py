"""PEP 249's Cursor (and its extras: Arrow, pandas, NumPy results) and ``Row``, the row factory like
``sqlite3.Row``. A cursor runs its statements through its connection (``Connection._run``)."""
from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from tesseradb import errors
from tesseradb.results import Result


class Row(tuple):
    """A row factory like ``sqlite3.Row``: ``con.row_factory = tesseradb.Row``; items by position or
    by column name (case-insensitive), ``keys()``, compares equal to the plain tuple."""

    _names: tuple[str, ...]

    def __new__(cls, cursor: Cursor, row: Sequence[Any]) -> "Row":
        self = super().__new__(cls, row)
        self._names = tuple(d[0] for d in cursor.description or ())
        return self

    def keys(self) -> list[str]:
        return list(self._names)

    def __getitem__(self, key):  # type: ignore[override]
        if isinstance(key, str):
            lowered = key.lower()
            for i, name in enumerate(self._names):
                if name.lower() == lowered:
                    return tuple.__getitem__(self, i)
            raise IndexError(f"No item with that key: {key!r}")
        return tuple.__getitem__(self, key)


class Cursor:
    def __init__(self, connection: Any):      # a dbapi.Connection (dbapi imports this module)
        self.connection = connection
        self.arraysize = 1
        self.row_factory: Any = connection.row_factory
        self._result: Result | None = None
        self._pos = 0
        self._closed = False

    # -- PEP 249 ---------------------------------------------------------------------------
    @property
    def description(self):
        if self._result is None or self._result.columns is None:
            return None
        return [(name, decl, None, None, None, None, None) for name, decl in self._result.columns]

    @property
    def rowcount(self) -> int:
        return -1 if self._result is None else self._result.rowcount

    @property
    def lastrowid(self) -> int | None:
        return None if self._result is None else self._result.lastrowid

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] | None = None) -> Cursor:
        if self._closed:
            self._check()
        self._result, self._pos = None, 0      # a closed connection: its _run says so
        self._result = self.connection._run(sql, params)
        return self

    def executemany(self, sql: str, seq: Sequence[Any]) -> Cursor:
        self._check()
        self._result, self._pos = None, 0
        self._result = self.connection._run(sql, None, many=seq)
        return self

    def fetchone(self) -> tuple | None:
        rows = self._rows()
        if self._pos >= len(rows):
            return None
        self._pos += 1
        return self._made([rows[self._pos - 1]])[0]

    def fetchmany(self, size: int | None = None) -> list[tuple]:
        rows = self._rows()
        size = self.arraysize if size is None else size
        out = rows[self._pos:self._pos + size]
        self._pos += len(out)
        return self._made(out)

    def fetchall(self) -> list[tuple]:
        rows = self._rows()
        out = rows[self._pos:]
        self._pos = len(rows)
        return out if self.row_factory is None else self._made(out)

    def _rest(self) -> list[tuple]:
        rows = self._rows()
        out = rows[self._pos:]
        self._pos = len(rows)
        return out

    def _made(self, rows: list[tuple]) -> list:
        factory = self.row_factory
        return rows if factory is None else [factory(self, row) for row in rows]

    def close(self) -> None:
        self._closed = True
        self._result = None

    def setinputsizes(self, sizes) -> None:
        pass

    def setoutputsize(self, size, column=None) -> None:
        pass

    def __iter__(self) -> Iterator[tuple]:
        while (row := self.fetchone()) is not None:
            yield row

    # -- extras ----------------------------------------------------------------------------
    def fetch_arrow_table(self):
        """The remaining rows of the result as a pyarrow Table."""
        if self._result is None or self._result.columns is None:
            raise errors.ProgrammingError("no result set to fetch: execute a SELECT first")
        rest = Result(columns=self._result.columns, rows=self._rest())
        from tesseradb.io.export import result_to_arrow      # pyarrow loads with the first Arrow result
        return result_to_arrow(rest)

    def fetchdf(self):
        """The remaining rows as a pandas DataFrame (pandas: the optional extra ``tesseradb[pandas]``)."""
        from tesseradb.clients import frames
        return frames.to_pandas(self.fetch_arrow_table())

    df = fetchdf

    def fetchnumpy(self) -> dict:
        """The remaining rows as {column name: NumPy array}; a vector column is a 2-D float32 array."""
        from tesseradb.clients import frames
        return frames.to_numpy(self.fetch_arrow_table())

    def _rows(self) -> list[tuple]:
        result = self._result
        if self._closed or self.connection._db is None:     # (dbapi.Connection's: no property's frame)
            self._check()
        if result is None or result.columns is None:
            raise errors.ProgrammingError("no result set to fetch: execute a SELECT first")
        return result.rows

    def _check(self) -> None:
        if self._closed:
            raise errors.InterfaceError("Cannot operate on a closed cursor.")
        self.connection.db
