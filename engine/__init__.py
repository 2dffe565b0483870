"""tesseradb: an embedded SQL database whose vector columns chunk and embed text by themselves.

    import tesseradb
    con = tesseradb.connect("docs.db")
"""
from __future__ import annotations

from tesseradb.clients.dbapi import (BINARY, DATETIME, NUMBER, ROWID, STRING, Binary, Connection, Cursor, Date, DateFromTicks,
                    Row, Time, TimeFromTicks, Timestamp, TimestampFromTicks, apilevel, connect, paramstyle,
                    threadsafety)
from tesseradb.errors import (DatabaseError, DataError, DataTruncatedWarning, Error, IntegrityError, InterfaceError, InternalError,
                     NotSupportedError, OperationalError, ProgrammingError, Warning)

from tesseradb.embed.remote.secrets import redact_statement

__version__ = "0.1.0"

# public names whose modules load when first named (PEP 562): `import tesseradb` stays small (start-up,
# tests/architecture/test_startup_imports.py)
_LAZY = {**{name: "tesseradb.clients.table_info" for name in ("TableInfo", "ColumnInfo", "VectorInfo", "Chunking",
                                                               "FullText", "KeyInfo")},
         "ChatAnswer": "tesseradb.clients.chat_call"}


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module 'tesseradb' has no attribute {name!r}")
    import importlib
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value

__all__ = [
    "connect", "Connection", "Cursor", "apilevel", "paramstyle", "threadsafety", "__version__",
    "Error", "Warning", "InterfaceError", "DatabaseError", "DataError", "OperationalError",
    "IntegrityError", "InternalError", "ProgrammingError", "NotSupportedError", "DataTruncatedWarning",
    "STRING", "BINARY", "NUMBER", "DATETIME", "ROWID", "Date", "Time", "Timestamp", "DateFromTicks",
    "TimeFromTicks", "TimestampFromTicks", "Binary", "Row",
    "TableInfo", "ColumnInfo", "VectorInfo", "Chunking", "FullText", "KeyInfo", "ChatAnswer", "serve", "embed_to_parquet",
    "redact_statement", "pull_model", "pulled_models",
]


def serve(database: str, **options):
    """Serve ``database`` over the MySQL protocol (``tessera serve``; docs/server.md). Blocks until
    SIGTERM / Ctrl-C, or with ``background=True`` returns a handle with ``.port`` and ``.stop()``."""
    from tesseradb.clients.server import serve as _serve   # the protocol stack loads only when used
    return _serve(database, connect=connect, redact=redact_statement, **options)


def embed_to_parquet(source, output, **options):
    """Chunk and embed documents (Parquet / JSONL / CSV, any pyarrow filesystem) on a Ray cluster into
    Parquet shards that ``LOAD DATA`` stores without running the model (``tessera embed``;
    docs/distributed.md). Needs ``pip install 'tesseradb[ray]'``. Returns a summary (documents, chunks,
    files, seconds, workers)."""
    from tesseradb.io.distributed import embed_files   # Ray loads only when used
    return embed_files(source, output, **options)


def pull_model(name: str, *, token: str | None = None, endpoint: str | None = None):
    """Fetch a Hugging Face model (``ORG/NAME[@REVISION]``) into the local cache with
    ``huggingface_hub`` (``tessera model pull``; docs/models.md#pulling-a-model). The only call that
    downloads a model: ``model_name`` never does. Returns the record kept: repo, revision (the commit),
    folder and every file's SHA-256. Every file is checked against the hashes the hub publishes; a
    corrupt download is refused. ``endpoint``: a hub mirror (default ``$HF_ENDPOINT``, else the hub)."""
    from tesseradb.embed import hub
    from tesseradb.clients.dbapi import public_errors
    with public_errors():
        return hub.pull(name, token=token, endpoint=endpoint)


def pulled_models():
    """The models ``pull_model`` fetched (their records: repo, revision, folder, file hashes)."""
    from tesseradb.embed import hub
    return hub.pulled()
