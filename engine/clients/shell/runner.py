"""Running statements and client commands for both modes, and printing what they produce.

Statements run on one worker thread while the main thread waits, so that Ctrl-C (SIGINT, delivered
to the main thread) can call ``Connection.interrupt()`` at once, even while the statement is inside
SQLite or the embedding model. Everything goes through the public DB-API, like any other client.
"""
from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TextIO

import tesseradb
from tesseradb.clients.shell import chat_view, commands, formats, prompt, render, wrap
from tesseradb.clients.shell.output import Sink
from tesseradb.clients.shell.progress import Progress
from tesseradb.clients.shell.scanner import Command, Item, Statement
from tesseradb.clients.shell.state import Options, Origin, QuitShell, ScriptAborted  # noqa: F401 - re-exported

MAX_SOURCE_DEPTH = 16
SCHEMA_WORDS = {"create", "drop", "alter", "rollback", "source"}   # after these, completions are refreshed


@dataclass
class Outcome:
    """What one statement returned, collected on the worker thread."""
    names: list[str] | None
    decls: list[str | None]
    rows: list[tuple] = field(default_factory=list)
    rowcount: int = -1
    warnings: list[tuple[str, int, str]] = field(default_factory=list)


class Runner:
    def __init__(self, con: tesseradb.Connection, options: Options, out: TextIO, err: TextIO,
                 progress: Progress, db_label: str):
        self.con = con
        self.cursor = con.cursor()
        self.options = options
        self.out, self.err = out, err
        self.sink = Sink(out, err)
        self.last_tee: str | None = None
        self.statements = 0                     # statements run: the prompt's \\c counter
        self._database: str | None = None
        self.progress = progress
        self.db_label = db_label
        self.failures = 0
        self.schema_stale = True
        self.last_warnings: list[tuple[str, int, str]] = []
        self.cancelled = False                  # Ctrl-C hit the running statement
        self._depth = 0
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="tessera-sql")
        con.set_progress(progress.update)

    # -- items ---------------------------------------------------------------------------------
    def run_items(self, items: list[Item], origin: Origin = Origin()) -> None:
        for item in items:
            if isinstance(item, Command):
                commands.run(self, item, origin)
            else:
                self.run_statement(item, origin)

    def run_statement(self, stmt: Statement, origin: Origin = Origin(), quiet: bool = False) -> bool:
        """Run one statement and print its result (``quiet``: print only an error)."""
        opts = self.options
        if opts.verbose and not opts.interactive:
            self.write(f"--------------\n{stmt.text}\n--------------\n\n")
            self.sink.flush()
        first = stmt.text.split(None, 1)[0].lower() if stmt.text.split() else ""
        if first in SCHEMA_WORDS:
            self.schema_stale = True
        started = time.perf_counter()
        self.cancelled = False
        self.statements += 1
        stream = chat_view.Stream(self.out) if opts.interactive and chat_view.is_chat(stmt.text) else None
        if stream is not None:
            self.sink.flush()
            self.con.set_chat_stream(stream)
        try:
            outcome = self.execute(stmt.text)
        except tesseradb.Error as exc:
            if stream is not None:
                stream.end()
            self.report_error(exc, stmt.line, origin)
            if self.cancelled and not opts.interactive:
                raise ScriptAborted() from None        # Ctrl-C stops a script, even with --force
            return False
        finally:
            if stream is not None:
                self.con.set_chat_stream(None)
        self.last_warnings = outcome.warnings
        if first == "use":
            self._database = None
        if stream is not None and outcome.rows and not quiet:
            stream.end()
            self.write(chat_view.sources_text(outcome.names or [], outcome.rows[0]))
            self.write(render.summary(rows=1, affected=outcome.rowcount, warnings=len(outcome.warnings),
                                      seconds=time.perf_counter() - started) + "\n\n")
            self.sink.flush()
            return True                     # the answer was shown as it came: no table repeats it
        if not quiet:
            self.show(outcome, stmt.vertical or opts.vertical, time.perf_counter() - started)
        return True

    # -- executing on the worker thread -------------------------------------------------------------
    def execute(self, sql: str) -> Outcome:
        self.progress.start()
        try:
            return self._wait(self._worker.submit(self._execute, sql))
        finally:
            self.progress.finish()

    def _execute(self, sql: str) -> Outcome:
        cur = self.cursor
        cur.execute(sql)
        description = cur.description
        if description is None:
            return Outcome(None, [], rowcount=cur.rowcount, warnings=self.con.warnings)
        rows = cur.fetchall()
        return Outcome([d[0] for d in description], [d[1] for d in description], rows, len(rows),
                       self.con.warnings)

    def _wait(self, future: Future) -> Any:
        while True:
            try:
                return future.result()
            except KeyboardInterrupt:
                self.cancelled = True
                self.con.interrupt()
                self.progress.finish()
                self.out.flush()
                self.err.write("^C -- query aborted\n")
                self.err.flush()

    def query(self, sql: str) -> list[tuple]:
        """A statement the shell itself needs (completion names); errors give no rows."""
        try:
            outcome = self._wait(self._worker.submit(self._execute, sql))
        except tesseradb.Error:
            return []
        return outcome.rows

    def table_columns(self) -> dict[str, list[str]]:
        """Each table's column names, from the public catalog (``Connection.tables()``: no statement
        runs, so SHOW WARNINGS keeps what it shows); an error gives none."""
        try:
            return self._wait(self._worker.submit(
                lambda: {t.name: [c.name for c in t.columns] for t in self.con.tables()}))
        except tesseradb.Error:
            return {}

    @property
    def database(self) -> str:
        """The database's name (``SELECT DATABASE()``), for the prompt's ``\\d``."""
        if self._database is None:
            rows = self.query("SELECT DATABASE()")
            self._database = str(rows[0][0]) if rows and rows[0][0] is not None else "(none)"
        return self._database

    def prompt_text(self) -> str:
        context = prompt.Context(self.database if "\\d" in self.options.prompt else "",
                                 tesseradb.__version__, self.options.delimiter, self.statements + 1)
        return prompt.expand(self.options.prompt, context)

    # -- output ---------------------------------------------------------------------------------------
    def write(self, text: str) -> None:
        self.sink.write(text)

    def show(self, outcome: Outcome, vertical: bool, seconds: float) -> None:
        with self.sink.paged(self.options.interactive):
            self._show(outcome, vertical, seconds)

    def _show(self, outcome: Outcome, vertical: bool, seconds: float) -> None:
        opts = self.options
        rows = None
        if outcome.names is not None:
            rows = len(outcome.rows)
            if outcome.rows:
                self.write(self._format(outcome, vertical) + "\n")
        if opts.interactive or opts.verbose >= 2:
            timing = seconds if opts.interactive or opts.verbose >= 3 else None
            self.write(render.summary(rows=rows, affected=outcome.rowcount, warnings=len(outcome.warnings),
                                      seconds=timing) + "\n")
        if opts.show_warnings and outcome.warnings:
            for level, code, message in outcome.warnings:
                self.write(f"{level} (Code {code}): {message}\n")
        if opts.interactive or opts.verbose >= 2:
            self.write("\n")
        self.sink.flush()

    def _format(self, outcome: Outcome, vertical: bool) -> str:
        opts = self.options
        names, decls, rows = outcome.names or [], outcome.decls, outcome.rows
        if opts.mode is not None and not vertical:
            return formats.render(opts.mode, names, decls, rows, headers=opts.headers)
        short = opts.interactive and not opts.full_vectors          # batch and -e output stay exact
        if vertical:
            return render.vertical(names, decls, rows, abbreviate=short)
        if opts.table or opts.interactive:
            return render.table(names, decls, rows, headers=opts.headers, abbreviate=short,
                                wrap_width=wrap.terminal_width() if opts.interactive else None)
        return render.tab_separated(names, decls, rows, headers=opts.headers, raw=opts.raw)

    def report_error(self, exc: tesseradb.Error | str, line: int, origin: Origin) -> None:
        """``ERROR 1064 (42000): msg`` on a terminal; ``... at line N [in file: 'f']`` from scripts."""
        self.failures += 1
        if isinstance(exc, tesseradb.Error):
            head, msg = f"ERROR {exc.errno} ({exc.sqlstate})", exc.msg
        else:
            head, msg = "ERROR", exc
        where = ""
        if not self.options.interactive or origin.file is not None:
            where = f" at line {line}" + (f" in file: '{origin.file}'" if origin.file is not None else "")
        self.sink.error(f"{head}{where}: {msg}\n")
        if not self.options.interactive and not self.options.force:
            raise ScriptAborted()

    # -- sourcing files ---------------------------------------------------------------------------------
    def source(self, path: str, line: int, origin: Origin) -> None:
        from tesseradb.clients.shell.scanner import Scanner
        if not path:
            self.report_error("usage: source FILE", line, origin)
            return
        if self._depth >= MAX_SOURCE_DEPTH:
            self.report_error(f"Failed to open file '{path}': source files nested more than "
                              f"{MAX_SOURCE_DEPTH} deep", line, origin)
            return
        try:
            f = open(path, encoding="utf-8")
        except OSError as exc:
            self.report_error(f"Failed to open file '{path}', error: {exc.errno}", line, origin)
            return
        self._depth += 1
        inner = Origin(path)
        try:
            with f:
                scanner = Scanner(self.options.delimiter)
                for text in f:
                    self.run_items(scanner.feed(text), inner)
                self.run_items(scanner.finish(), inner)
        finally:
            self._depth -= 1

    def close(self) -> None:
        self.sink.close_tee()
        self._worker.shutdown(wait=False, cancel_futures=True)
