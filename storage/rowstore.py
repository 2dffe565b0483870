"""The SQLite file, through apsw: pragmas, transactions, savepoints and plain execution."""
from __future__ import annotations

import contextlib
import itertools
import os
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import apsw

from . import write_queue

MEMORY = ":memory:"
#: ``PRAGMA mmap_size`` of a file database: SQLite reads its pages through a memory map of the file (up
#: to its size; this is only address space) instead of a read() into its page cache per page. It
#: matters for many random row reads, e.g. a quantized index rescoring ~50 candidates per query from
#: the float32 vectors in the rows (tests/benchmarks/bench_quantize_index.py measures the read both
#: ways; docs/benchmarks.md). SQLite maps no more than its compile-time maximum; writes still go
#: through write() and the WAL. docs/durability.md says what it changes for a user.
MMAP_BYTES = 1 << 40
_savepoint_ids = itertools.count(1)


def _unknown_parameter(exc: KeyError) -> apsw.BindingsError:
    # An unquoted name such as $1body is a column in MySQL but a parameter in SQLite.
    return apsw.BindingsError(f"Unknown column or parameter '{exc.args[0] if exc.args else ''}': SQLite reads "
                              "a name that starts with $, @ or : as a parameter; quote such a name with backticks")


def _open_read_only(path: str) -> apsw.Connection:
    """The file read-only (``mode=ro``) in a connection that is not: the engine's private in-memory
    schemas (TEMP tables, information_schema attached as ':memory:') stay writable, the file is not."""
    if path == MEMORY:
        return apsw.Connection(path)
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=ro"
    return apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_URI)


_BACKUP_TMP = ".tessera-backup-"        # + the writing process's id + "-" ... ".tmp"


def _remove_abandoned(folder: str) -> None:
    """Remove the temporary files of backups whose process no longer runs (a SIGKILL mid-copy)."""
    try:
        names = os.listdir(folder)
    except OSError:
        return
    for name in names:
        if not name.startswith(_BACKUP_TMP):
            continue
        pid = name[len(_BACKUP_TMP):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, name))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True                 # another user's process: it exists
    return True


