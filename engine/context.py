"""What the services below the SQL layer (row embedding, vector search, value evaluation) need from
the database a statement runs in. A Protocol, so that they depend on this small surface and never
import the SQL layer above them; ``tesseradb.sql.database.Database`` is the implementation."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from tesseradb.storage.chunk_table import ColumnLayout
from tesseradb.storage.chunks import ColumnIndex
from tesseradb.storage.rowstore import RowStore

from tesseradb.catalog.tables import Table


class Context(Protocol):
    store: RowStore
    tables: dict[str, Table]
    on_progress: Callable[[int, int], None] | None
    prepared: Any           # embed/prepared.py Prepared: what this write embedded before its transaction
    remote_access: Any      # the operator's allow-list for remote models (embed/remote/access.py RemoteAccess)

    def table(self, name: str) -> Table: ...

    def column_index(self, table: Table, column: str, layout: ColumnLayout | None = None) -> ColumnIndex: ...

    def has_pending(self) -> bool: ...

    def warn(self, message: str, code: int = 1265, level: str = "Warning", *, truncated: str | None = None) -> None: ...

    def check_cancelled(self) -> bool: ...
