"""Distributed ingest on Ray Data: documents in, embedded Parquet shards out (``tessera embed``).

    from tesseradb.io import distributed
    settings = distributed.settings_of("docs.db", "docs", "chunks")      # the column's exact settings
    distributed.embed_to_parquet("s3://bucket/docs/*.parquet", "s3://bucket/shards/", settings)

then ``LOAD DATA INFILE 'shards/*.parquet' INTO TABLE docs`` stores rows and vectors without running
the model (``tesseradb.io.shards`` checks that the shard's model and chunk settings are the column's).

The pipeline is Ray Data's: ``read_parquet`` / ``read_json`` / ``read_csv`` (any filesystem pyarrow
reads: local, S3, GCS, HDFS, ...) -> ``map_batches`` with :class:`ChunkEmbedder`, a callable class,
so each worker actor loads the model once and keeps its onnxruntime session -> ``write_parquet``.
Chunking and embedding are the engine's own functions (``embed.planning``, ``embed.rows``), so a
shard's chunks and vectors are those an INSERT would make. Ray restarts a worker that dies and runs
its batch again (Ray Data's defaults for actors: ``max_restarts=-1``, ``max_task_retries=-1``).
``ray`` is an optional dependency: ``pip install 'tesseradb[ray]'``.
"""
from __future__ import annotations

import glob
import os
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from tesseradb import embed, errors
from tesseradb.catalog.tables import Table
from tesseradb.embed.rows import check_text, cut_text, embed_plans, source_text, source_title
from tesseradb.errors import UserError
from tesseradb.io.shards import SPANS, EmbedSettings, attach
from tesseradb.storage import catalog
from tesseradb.storage.rowstore import RowStore
from tesseradb.catalog.vector_columns import validate_columns

READERS = {".parquet": "parquet", ".jsonl": "json", ".ndjson": "json", ".json": "json", ".csv": "csv"}
BATCH_ROWS = 64          # documents per map_batches call: a few hundred chunks, the model's batches fill
# Reading and writing files claim no CPU of their own: the workers' model sessions use the CPUs, and a
# read task waiting for a CPU that the workers hold would stall the pipeline (2 CPUs, 2 workers).
IO_TASKS = {"num_cpus": 0}


@dataclass(frozen=True)
class Summary:
    """What one run did: documents and chunks embedded, shards written, seconds, workers used."""

    documents: int
    chunks: int
    files: int
    seconds: float
    workers: int
    output: str


def settings_of(database: str, table: str, column: str, *, api_key_env: str | None = None) -> EmbedSettings:
    """The model and chunk settings of ``table.column`` in the tesseradb file ``database``, its model
    options among them (an api_key only as ``env:NAME``: ``api_key_env`` names the workers' variable
    for a column that holds its key literally)."""
    if not os.path.isfile(database):
        raise errors.OperationalError(f"database file '{database}' not found")
    store = RowStore(database)
    try:
        tables = {k.lower(): Table.from_json(v) for k, v in catalog.load_all(store).items()}
    finally:
        store.close()
    found = tables.get(table.lower())
    if found is None:
        raise errors.NoSuchTable(f"table '{table}' does not exist in '{database}'")
    spec = found.vectors.get(column.lower())
    if spec is None:
        raise errors.NoSuchColumn(f"table '{table}' has no vector column '{column}'")
    try:
        return EmbedSettings.from_spec(spec, workers=True, api_key_env=api_key_env)
    except UserError as exc:
        raise exc.kind(exc.msg, fields=exc.fields) from None


