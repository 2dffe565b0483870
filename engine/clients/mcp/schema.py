"""What an agent may search and filter: each table's columns, read with SHOW TABLES and DESCRIBE."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

VECTOR_TYPES = {"float_vector", "float_vector_array"}
TITLE_NAMES = ("title", "name", "heading", "subject")


@dataclass
class Column:
    name: str
    type: str
    properties: dict[str, str] = field(default_factory=dict)
    full_text: bool = False                 # MATCH() searches it (DESCRIBE: ``indexed``)

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
        elif self.full_text:
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
    def data_columns(self) -> list[Column]:
        """Everything but vectors: what read() returns."""
        return [c for c in self.columns if not c.is_vector]


OPTION = re.compile(r"(\w+)='((?:[^'\\]|\\.)*)'")
#: DESCRIBE's option names -> the names the tools report
OPTION_NAMES = {"model_name": "model"}


def _properties(text: str | None) -> tuple[dict[str, str], bool]:
    """DESCRIBE's third column: a vector column's options as SHOW CREATE TABLE prints them
    (``knn knn_type='hnsw' ... model_name='M' from='a,b' chunk_strategy='s'``), and whether MATCH()
    searches the column (``indexed stored``, ``indexed attribute``)."""
    options = {OPTION_NAMES.get(k, k): re.sub(r"\\(.)", r"\1", v) for k, v in OPTION.findall(text or "")}
    words = OPTION.sub("", text or "").split()
    return options, "indexed" in words and "knn" not in words


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
        columns = [Column(field_name, str(kind).lower(), *_properties(props)) for field_name, kind, props in rows]
        tables[name.lower()] = TableInfo(name, columns)
    return tables


def quote(identifier: str) -> str:
    """A name read from the catalog, as a MySQL identifier (never user text: that is checked first)."""
    return "`" + identifier.replace("`", "``") + "`"
