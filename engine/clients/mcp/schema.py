"""What an agent may search and filter: each table's columns, read from the public catalog
(``Connection.tables()``, docs/dbapi.md#the-catalog)."""
from __future__ import annotations

from dataclasses import dataclass, field

import tesseradb

TITLE_NAMES = ("title", "name", "heading", "subject")


@dataclass
class Column:
    name: str
    type: str
    properties: dict[str, str] = field(default_factory=dict)   # a vector column's: model, from, chunk_strategy ...
    full_text: bool = False                 # MATCH() searches it
    is_vector: bool = False

    @property
    def model_backed(self) -> bool:
        """A vector column the engine embeds itself (model_name and from): a query text can search it."""
        return self.is_vector and "model" in self.properties and "from" in self.properties

    @property
    def filterable(self) -> bool:
        return not self.is_vector and self.type != "json"

    def describe(self) -> dict:
        out: dict = {"name": self.name, "type": self.type, "filterable": self.filterable}
        if self.is_vector:
            out["searchable"] = self.model_backed
            out.update({k: v for k, v in self.properties.items() if k in ("model", "from", "chunk_strategy")})
        elif self.full_text:
            out["full_text"] = True
        return out


@dataclass
class TableInfo:
    name: str
    columns: list[Column]
    schema: str = ""                        # its CREATE TABLE statement (the resource tessera://schema/<table>)

    def column(self, name: str) -> Column | None:
        lowered = name.lower() if isinstance(name, str) else None
        return next((c for c in self.columns if c.name.lower() == lowered), None)

    @property
    def search_column(self) -> Column | None:
        """The model-backed vector column (the first, when a table has several)."""
        return next((c for c in self.columns if c.model_backed), None)

    @property
    def text_columns(self) -> list[Column]:
        return [c for c in self.columns if c.full_text]

    @property
    def title_column(self) -> Column | None:
        for wanted in TITLE_NAMES:
            found = self.column(wanted)
            if found is not None and not found.is_vector:
                return found
        vector = self.search_column
        first = vector.properties["from"].split(",")[0].strip() if vector else None
        return self.column(first) if first else None

    @property
    def path_column(self) -> Column | None:
        """The column a hit is cited by (``path``, as ``tessera index`` and LOAD DATA SYNC make it)."""
        found = self.column("path")
        return found if found is not None and not found.is_vector else None

    @property
    def json_columns(self) -> list[Column]:
        """Columns of front matter and other keys (``meta``): filters reach their keys."""
        return [c for c in self.columns if c.type == "json"]

    @property
    def data_columns(self) -> list[Column]:
        """Everything but vectors: what read() returns."""
        return [c for c in self.columns if not c.is_vector]


def _column(info: tesseradb.ColumnInfo) -> Column:
    vector = info.vector
    properties: dict[str, str] = {}
    if vector is not None and vector.knn_type is not None:
        properties = {"knn_type": vector.knn_type, "similarity": str(vector.similarity), "dims": str(vector.dims)}
        if vector.model is not None and vector.chunking is not None:
            properties.update(model=vector.model, chunk_strategy=vector.chunking.strategy)
            properties["from"] = ",".join(vector.from_columns)
    full_text = info.full_text is not None and info.full_text.indexed
    return Column(info.name, info.type, properties, full_text, info.is_vector)


def load(con, only: list[str] | None = None) -> dict[str, TableInfo]:
    """The tables of the database (only those named in ``only`` when given), by lower-case name."""
    found = con.tables()
    names = [t.name for t in found]
    if only:
        wanted = {n.lower() for n in only}
        missing = wanted - {n.lower() for n in names}
        if missing:
            raise LookupError(f"no such table: {', '.join(sorted(missing))} (the database has: "
                              f"{', '.join(names) or 'no tables'})")
        found = tuple(t for t in found if t.name.lower() in wanted)
    return {t.name.lower(): TableInfo(t.name, [_column(c) for c in t.columns], t.schema) for t in found}


def quote(identifier: str) -> str:
    """A name read from the catalog, as a MySQL identifier (never user text: that is checked first)."""
    return "`" + identifier.replace("`", "``") + "`"