def settings_for(column: str, model_name: str, from_columns: Sequence[str], *, chunk_strategy: str = "truncate",
                 max_tokens: int = 0, overlap_tokens: int = 0, max_chunks: int = 0,
                 chunk_context: str | None = None, model_options: dict[str, str] | None = None,
                 api_key_env: str | None = None) -> EmbedSettings:
    """Settings given as in CREATE TABLE, checked by the same rules (and error texts) as the DDL;
    ``model_options``: the column's query_prefix, document_prefix, pooling, dims, api_url, ..."""
    options = {"knn_type": "hnsw", "hnsw_similarity": "cosine", "model_name": model_name,
               "from": ",".join(from_columns)}
    options.update({k.lower(): str(v) for k, v in (model_options or {}).items()})
    if chunk_strategy != "truncate" or max_tokens or overlap_tokens or max_chunks:
        options.update(chunk_strategy=chunk_strategy)
        options.update({k: str(v) for k, v in (("max_tokens", max_tokens), ("overlap_tokens", overlap_tokens),
                                               ("max_chunks", max_chunks)) if v})
    if chunk_context is not None:
        options.update(chunk_context=chunk_context)
    kind = "float_vector" if chunk_strategy in ("truncate", "mean") else "float_vector_array"
    columns = [(name, "text", {}) for name in from_columns] + [(column, kind, options)]

    def resolve(name: str, model_options: dict[str, str]) -> tuple[str, str, int]:
        info = embed.resolve(name, embed.ModelOptions.parse(model_options))
        return info.name, info.fingerprint, info.dims

    try:
        spec = validate_columns("embed", columns, resolve_model=resolve)[column.lower()]
    except UserError as exc:
        raise exc.kind(exc.msg, fields=exc.fields) from None
    except embed.ModelError as exc:
        raise errors.ModelError(str(exc)) from None
    try:
        return EmbedSettings.from_spec(spec, workers=True, api_key_env=api_key_env)
    except UserError as exc:
        raise exc.kind(exc.msg, fields=exc.fields) from None


class ChunkEmbedder:
    """A Ray Data worker: loads the model once, with the column's model options (a remote model's
    ``env:`` key read from the worker's own environment), then chunks and embeds each batch."""

    def __init__(self, settings: dict, id_column: str = "id", threads: int | None = None):
        self.settings = _settings(settings)
        self.id_column = id_column
        self.model = worker_model(self.settings)
        if not embed.is_remote(self.settings.model_name):
            self.model.threads = threads
            self.model.session()

    def __call__(self, batch: pa.Table) -> pa.Table:
        batch = _with_id(batch, self.id_column)   # the columns were checked before the run (_check_columns)
        s = self.settings
        names = {n.lower(): n for n in batch.column_names}
        values = {c.lower(): batch.column(names[c.lower()]).to_pylist() for c in s.from_columns}
        rows = [{c: values[c][i] for c in values} for i in range(batch.num_rows)]
        texts = [source_text(s, row) for row in rows]
        ids = batch.column("id").to_pylist()
        cuts, pieces = [], []
        for doc_id, text, row in zip(ids, texts, rows):
            check_text(text, f"id {doc_id}")
            cut = cut_text(self.model, s, text, source_title(s, row))       # with its context lines
            cuts.append(cut)
            pieces += cut.pieces(text, cut.located(text), self.model)
        return attach(batch, s, embed_plans(self.model, s.chunk_strategy, texts, [c.plan for c in cuts], pieces=pieces))


def _settings(settings: dict) -> EmbedSettings:
    return EmbedSettings(**{**settings, "from_columns": tuple(settings["from_columns"]),
                            "model_options": tuple(map(tuple, settings.get("model_options", ())))})


def worker_model(settings: EmbedSettings) -> Any:
    """The column's model as a worker opens it: with the column's model options, a remote model's
    ``env:`` key read from this process's environment; its fingerprint must be the column's."""
    try:
        model = embed.model_for(settings.model_name, embed.ModelOptions.parse(dict(settings.model_options)))
    except UserError as exc:
        raise exc.kind(exc.msg, fields=exc.fields) from None
    except embed.ModelError as exc:
        raise errors.ModelError(str(exc)) from None
    if model.fingerprint != settings.model_fingerprint:
        raise errors.DataError(f"model '{settings.model_name}' on this worker has fingerprint "
                               f"{model.fingerprint}, not the column's {settings.model_fingerprint}")
    return model


def _check_worker(settings: dict) -> None:
    """Run as a Ray task before the workers start: the model opens on the cluster as the column's."""
    worker_model(_settings(settings))


def _with_id(batch: pa.Table, id_column: str) -> pa.Table:
    """The batch with its id column named ``id`` (the table's implicit primary key)."""
    names = batch.column_names
    if id_column != "id":
        if "id" in names:
            raise errors.ProgrammingError(f"the input has both 'id' and the id column '{id_column}'")
        batch = batch.rename_columns(["id" if n == id_column else n for n in names])
    return batch


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise errors.NotSupportedError("distributed ingest needs Ray: pip install 'tesseradb[ray]'") from exc
    return ray


