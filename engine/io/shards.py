"""Embedded shards: Parquet files that carry a model column's vectors next to the source rows.

``tessera embed`` (``tesseradb.io.distributed``) writes them; ``LOAD DATA INFILE 'shards/*.parquet'``
stores them without running the model, but only into a column whose model fingerprint and chunk
settings are exactly those the shard was made with (vectors of another model, or of other chunks,
would silently mix with the column's own). A shard is a Parquet file whose schema metadata holds
``tesseradb.shard`` (JSON: the settings below, the format version) and whose columns are

* the input's columns, unchanged, ``id`` among them;
* the vector column (named as in the table): ``list<fixed_size_list<float32, dims>>``, one vector per chunk;
* ``__tessera_spans``: ``list<struct<start: int64, end: int64>>``, each chunk's character span of
  the source text (the ``from`` columns joined with one space), as the engine's own chunks.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields
from typing import Any

import numpy as np
import pyarrow as pa

from tesseradb import embed, errors
from tesseradb.catalog.tables import Column, Table
from tesseradb.embed.chunk_context import Located, embedded_text, locate_spans
from tesseradb.embed.remote import secrets
from tesseradb.embed.reuse import chunk_key
from tesseradb.embed.rows import Embedded, source_text, source_title
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.io.formats import BATCH_ROWS, BadRow, Batch, columns_for, convert, pick, read_parquet
from tesseradb.catalog.vector_columns import VectorSpec

METADATA_KEY = b"tesseradb.shard"
FORMAT = 1
SPANS = "__tessera_spans"
SPAN_TYPE = pa.list_(pa.struct([("start", pa.int64()), ("end", pa.int64())]))
# What must agree between a shard and the column it is loaded into, and how each is shown.
COMPARED = ("model_fingerprint", "dims", "from_columns", "chunk_strategy", "max_tokens", "overlap_tokens",
            "max_chunks", "chunk_context")


@dataclass(frozen=True)
class EmbedSettings:
    """A model column's identity and chunk settings: what a shard's vectors were made with."""

    column: str
    model_name: str
    model_fingerprint: str
    dims: int
    from_columns: tuple[str, ...]
    chunk_strategy: str = "truncate"
    max_tokens: int = 0
    overlap_tokens: int = 0
    max_chunks: int = 0
    chunk_context: str = "none"
    # the column's model options (prefixes, pooling, dims, the remote endpoint's settings), so workers
    # embed exactly as the column does; an api_key only as an ``env:NAME`` reference (travelling_options)
    model_options: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_spec(cls, spec: VectorSpec, *, workers: bool = False, api_key_env: str | None = None) -> EmbedSettings:
        """The column's settings; ``workers``: to be sent to workers (its api_key only as ``env:NAME``,
        else refused), otherwise to compare with a shard's (a literal api_key left out)."""
        if not spec.model_name or not spec.model_fingerprint:
            raise UserError(f"column '{spec.column}' has no model_name: its vectors are supplied, not embedded",
                            errors.ProgrammingError)
        return cls(spec.column, spec.model_name, spec.model_fingerprint, spec.dims, tuple(spec.from_columns),
                   spec.chunk_strategy, spec.max_tokens, spec.overlap_tokens, spec.max_chunks, spec.chunk_context,
                   travelling_options(spec.column, spec.model_options, api_key_env) if workers else
                   tuple((k, v) for k, v in spec.model_options if k.lower() != "api_key" or secrets.is_env_ref(v)))

    def to_json(self) -> bytes:
        return json.dumps({"format": FORMAT, **asdict(self)}, sort_keys=True).encode()

    @classmethod
    def from_json(cls, raw: bytes, path: str) -> EmbedSettings:
        try:
            data = json.loads(raw)
            if data.get("format") != FORMAT:
                raise ValueError(f"format {data.get('format')!r}, this version reads {FORMAT}")
            later = {"chunk_context": "none", "model_options": ()}          # shards of earlier releases
            values = {f.name: data[f.name] for f in fields(cls) if f.name not in later}
            values.update({k: data.get(k, default) for k, default in later.items()})
            values["from_columns"] = tuple(values["from_columns"])
            values["model_options"] = tuple((str(k), str(v)) for k, v in values["model_options"])
            return cls(**values)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise UserError(f"'{path}': unreadable tesseradb shard metadata ({exc})", errors.DataError) from None

    def describe(self) -> str:
        return (f"model_name='{self.model_name}' (fingerprint {self.model_fingerprint[:12]}), {self.dims} dims, "
                f"from='{','.join(self.from_columns)}' chunk_strategy='{self.chunk_strategy}' "
                f"max_tokens={self.max_tokens} overlap_tokens={self.overlap_tokens} max_chunks={self.max_chunks}")

    def differences(self, other: EmbedSettings) -> list[str]:
        def norm(name: str, value: Any) -> Any:
            return tuple(v.lower() for v in value) if name == "from_columns" else value
        return [n for n in COMPARED if norm(n, getattr(self, n)) != norm(n, getattr(other, n))]


