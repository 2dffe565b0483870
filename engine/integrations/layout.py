"""The table behind a framework's store: which column plays which part, read from the table itself.

A store names its columns by role (the caller's id, the text, the json metadata, the vector columns);
every other plain column takes the metadata key of its own name. Names are checked identifiers before
they go into SQL, and the options pasted into a CREATE TABLE are checked values (a model name of
path characters, a strategy from the engine's list, integers): nothing a document carries ever becomes
SQL text.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import tesseradb

DEFAULT_MODEL = "Xenova/all-MiniLM-L6-v2"     # the engine's default model (docs/models.md)
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
MODEL_NAME = re.compile(r"[A-Za-z0-9_./:@+-]+\Z")
STRATEGIES = ("truncate", "mean", "fixed", "recursive", "sentence")
SIMILARITIES = ("cosine", "l2", "ip")
NO_SUCH_TABLE = 1146


def identifier(name: str, what: str = "name") -> str:
    """``name`` quoted for SQL, after checking it is a plain identifier."""
    if not isinstance(name, str) or not IDENTIFIER.match(name):
        raise ValueError(f"{what} {name!r} must be a plain identifier (letters, digits, _; not starting "
                         "with a digit)")
    return f"`{name}`"


@dataclass(frozen=True)
class VectorColumn:
    name: str
    type: str                      # float_vector or float_vector_array
    model: str | None = None       # model_name: the engine embeds the `from` columns
    dims: int | None = None        # knn_dims for supplied vectors
    similarity: str = "cosine"

    @property
    def sql(self) -> str:
        return identifier(self.name)


@dataclass
class Layout:
    """A table and its columns' roles. ``extra``: metadata key -> the column that holds it."""
    table: str
    id: str
    content: str
    metadata: str
    vectors: dict[str, VectorColumn]
    extra: dict[str, str] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)

    @property
    def sql(self) -> str:
        return identifier(self.table)

    def col(self, name: str) -> str:
        return identifier(name)

    def qualified(self, name: str) -> str:
        """``table.column``: a query's column is never taken for one of the search's own (the knn()
        join has a ``doc_id``)."""
        return f"{self.sql}.{identifier(name)}"

    def extra_sql(self) -> dict[str, str]:
        return {key: self.qualified(column) for key, column in self.extra.items()}


def model_column(name: str, source: str, model: str, chunk_strategy: str, max_tokens: int,
                 overlap_tokens: int) -> str:
    """A model-backed float_vector_array column definition from checked settings."""
    if not isinstance(model, str) or not MODEL_NAME.match(model):
        raise ValueError(f"model {model!r} is not a model name")
    strategy = str(chunk_strategy).lower()
    if strategy not in STRATEGIES:
        raise ValueError(f"chunk_strategy {chunk_strategy!r} is not one of {', '.join(STRATEGIES)}")
    sizes = "" if strategy in ("truncate", "mean") else (
        f" max_tokens='{int(max_tokens)}' overlap_tokens='{int(overlap_tokens)}'")
    return (f"{identifier(name)} float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
            f"model_name='{model}' from='{source}' chunk_strategy='{strategy}'{sizes}")


def supplied_column(name: str, dims: int, similarity: str = "cosine", array: bool = False) -> str:
    """A float_vector (or float_vector_array) column for vectors the caller supplies."""
    if isinstance(dims, bool) or not isinstance(dims, int) or dims <= 0:
        raise ValueError(f"vector dimensions must be a positive integer, not {dims!r}")
    if similarity not in SIMILARITIES:
        raise ValueError(f"similarity {similarity!r} is not one of {', '.join(SIMILARITIES)}")
    kind = "float_vector_array" if array else "float_vector"
    return f"{identifier(name)} {kind} knn_type='hnsw' knn_dims='{dims}' hnsw_similarity='{similarity}'"


def ensure_table(con: tesseradb.Connection, table: str, create: list[str], id_column: str) -> None:
    """Run ``create`` (CREATE TABLE and friends) when ``table`` is missing; the id column always gets
    its unique index, so an id names one row."""
    if read_table(con, table) is None:
        for statement in create:
            con.execute(statement)
    con.execute(f"CREATE UNIQUE INDEX IF NOT EXISTS {identifier(table + '_' + id_column + '_key')} "
                f"ON {identifier(table)} ({identifier(id_column)})")
    con.commit()


def read_table(con: tesseradb.Connection, table: str) -> tesseradb.TableInfo | None:
    """The table's catalog entry (``Connection.describe``), or None when it does not exist."""
    identifier(table, "table")
    try:
        return con.describe(table)
    except tesseradb.ProgrammingError as exc:
        if getattr(exc, "errno", None) == NO_SUCH_TABLE:
            return None
        raise


def read_layout(con: tesseradb.Connection, table: str, *, id: str, content: str, metadata: str,
                reserved: tuple[str, ...] = ()) -> Layout:
    """The roles of ``table``'s columns, from its catalog entry; a role column that is missing or of
    the wrong type is a ValueError that says which."""
    info = read_table(con, table)
    if info is None:
        raise ValueError(f"table {table!r} does not exist")
    types = {c.name: c.type for c in info.columns}
    vectors = {c.name: VectorColumn(c.name, c.type, c.vector.model, c.vector.dims if c.vector.model is None else None,
                                    c.vector.similarity or "cosine")
               for c in info.vector_columns if c.vector is not None and c.vector.knn_type is not None}
    _expect(types, table, id, ("string", "text"), "the id column")
    _expect(types, table, content, ("text", "string"), "the text column")
    _expect(types, table, metadata, ("json",), "the metadata column")
    taken = {"id", id, content, metadata, *vectors, *reserved}
    extra = {c.name: c.name for c in info.columns if c.name not in taken and not c.is_vector}
    return Layout(table, id, content, metadata, vectors, extra, types)


def _expect(types: dict[str, str], table: str, column: str, kinds: tuple[str, ...], role: str) -> None:
    if types.get(column) not in kinds:
        found = f"is {types[column]}" if column in types else "does not exist"
        raise ValueError(f"{role} {column!r} of table {table!r} {found}; it must be {' or '.join(kinds)}")
