"""The public catalog: ``Connection.tables()`` and ``Connection.describe(table)`` (docs/dbapi.md#the-catalog).

Frozen dataclasses built from the engine's catalog (``catalog/tables.py``: the columns as declared,
``VectorSpec``: a vector column's options) and from SQLite's own schema (``mysql/schema_info.py``:
keys, NOT NULL, defaults), never from SQL text: what DESCRIBE and SHOW CREATE TABLE print, as values a
program reads. Clients (the integrations, ``tessera mcp``, ``tessera serve``) read a table's layout here.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tesseradb.catalog import tables as catalog_tables
from tesseradb.catalog.vector_columns import VECTOR_TYPES, VectorSpec
from tesseradb.sql.database import Database
from tesseradb.sql.mysql import row_id

if TYPE_CHECKING:
    from tesseradb.sql.mysql import schema_info
# the statement handlers and SQLite's schema reader load with the first describe(), not with the
# connection (tests/architecture/test_startup_imports.py)


@dataclass(frozen=True)
class Chunking:
    """How a model-backed vector column cuts its text before embedding (docs/chunking.md)."""
    strategy: str                 # truncate, mean, fixed, recursive, sentence, markdown
    max_tokens: int               # 0: the model's limit
    overlap_tokens: int
    max_chunks: int               # 0: no limit
    context: str                  # chunk_context: none or heading
    passage_units: str = "none"   # none or windows: each chunk's pieces embedded too (docs/passages.md)


@dataclass(frozen=True)
class VectorInfo:
    """A vector column's index and, when the engine embeds it, its model (docs/vector_columns.md)."""
    is_array: bool                # float_vector_array: several vectors (chunks) per row
    knn_type: str | None          # 'hnsw'; None: a vector column without a knn index
    dims: int | None
    similarity: str | None        # l2, ip, cosine
    hnsw_m: int | None
    hnsw_ef_construction: int | None
    quantization: str | None      # None, '8bit' or '1bit'
    model: str | None             # model_name as written in CREATE TABLE (None: vectors are supplied)
    model_name: str | None        # the model it resolved to
    from_columns: tuple[str, ...]  # the columns whose text is embedded
    chunking: Chunking | None     # None when no model embeds the column

    @property
    def model_backed(self) -> bool:
        """The engine embeds the column itself: a query text can search it."""
        return self.model is not None


@dataclass(frozen=True)
class FullText:
    """What full-text search makes of a text or string column (DESCRIBE's properties)."""
    indexed: bool                 # MATCH() searches it
    stored: bool                  # kept as text that SELECT returns
    attribute: bool               # a string attribute (filters and sorts; indexed too when declared so)


@dataclass(frozen=True)
class ColumnInfo:
    """One column as declared: ``type`` is the engine's canonical type (bigint, text, string, json,
    float_vector ...), ``declared_type`` MySQL's lower-case spelling of what CREATE TABLE said."""
    name: str
    position: int                 # 1-based, the implicit or declared id first
    type: str
    declared_type: str
    nullable: bool
    default: Any                  # as SHOW COLUMNS reports it (None: no default)
    primary_key: bool
    unique: bool                  # the primary key, or a UNIQUE key of this column alone
    auto_increment: bool
    comment: str
    vector: VectorInfo | None = None
    full_text: FullText | None = None

    @property
    def is_vector(self) -> bool:
        return self.type in VECTOR_TYPES


@dataclass(frozen=True)
class KeyInfo:
    """A UNIQUE key of one or more columns, as MySQL names it."""
    name: str
    columns: tuple[str, ...]


