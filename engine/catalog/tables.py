"""What the engine knows about a table: its columns, their types, and its vector columns."""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from tesseradb.storage.chunk_table import ColumnLayout

from tesseradb.catalog.vector_columns import VECTOR_TYPES, VectorSpec

if TYPE_CHECKING:
    from tesseradb.grammar.nodes import ColumnDef


@dataclass(frozen=True)
class Column:
    name: str
    type: str
    type_text: str
    options: tuple[tuple[str, str], ...] = ()
    constraints: tuple[tuple[str, Any], ...] = ()   # MySQL column constraints (grammar.ast.ColumnDef)


def _constraints(data: list) -> tuple[tuple[str, Any], ...]:
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in data)


@dataclass
class Table:
    name: str
    columns: list[Column]                       # id first
    vectors: dict[str, VectorSpec] = field(default_factory=dict)   # column (lower) -> spec, knn columns
    chunk_tables: dict[str, str] = field(default_factory=dict)     # column (lower) -> chunk table name
    options: dict[str, str] = field(default_factory=dict)          # table options (morphology='stem_en')
    #: False for a table of a release before MySQL dates (its catalog entry has no "mysql_dates"):
    #: catalog/date_upgrade.py converts such a table once; every table made since is left as declared.
    mysql_dates: bool = True

    def column(self, name: str) -> Column | None:
        low = name.lower()
        return next((c for c in self.columns if c.name.lower() == low), None)

    def is_vector(self, name: str) -> bool:
        col = self.column(name)
        return col is not None and col.type in VECTOR_TYPES

    def layout(self, column: str) -> ColumnLayout:
        spec = self.vectors[column.lower()]
        return ColumnLayout(table=self.name, column=self.column(column).name,
                            chunks=self.chunk_tables[column.lower()], is_array=spec.is_array,
                            dims=spec.dims, metric=spec.similarity, hnsw_m=spec.hnsw_m,
                            ef_construction=spec.hnsw_ef_construction,
                            quantization=spec.quantization or "none")

    def layouts(self) -> list[ColumnLayout]:
        return [self.layout(c) for c in self.vectors]

    def model_columns(self) -> list[VectorSpec]:
        return [s for s in self.vectors.values() if s.model_name]

    # -- catalog form ------------------------------------------------------------------------
    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "columns": [[c.name, c.type, c.type_text, [list(o) for o in c.options]]
                        + ([[list(x) for x in c.constraints]] if c.constraints else []) for c in self.columns],
            "vectors": {k: asdict(v) for k, v in self.vectors.items()},
            "chunk_tables": self.chunk_tables,
            "options": self.options,
            "mysql_dates": self.mysql_dates,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Table":
        columns = [Column(n, t, tt, tuple(tuple(o) for o in opts), _constraints(rest[0]) if rest else ())
                   for n, t, tt, opts, *rest in data["columns"]]
        vectors = {k: VectorSpec(**{**v, "from_columns": tuple(v["from_columns"]),
                                     "model_options": tuple(tuple(o) for o in v.get("model_options", ()))})
                   for k, v in data["vectors"].items()}
        return cls(data["name"], columns, vectors, dict(data["chunk_tables"]), dict(data.get("options", {})),
                   bool(data.get("mysql_dates", False)))


ID_COLUMN = Column("id", "bigint", "bigint")


def column_from_def(d: ColumnDef) -> Column:
    return Column(d.name, d.type, d.type_text, d.options, d.constraints)
