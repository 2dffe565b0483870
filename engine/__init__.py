"""tesseradb: an embedded SQL database whose vector columns chunk and embed text by themselves.

    import tesseradb
    con = tesseradb.connect("docs.db")
"""
from __future__ import annotations

from tesseradb.clients.dbapi import (BINARY, DATETIME, NUMBER, ROWID, STRING, Binary, Connection, Cursor, Date, DateFromTicks,
                    Row, Time, TimeFromTicks, Timestamp, TimestampFromTicks, apilevel, connect, paramstyle,
                    threadsafety)
from tesseradb.clients.table_info import Chunking, ColumnInfo, FullText, KeyInfo, TableInfo, VectorInfo
from tesseradb.errors import (DatabaseError, DataError, DataTruncatedWarning, Error, IntegrityError, InterfaceError, InternalError,
                     NotSupportedError, OperationalError, ProgrammingError, Warning)

__version__ = "0.1.0"

__all__ = [
    "connect", "Connection", "Cursor", "apilevel", "paramstyle", "threadsafety", "__version__",
    "Error", "Warning", "InterfaceError", "DatabaseError", "DataError", "OperationalError",
    "IntegrityError", "InternalError", "ProgrammingError", "NotSupportedError", "DataTruncatedWarning",
    "STRING", "BINARY", "NUMBER", "DATETIME", "ROWID", "Date", "Time", "Timestamp", "DateFromTicks",
    "TimeFromTicks", "TimestampFromTicks", "Binary", "Row",
    "TableInfo", "ColumnInfo", "VectorInfo", "Chunking", "FullText", "KeyInfo", "serve", "embed_to_parquet",
]


def serve(database: str, **options):
    """Serve ``database`` over the MySQL protocol (``tessera serve``; docs/server.md). Blocks until
    SIGTERM / Ctrl-C, or with ``background=True`` returns a handle with ``.port`` and ``.stop()``."""
    from tesseradb.clients.server import serve as _serve   # the protocol stack loads only when used
    return _serve(database, connect=connect, **options)


def embed_to_parquet(source, output, **options):
    """Chunk and embed documents (Parquet / JSONL / CSV, any pyarrow filesystem) on a Ray cluster into
    Parquet shards that ``LOAD DATA`` stores without running the model (``tessera embed``;
    docs/distributed.md). Needs ``pip install 'tesseradb[ray]'``. Returns a summary (documents, chunks,
    files, seconds, workers)."""
    from tesseradb.io.distributed import embed_files   # Ray loads only when used
    return embed_files(source, output, **options)