class RowStore:
    """Owns one apsw connection. Every statement of the engine runs through here."""

    def __init__(self, path: str = MEMORY, *, busy_timeout_ms: int = 5000, read_only: bool = False):
        self.path = path
        self.read_only = read_only      # SQLite opens the file read-only: no statement can change it
        self.conn = _open_read_only(path) if read_only else apsw.Connection(path)
        self.busy_timeout_ms = busy_timeout_ms
        self.conn.setbusytimeout(busy_timeout_ms)
        # "x" is an identifier, never a string: an unknown column must be an error, not the text 'x'
        self.conn.config(apsw.SQLITE_DBCONFIG_DQS_DML, 0)
        self.conn.config(apsw.SQLITE_DBCONFIG_DQS_DDL, 0)
        if path != MEMORY and not read_only:
            self.conn.pragma("journal_mode", "wal")
        if path != MEMORY:
            self.conn.pragma("mmap_size", MMAP_BYTES)
        self.conn.pragma("synchronous", "full")
        self.conn.pragma("recursive_triggers", True)
        # this process's writers of the file take turns before asking SQLite (storage/write_queue.py)
        self._queue = write_queue.for_file(path) if path != MEMORY and not read_only else None

    # -- execution ---------------------------------------------------------------------------
    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> apsw.Cursor:
        try:
            return self.conn.cursor().execute(sql, params)
        except KeyError as exc:      # apsw: the SQL names a parameter the dict lacks
            raise _unknown_parameter(exc) from None

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> None:
        self.conn.cursor().executemany(sql, rows)

    def tables_read(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> set[str]:
        """The tables (lower case) a statement reads, views seen through: SQLite's authorizer is asked
        while the statement is prepared under EXPLAIN, which runs none of it."""
        read: set[str] = set()

        def note(action: int, name: str | None, *_: Any) -> int:
            if action == apsw.SQLITE_READ and name:
                read.add(name.lower())
            return apsw.SQLITE_OK
        before = self.conn.authorizer
        self.conn.authorizer = note
        try:
            self.conn.cursor().execute(sql, params, can_cache=False, explain=1).close()
        finally:
            self.conn.authorizer = before
        return read

    def one(self, sql: str, params: Sequence[Any] | None = None) -> Any:
        for row in self.execute(sql, params):
            return row
        return None

    def changes(self) -> int:
        return self.conn.changes()

    def insert_blob(self, sql: str, params: Sequence[Any], table: str, column: str, data: Any) -> None:
        """Run ``sql``, an INSERT of one row whose ``column`` is ``zeroblob(len(data))``, then write
        ``data`` (any buffer) into that blob in place: SQLite's incremental blob I/O writes the
        caller's bytes straight to the pages, where a bound value is copied twice first."""
        self.execute(sql, params)
        with self.conn.blob_open("main", table, column, self.conn.last_insert_rowid(), True) as blob:
            blob.write(data)

    # -- transactions ------------------------------------------------------------------------
    @property
    def in_transaction(self) -> bool:
        return self.conn.in_transaction

    def begin(self) -> None:
        """A write transaction holding SQLite's write lock from now on (BEGIN IMMEDIATE). The wait for
        it, at most the busy timeout in all, is first this process's queue (first come first served,
        storage/write_queue.py), then SQLite's for other processes; past it, ``apsw.BusyError``."""
        if self._queue is None:
            self.conn.execute("BEGIN IMMEDIATE")
            return
        started = time.monotonic()
        if not self._queue.acquire(self, self.busy_timeout_ms / 1000):
            raise apsw.BusyError("database is locked")
        left = self.busy_timeout_ms - int((time.monotonic() - started) * 1000)
        try:
            if left < self.busy_timeout_ms:
                self.conn.setbusytimeout(max(left, 0))
            self.conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._queue.release(self)
            raise
        finally:
            if left < self.busy_timeout_ms:
                self.conn.setbusytimeout(self.busy_timeout_ms)

    def commit(self) -> None:
        try:
            if self.conn.in_transaction:
                self.conn.execute("COMMIT")
        finally:
            self.end_turn()

    def rollback(self) -> None:
        try:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
        finally:
            self.end_turn()

    def end_turn(self) -> None:
        """Give this process's write turn back once no transaction is open (SQLite may have ended one
        by itself, on some errors); called by COMMIT, ROLLBACK and before every statement."""
        if self._queue is not None and not self.conn.in_transaction:
            self._queue.release(self)

    @contextlib.contextmanager
    def savepoint(self) -> Iterator[None]:
        """Run a block so that an error undoes exactly what the block did."""
        name = f"tessera_sp_{next(_savepoint_ids)}"
        self.conn.execute(f"SAVEPOINT {name}")
        try:
            yield
        except BaseException:
            if self.conn.in_transaction:
                self.conn.execute(f"ROLLBACK TO {name}")
                self.conn.execute(f"RELEASE {name}")
            raise
        self.conn.execute(f"RELEASE {name}")

    def set_progress_handler(self, handler, every: int = 1000) -> None:
        self.conn.set_progress_handler(handler, every)

    def interrupt(self) -> None:
        self.conn.interrupt()

    def data_version(self) -> int:
        return self.conn.data_version()

    def backup_to(self, dest: str, place: Callable[[str], None] | None = None) -> None:
        """Copy the whole database into the new file ``dest`` with SQLite's online backup, all pages
        in one step (one read transaction: the copy is one committed state while others write).
        Written to a temporary file beside ``dest`` (its name carries this process's id) and put into
        place when complete by ``place(tmp)`` (default: a rename). Temporary files that a killed
        backup left in that folder (their process is gone) are removed first."""
        folder = os.path.dirname(os.path.abspath(dest))
        _remove_abandoned(folder)
        fd, tmp = tempfile.mkstemp(prefix=f"{_BACKUP_TMP}{os.getpid()}-", suffix=".tmp", dir=folder)
        os.close(fd)
        try:
            target = apsw.Connection(tmp)
            try:
                with target.backup("main", self.conn, "main") as job:
                    job.step(-1)
                target.pragma("journal_mode", "delete")     # a closed copy is exactly one file
            finally:
                target.close()
            (place or (lambda t: os.replace(t, dest)))(tmp)
        finally:
            for leftover in (tmp, tmp + "-wal", tmp + "-shm", tmp + "-journal"):
                if os.path.exists(leftover):
                    os.unlink(leftover)

    def close(self) -> None:
        try:
            self.conn.close()
        finally:
            if self._queue is not None:
                self._queue.release(self)