@dataclass(frozen=True)
class TableInfo:
    name: str
    columns: tuple[ColumnInfo, ...]
    primary_key: tuple[str, ...]      # the id, or the column declared PRIMARY KEY (read as the id)
    unique_keys: tuple[KeyInfo, ...]
    options: Mapping[str, str]        # table options (morphology, comment ...)
    schema: str                       # its CREATE TABLE statement, as SHOW CREATE TABLE prints it

    def column(self, name: str) -> ColumnInfo | None:
        """The column called ``name`` (any case), or None."""
        low = name.lower() if isinstance(name, str) else None
        return next((c for c in self.columns if c.name.lower() == low), None)

    @property
    def columns_dict(self) -> dict[str, str]:
        """{name: type}, as sqlite-utils' ``Table.columns_dict``."""
        return {c.name: c.type for c in self.columns}

    @property
    def vector_columns(self) -> tuple[ColumnInfo, ...]:
        return tuple(c for c in self.columns if c.is_vector)

    @property
    def full_text_columns(self) -> tuple[ColumnInfo, ...]:
        """The columns MATCH() searches."""
        return tuple(c for c in self.columns if c.full_text is not None and c.full_text.indexed)


def table_names(db: Database) -> list[str]:
    db.sync_catalog()
    return sorted((t.name for t in db.tables.values()), key=str.lower)


def describe(db: Database, name: str) -> TableInfo:
    """The table called ``name`` (any case); ERROR 1146 when there is none."""
    from tesseradb.sql.mysql import schema_info
    from tesseradb.sql.statements.ddl import show_create
    db.sync_catalog()
    table = db.table(name)
    infos = schema_info.column_infos(db, table)
    declared = any("primary_key" in dict(c.constraints or ()) for c in table.columns[1:])
    columns = tuple(_column(table, col, info, declared) for col, info in zip(table.columns, infos))
    keys = tuple(KeyInfo(k.name, tuple(k.columns)) for k in schema_info.unique_keys(db, table))
    primary = tuple(c.name for c in columns if c.primary_key)
    schema = show_create(db, table).rows[0][1]
    return TableInfo(table.name, columns, primary, keys, dict(table.options), schema)


def _column(table: catalog_tables.Table, col: catalog_tables.Column, info: schema_info.ColumnInfo,
            declared: bool) -> ColumnInfo:
    """``declared``: a column other than the id was declared PRIMARY KEY (a string key, say): it is the
    table's primary key, and the id beside it is the engine's document id."""
    from tesseradb.sql.statements.describe import declared_type
    primary = "primary_key" in dict(col.constraints or ()) if declared else info.key == "PRI"
    spec = table.vectors.get(col.name.lower())
    vector = _vector(spec) if spec is not None else (
        _unindexed(col.type) if col.type in VECTOR_TYPES else None)
    return ColumnInfo(
        name=info.name, position=info.position, type=col.type, declared_type=declared_type(table, col),
        nullable=info.nullable and not primary, default=info.default, primary_key=primary,
        unique=primary or info.key in ("PRI", "UNI"), auto_increment=info.extra == "auto_increment",
        comment=info.comment, vector=vector, full_text=_full_text(table, col))


def _vector(spec: VectorSpec) -> VectorInfo:
    model = spec.model_text or spec.model_name
    chunking = None if model is None else Chunking(spec.chunk_strategy, spec.max_tokens, spec.overlap_tokens,
                                                   spec.max_chunks, spec.chunk_context, spec.passage_units)
    return VectorInfo(is_array=spec.is_array, knn_type=spec.knn_type, dims=spec.dims, similarity=spec.similarity,
                      hnsw_m=spec.hnsw_m, hnsw_ef_construction=spec.hnsw_ef_construction,
                      quantization=spec.quantization, model=model, model_name=spec.model_name,
                      from_columns=tuple(spec.from_columns), chunking=chunking)


def _unindexed(type_: str) -> VectorInfo:
    """A vector column without knn_type: stored, not searchable by knn()."""
    return VectorInfo(is_array=type_ == "float_vector_array", knn_type=None, dims=None, similarity=None,
                      hnsw_m=None, hnsw_ef_construction=None, quantization=None, model=None, model_name=None,
                      from_columns=(), chunking=None)


def _full_text(table: catalog_tables.Table, col: catalog_tables.Column) -> FullText | None:
    from tesseradb.sql.statements.describe import text_flags
    if col is table.columns[0] and row_id.alias(table) is None:
        return None
    flags = text_flags(col).split()
    if not flags:
        return None
    return FullText(indexed="indexed" in flags, stored="stored" in flags, attribute="attribute" in flags)