def _reader(source: str | Sequence[str], fmt: str | None) -> str:
    if fmt is not None:
        if fmt not in ("parquet", "json", "jsonl", "csv"):
            raise errors.ProgrammingError(f"unknown input format '{fmt}'; expected parquet, jsonl or csv")
        return "json" if fmt == "jsonl" else fmt
    first = source if isinstance(source, str) else (source[0] if source else "")
    ext = os.path.splitext(first.rstrip("/"))[1].lower()
    if ext not in READERS:
        raise errors.ProgrammingError(f"cannot tell the format of '{first}' from its name; "
                                      "give fmt='parquet', 'jsonl' or 'csv'")
    return READERS[ext]


def expand_local_glob(source: str | Sequence[str]) -> str | list[str]:
    """A local glob ('docs/*.parquet') as the files it matches, in name order (Ray Data's readers take
    files and folders, not patterns); a URI or a plain path is left as it is."""
    if not isinstance(source, str) or "://" in source or not glob.has_magic(source):
        return source
    files = sorted(p for p in glob.glob(source) if os.path.isfile(p))
    if not files:
        raise errors.OperationalError(f"no file matches '{source}'")
    return files


def read(source: str | Sequence[str], fmt: str | None = None, filesystem: Any = None) -> Any:
    """A Ray Dataset of the documents (CSV fields are read as text, as LOAD DATA reads them)."""
    ray = _ray()
    source = expand_local_glob(source) if filesystem is None else source
    kind = _reader(source, fmt)
    paths = source if isinstance(source, str) else list(source)
    if kind == "parquet":
        return ray.data.read_parquet(paths, filesystem=filesystem, **IO_TASKS)
    if kind == "json":
        return ray.data.read_json(paths, filesystem=filesystem, lines=True, **IO_TASKS)
    from pyarrow import csv
    header = _csv_header(paths if isinstance(paths, str) else paths[0], filesystem)
    convert = csv.ConvertOptions(column_types={n: pa.string() for n in header}, strings_can_be_null=False)
    return ray.data.read_csv(paths, filesystem=filesystem, convert_options=convert, **IO_TASKS)


def _csv_header(path: str, filesystem: Any) -> list[str]:
    import pyarrow.fs as pafs
    from pyarrow import csv
    fs, where = (filesystem, path) if filesystem is not None else pafs.FileSystem.from_uri(_uri(path))
    info = fs.get_file_info(where)
    if info.type == pafs.FileType.Directory:
        files = [i.path for i in fs.get_file_info(pafs.FileSelector(where)) if i.path.endswith(".csv")]
        if not files:
            raise errors.OperationalError(f"no .csv files in '{path}'")
        where = sorted(files)[0]
    with fs.open_input_stream(where) as stream:
        return csv.open_csv(stream).schema.names


def _uri(path: str) -> str:
    return path if "://" in path else os.path.abspath(path)