def travelling_options(column: str, options: tuple[tuple[str, str], ...] | list,
                       api_key_env: str | None = None) -> tuple[tuple[str, str], ...]:
    """A column's model options as they may travel to workers and into shard files: a literal
    ``api_key`` never does. ``api_key='env:NAME'`` travels as it is (each worker reads NAME from its own
    environment); a literal key is replaced by ``env:<api_key_env>`` when the run names a variable,
    else the run is refused."""
    out = []
    for name, value in options:
        if name.lower() == "api_key" and api_key_env:
            value = secrets.ENV_PREFIX + api_key_env
        elif name.lower() == "api_key" and value and not secrets.is_env_ref(value):
            if not api_key_env:
                raise UserError(f"column '{column}' holds its api_key literally, and a key is never written into "
                                f"shards or sent to workers; give the workers the key in an environment variable "
                                f"and name it (tessera embed --api-key-env NAME, api_key_env='NAME'), or store "
                                f"the column's key as api_key='env:NAME'", errors.ProgrammingError)
        out.append((name, value))
    return tuple(out)


def vector_type(dims: int) -> pa.DataType:
    return pa.list_(pa.list_(pa.float32(), dims))


def attach(table: pa.Table, settings: EmbedSettings, embedded: list[Embedded]) -> pa.Table:
    """``table`` (the source rows) with the vector and span columns and the shard metadata."""
    flat = np.concatenate([e.vectors for e in embedded]) if embedded else np.empty((0, settings.dims), np.float32)
    counts = np.array([0] + [len(e.vectors) for e in embedded], np.int32).cumsum(dtype=np.int32)
    inner = pa.FixedSizeListArray.from_arrays(pa.array(flat.reshape(-1), pa.float32()), settings.dims)
    vectors = pa.ListArray.from_arrays(pa.array(counts), inner)
    spans = pa.array([[{"start": s, "end": e} for s, e in emb.spans] for emb in embedded], SPAN_TYPE)
    out = table.append_column(pa.field(settings.column, vector_type(settings.dims)), vectors)
    out = out.append_column(pa.field(SPANS, SPAN_TYPE), spans)
    return out.replace_schema_metadata({**(table.schema.metadata or {}), METADATA_KEY: settings.to_json()})


def header(path: str) -> EmbedSettings | None:
    """The settings a Parquet file was embedded with, or None when it is not a shard."""
    import pyarrow.parquet as pq
    try:
        metadata = pq.read_schema(path).metadata or {}
    except (pa.ArrowException, OSError):
        return None  # the plain Parquet reader reports what is wrong with the file
    raw = metadata.get(METADATA_KEY)
    return None if raw is None else EmbedSettings.from_json(raw, path)


def check(shard: EmbedSettings, table: Table, path: str) -> VectorSpec:
    """The column the shard's vectors go to; a clear error unless its model and chunks are the shard's."""
    spec = table.vectors.get(shard.column.lower())
    if spec is None or not spec.model_name:
        raise UserError(f"'{path}' holds vectors for a model column '{shard.column}', which table "
                        f"'{table.name}' does not have", errors.ProgrammingError)
    mine = EmbedSettings.from_spec(spec)
    different = shard.differences(mine)
    if different:
        verb = "differs" if len(different) == 1 else "differ"
        raise UserError(
            f"'{path}' was embedded with {shard.describe()}, but column '{spec.column}' of table "
            f"'{table.name}' has {mine.describe()} ({', '.join(different)} {verb}); its vectors would not "
            f"match the column's. Embed the source again with the column's settings (tessera embed --database "
            f"DB --table {table.name} --column {spec.column}), or load it without the vector columns",
            errors.DataError)
    return spec


