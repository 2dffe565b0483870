"""What the shell's parts share: its options, where statements come from, the two exceptions that end
a run, and the :class:`Session` protocol that client commands use (the runner implements it)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from tesseradb.clients.shell import prompt
from tesseradb.clients.shell.output import Sink
from tesseradb.clients.shell.scanner import Statement


class QuitShell(Exception):
    """``exit`` / ``quit`` / ``\\q``."""


class ScriptAborted(Exception):
    """Batch mode stops at the first error (unless --force)."""


@dataclass
class Options:
    interactive: bool = False
    table: bool = False              # bordered tables (else tab-separated)
    vertical: bool = False           # every result as \G
    headers: bool = True
    raw: bool = False                # no escaping in tab-separated output
    verbose: int = 0                 # batch: 1 echo statements, 2 + row counts, 3 + timings
    force: bool = False
    show_warnings: bool = False
    full_vectors: bool = False       # tables print whole vectors (else abbreviated when interactive)
    delimiter: str = ";"
    prompt: str = prompt.DEFAULT
    mode: str | None = None          # csv / json / html / markdown (formats.py); None: tables or tabs


@dataclass(frozen=True)
class Origin:
    """Where statements come from: stdin / -e / the terminal (file None) or a sourced file."""
    file: str | None = None


class Session(Protocol):
    """The runner as client commands see it."""
    con: Any
    options: Options
    sink: Sink
    db_label: str
    last_tee: str | None
    schema_stale: bool

    def write(self, text: str) -> None: ...

    def report_error(self, exc: Any, line: int, origin: Origin) -> None: ...

    def run_statement(self, stmt: Statement, origin: Origin = ..., quiet: bool = False) -> bool: ...

    def source(self, path: str, line: int, origin: Origin) -> None: ...
