"""What an agent may search and filter: each table's columns, read with SHOW TABLES and DESCRIBE."""
from __future__ import annotations

from dataclasses import dataclass, field

VECTOR_TYPES = {"float_vector", "float_vector_array"}
TITLE_NAMES = ("title", "name", "heading", "subject")


@dataclass
class Column:
    name: str
    type: str
    properties: dict[str, str] = field(default_factory=dict)

    @property
    def is_vector(self) -> bool:
        return self.type in VECTOR_TYPES

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
        elif self.type == "text":
            out["full_text"] = True
        return out


@dataclass
class TableInfo:
    name: str
    columns: list[Column]

    def column(self, name: str) -> Column | None:
        lowered = name.lower() if isinstance(name, str) else None
        return next((c for c in self.columns if c.name.lower() == lowered), None)

    @property
    def search_column(self) -> Column | None:
        """The model-backed vector column (the first, when a table has several)."""
        return next((c for c in self.columns if c.model_backed), None)

    @property
    def text_columns(self) -> list[Column]:
        return [c for c in self.columns if c.type == "text"]

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
    def data_columns(self) -> list[Column]:
        """Everything but vectors: what read() returns."""
        return [c for c in self.columns if not c.is_vector]


def _properties(text: str | None) -> dict[str, str]:
    """DESCRIBE's third column for a vector column: ``knn model=M from=a,b chunk_strategy=s``."""
    pairs = [word.split("=", 1) for word in (text or "").split() if "=" in word]
    return {key: value for key, value in pairs}


def load(con, only: list[str] | None = None) -> dict[str, TableInfo]:
    """The tables of the database (only those named in ``only`` when given), by lower-case name."""
    names = [row[0] for row in con.execute("SHOW TABLES").fetchall()]
    if only:
        wanted = {n.lower() for n in only}
        missing = wanted - {n.lower() for n in names}
        if missing:
            raise LookupError(f"no such table: {', '.join(sorted(missing))} (the database has: "
                              f"{', '.join(names) or 'no tables'})")
        names = [n for n in names if n.lower() in wanted]
    tables = {}
    for name in names:
        rows = con.execute(f"DESCRIBE {quote(name)}").fetchall()
        columns = [Column(field_name, str(kind).lower(), _properties(props)) for field_name, kind, props in rows]
        tables[name.lower()] = TableInfo(name, columns)
    return tables


def quote(identifier: str) -> str:
    """A name read from the catalog, as a MySQL identifier (never user text: that is checked first)."""
    return "`" + identifier.replace("`", "``") + "`"