def embed_to_parquet(source: str | Sequence[str], output: str, settings: EmbedSettings, *, id_column: str = "id",
                     fmt: str | None = None, workers: int | None = None, cpus_per_worker: float = 1.0,
                     threads_per_worker: int | None = None, batch_rows: int = BATCH_ROWS, filesystem: Any = None,
                     address: str | None = None, embedder: type = ChunkEmbedder) -> Summary:
    """Chunk and embed every document of ``source`` on a Ray cluster; write Parquet shards to ``output``.

    ``workers`` actors each claim ``cpus_per_worker`` CPUs, load the model once and run it on
    ``threads_per_worker`` threads (default: the CPUs claimed, at least 1). By default one CPU of the
    cluster is left to Ray Data's file listing (a task that always claims a whole CPU: with every CPU
    held by a worker, it would wait forever) and the rest go to workers. Connects to ``address``
    ("auto": a running cluster) or the cluster this process already joined, else starts a local one.
    ``embedder`` is the worker class (a subclass may add behaviour; same constructor arguments).
    """
    ray = _ray()
    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    cpus = ray.cluster_resources().get("CPU", 1)
    if workers is None:
        workers = max(1, int((cpus - 1) // cpus_per_worker))
    if cpus - workers * cpus_per_worker < 1:
        raise errors.ProgrammingError(
            f"{workers} workers x {cpus_per_worker:g} CPUs leave less than one of the cluster's {cpus:g} CPUs free; "
            "Ray Data's file listing needs a whole one, and the run would never start. Use fewer workers or "
            "fewer CPUs per worker")
    threads = threads_per_worker or max(1, int(cpus_per_worker))
    started = time.perf_counter()
    docs = read(source, fmt, filesystem)
    _check_columns(docs.schema().names, settings, id_column)
    try:      # a worker that cannot open the model (a missing key variable, ...) fails here, clearly
        ray.get(ray.remote(num_cpus=0, max_retries=0)(_check_worker).remote(asdict(settings)))
    except Exception as exc:
        raise _ours(exc) or exc
    ds = docs.map_batches(
        embedder, fn_constructor_kwargs={"settings": asdict(settings), "id_column": id_column, "threads": threads},
        batch_format="pyarrow", batch_size=batch_rows, num_cpus=cpus_per_worker,
        compute=ray.data.ActorPoolStrategy(size=workers))
    try:
        ds.write_parquet(output, filesystem=filesystem, ray_remote_args=IO_TASKS)
    except Exception as exc:  # Ray wraps a worker's exception in its own types; show ours as it was raised
        raise _ours(exc) or exc
    files, documents, chunks = _count(output, filesystem)
    return Summary(documents, chunks, files, time.perf_counter() - started, workers, output)


def _check_columns(names: list[str], settings: EmbedSettings, id_column: str) -> None:
    """Before any worker starts: the input has the id column and every ``from`` column."""
    if id_column not in names:
        raise errors.NoSuchColumn(f"the input has no id column '{id_column}' (columns: {', '.join(names)}); "
                                  "shards carry the ids rows get when loaded")
    if id_column != "id" and "id" in names:
        raise errors.ProgrammingError(f"the input has both 'id' and the id column '{id_column}'")
    lower = {n.lower() for n in names}
    missing = [c for c in settings.from_columns if c.lower() not in lower]
    if missing:
        raise errors.NoSuchColumn(f"the input has no column '{missing[0]}' (from='{','.join(settings.from_columns)}')")


def _ours(exc: BaseException) -> errors.Error | None:
    """The tesseradb error a worker raised, found in the chain of Ray's wrappers around it."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, errors.Error):
            return exc
        if isinstance(exc, UserError):
            return exc.kind(exc.msg, fields=exc.fields)
        exc = getattr(exc, "cause", None) or exc.__cause__ or exc.__context__
    return None


def _count(output: str, filesystem: Any) -> tuple[int, int, int]:
    """Shards, documents and chunks under ``output`` (read from the Parquet footers and span lists)."""
    import pyarrow.dataset as pads
    data = pads.dataset(output, format="parquet", filesystem=filesystem)
    files = len(data.files)
    table = data.to_table(columns=[SPANS])
    chunks = int(pc.sum(pc.list_value_length(table.column(SPANS))).as_py() or 0)
    return files, table.num_rows, chunks


def embed_files(source: str | Sequence[str], output: str, *, database: str | None = None, table: str | None = None,
                column: str | None = None, model_name: str | None = None, from_columns: Sequence[str] = (),
                chunk_strategy: str = "truncate", max_tokens: int = 0, overlap_tokens: int = 0, max_chunks: int = 0,
                model_options: dict[str, str] | None = None, api_key_env: str | None = None,
                **options: Any) -> Summary:
    """:func:`embed_to_parquet` with the settings of ``database``'s ``table.column``, or given as in
    CREATE TABLE (``model_name``, ``from_columns``, chunk options, ``model_options``; ``column`` names
    the vector column). ``api_key_env``: the environment variable the workers read a remote model's
    key from (a literal key never travels to them)."""
    if database is not None:
        if not table or not column:
            raise errors.ProgrammingError("give the table and the column whose settings to embed with")
        settings = settings_of(database, table, column, api_key_env=api_key_env)
    elif model_name and from_columns:
        settings = settings_for(column or "embedding", model_name, list(from_columns), chunk_strategy=chunk_strategy,
                                max_tokens=max_tokens, overlap_tokens=overlap_tokens, max_chunks=max_chunks,
                                model_options=model_options, api_key_env=api_key_env)
    else:
        raise errors.ProgrammingError("give either a database, table and column, or model_name and from_columns")
    return embed_to_parquet(source, output, settings, **options)