def load_batches(path: str, table: Table, stmt: ast.LoadData, shard: EmbedSettings,
                 spec: VectorSpec) -> Iterator[tuple[Batch, list[Column], list[list[Any]]]]:
    """Batches of the shard as (batch, columns, rows) for the write path: source columns converted like
    any Parquet file's, and the model column's value an ``Embedded`` (vectors and spans as stored)."""
    import pyarrow.parquet as pq
    names = [n for n in pq.read_schema(path).names if n.lower() not in (shard.column.lower(), SPANS)]
    wanted = list(stmt.columns) if stmt.columns else names
    vector_col = table.column(spec.column)
    stored = _Stored(pq.ParquetFile(path), shard)
    for batch in read_parquet(path, wanted):
        columns, positions = columns_for(table, batch, stmt, ".parquet")
        batch = pick(batch, positions)
        rows = convert(columns, batch, native_json=False)
        names = [c.name.lower() for c in columns]
        missing = [f for f in spec.from_columns if f.lower() not in names]
        if missing:  # the stored vectors are of the text these columns make: they must be stored too
            raise BadRow(f"the column list leaves out '{missing[0]}', a column the shard's vectors were "
                         f"embedded from (from='{','.join(spec.from_columns)}')", kind=errors.ProgrammingError)
        texts = [source_text(spec, dict(zip(names, row))) for row in rows]
        titles = [source_title(spec, dict(zip(names, row))) for row in rows]
        embedded = [_keyed(spec, text, title, emb, line)
                    for text, title, emb, line in zip(texts, titles, stored.take(batch.lines), batch.lines)]
        yield batch, columns + [vector_col], [row + [emb] for row, emb in zip(rows, embedded)]


class _Stored:
    """The shard's vectors and spans, read in step with its source columns (same rows, same order)."""

    def __init__(self, parquet: Any, shard: EmbedSettings):
        self.shard = shard
        self.batches = parquet.iter_batches(batch_size=BATCH_ROWS, columns=[shard.column, SPANS])
        self.pending: list[Embedded] = []

    def take(self, lines: list[int]) -> list[Embedded]:
        while len(self.pending) < len(lines):
            chunk = next(self.batches)
            first = lines[0] + len(self.pending)
            self.pending += [self._row(chunk, i, first + i) for i in range(len(chunk))]
        out, self.pending = self.pending[:len(lines)], self.pending[len(lines):]
        return out

    def _row(self, chunk: pa.RecordBatch, i: int, line: int) -> Embedded:
        matrix = _matrix(chunk.column(0)[i], self.shard.dims, line, self.shard.column)
        pairs = [(int(s["start"]), int(s["end"])) for s in (chunk.column(1)[i].as_py() or [])]
        if len(pairs) != len(matrix):
            raise BadRow(f"{len(matrix)} vectors but {len(pairs)} chunk spans", line, self.shard.column)
        return Embedded(matrix, pairs)


def _matrix(value: pa.Scalar, dims: int, line: int, column: str) -> np.ndarray:
    inner = value.values if value.is_valid else None
    if inner is None or len(inner) == 0:
        return np.empty((0, dims), np.float32)
    flat = inner.flatten().to_numpy(zero_copy_only=False).astype(np.float32, copy=False)
    if flat.size != len(inner) * dims or not np.isfinite(flat).all():
        raise BadRow(f"vectors must be finite and {dims}-dimensional", line, column)
    return flat.reshape(len(inner), dims)


def _keyed(spec: VectorSpec, text: str, title: str | None, emb: Embedded, line: int) -> Embedded:
    """The stored vectors with spans checked against the source text, each chunk's heading path and
    context (embed.chunk_context), and its reuse key (embed.reuse: the vector is the model's for exactly
    that text, context line included; none for a ``mean`` average)."""
    for start, end in emb.spans:
        if start is None or end is None or not 0 <= start <= end <= len(text):
            raise BadRow(f"chunk span ({start}, {end}) is outside the source text of {len(text)} characters",
                         line, spec.column)
    located = locate_spans(embed.get_model(spec.model_name, embed.ModelOptions.parse(dict(spec.model_options))), text, emb.spans, max_tokens=spec.max_tokens,
                           chunk_context=spec.chunk_context, title=title)
    if spec.chunk_strategy == "mean":
        return Embedded(emb.vectors, emb.spans, [None] * len(emb.spans),
                        [Located(w.heading, w.section, None) for w in located])
    keys = [chunk_key(spec.model_fingerprint, embedded_text(w.context, text[s:e]))
            for (s, e), w in zip(emb.spans, located)]
    return Embedded(emb.vectors, emb.spans, keys, located)
