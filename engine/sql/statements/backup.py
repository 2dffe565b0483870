"""BACKUP TO 'path': a consistent copy of the whole database into a new file, while others write.

SQLite's online backup API copies every page of the database inside one read transaction, so the
copy is the database as of one commit even while other connections go on writing (WAL). Before it
runs, every vector column's index is caught up and saved inside the database (``index_cache``), so
the copy opens with its indexes ready: no rebuild. The copy is written to a temporary file beside the
destination and renamed into place when complete: a failed or interrupted backup leaves nothing.
An existing destination is never overwritten (MySQL's INTO OUTFILE rule, error 1086). The path
follows the one file rule (``io/file_access.py``): under ``secure_file_priv`` it must lie inside the
allowed folder, refused with 1290 before anything is looked at or written otherwise. A backup killed
mid-copy (SIGKILL) leaves its temporary file; the next backup into that folder removes it.
"""
from __future__ import annotations

import os

from tesseradb import errors
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.results import Result
from tesseradb.sql.database import Database


def backup(db: Database, stmt: ast.Backup, _params: object = None) -> Result:
    if db.store.in_transaction:
        raise UserError("BACKUP cannot run inside a transaction: COMMIT or ROLLBACK first",
                        errors.ActiveTransaction)
    dest = os.path.abspath(db.file_access.target(stmt.path))    # refused first (secure_file_priv)
    if os.path.lexists(dest):
        raise UserError(f"File '{stmt.path}' already exists", errors.FileExists)
    if not os.path.isdir(os.path.dirname(dest)):
        raise UserError(f"BACKUP: the folder of '{stmt.path}' does not exist", errors.OperationalError)
    _save_indexes(db)
    db.store.backup_to(dest, place=lambda tmp: db.file_access.publish(tmp, dest, stmt.path, replace=False))
    size = os.path.getsize(dest)
    return Result(rowcount=0, message=f"backed up to '{stmt.path}' ({size:,} bytes)")


def _save_indexes(db: Database) -> None:
    """Every vector index caught up with the committed rows and saved inside the database."""
    for table in list(db.tables.values()):
        for layout in table.layouts():
            db.column_index(table, layout.column).catch_up()
    db.save_indexes(force=True)
