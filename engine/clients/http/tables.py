"""What a request needs to know of a table: its columns, which are full-text fields, which are
vector columns and which of those the engine embeds itself (model_name ... from), read from the
public catalog (``Connection.describe``). Identifiers of a request are accepted only when they name
a column of the table, and are always quoted.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tesseradb.clients.http.fields import RequestError


@dataclass
class Column:
    name: str
    type: str
    full_text: bool = False                 # MATCH() searches it
    model_backed: bool = False              # a vector column computed by the engine: a text query searches it
    is_vector: bool = False                 # float_vector or float_vector_array (ColumnInfo.is_vector)


@dataclass
class Table:
    name: str
    columns: list[Column]

    def column(self, name: str) -> Column | None:
        lowered = name.lower()
        return next((c for c in self.columns if c.name.lower() == lowered), None)

    def require(self, name: Any, what: str = "field") -> Column:
        if not isinstance(name, str) or self.column(name) is None:
            raise RequestError(f"unknown {what} '{name}' in table '{self.name}'")
        return self.column(name)  # type: ignore[return-value]

    @property
    def full_text_fields(self) -> list[Column]:
        return [c for c in self.columns if c.full_text]

    @property
    def source_columns(self) -> list[Column]:
        """What ``_source`` shows by default: every column but id and the computed vectors."""
        return [c for c in self.columns if c.name.lower() != "id" and not c.model_backed]


def quote(identifier: str) -> str:
    return "`" + identifier.replace("`", "``") + "`"


def read(con: Any, name: str) -> Table:
    """The table's facts; a missing table is the engine's own error (1146)."""
    info = con.describe(name)
    return Table(info.name, [Column(c.name, c.type, bool(c.full_text and c.full_text.indexed),
                                    bool(c.vector and c.vector.model_backed), c.is_vector) for c in info.columns])
