"""Client commands: handled by the shell itself, never sent to the engine (mysql's ``help`` list)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import tesseradb
if TYPE_CHECKING:
    from tesseradb.clients.shell.runner import Origin, Runner
    from tesseradb.clients.shell.scanner import Command


@dataclass(frozen=True)
class Spec:
    name: str
    shortcut: str
    help: str
    run: Callable[["Runner", "Command", "Origin"], None]


COMMANDS: dict[str, Spec] = {}
# Shown by help but handled by the scanner (they end or clear the statement being typed).
SCANNER_COMMANDS = [
    ("clear", "\\c", "Clear the current input statement."),
    ("ego", "\\G", "Send the statement; print the result vertically."),
    ("go", "\\g", "Send the statement (like ;)."),
]


def command(name: str, shortcut: str, help: str):
    def register(fn):
        COMMANDS[name] = Spec(name, shortcut, help, fn)
        return fn
    return register


def run(runner: "Runner", cmd: "Command", origin: "Origin") -> None:
    COMMANDS[cmd.name].run(runner, cmd, origin)


@command("help", "\\h", "Display this help. Synonyms: ?, \\?.")
def _help(runner: "Runner", cmd: "Command", origin: "Origin") -> None:
    runner.write(help_text() + "\n")


@command("quit", "\\q", "Quit tessera. Synonym: exit. Ctrl-D at an empty prompt also quits.")
def _quit(runner: "Runner", cmd: "Command", origin: "Origin") -> None:
    from tesseradb.clients.shell.runner import QuitShell
    raise QuitShell()


@command("source", "\\.", "Execute an SQL script file. Takes a file name as an argument.")
def _source(runner: "Runner", cmd: "Command", origin: "Origin") -> None:
    runner.source(cmd.arg, cmd.line, origin)


@command("status", "\\s", "Show the database, the version and the session state.")
def _status(runner: "Runner", cmd: "Command", origin: "Origin") -> None:
    opts = runner.options
    mode = "vertical" if opts.vertical else "table" if (opts.table or opts.interactive) else "tab-separated"
    lines = [
        "--------------",
        f"tessera shell, tesseradb {tesseradb.__version__}",
        "",
        f"Database:\t\t{runner.db_label}",
        f"In transaction:\t\t{'yes' if runner.con.in_transaction else 'no'}",
        f"Output:\t\t\t{mode}",
        f"Show warnings:\t\t{'on' if opts.show_warnings else 'off'}",
        "--------------",
        "",
    ]
    runner.write("\n".join(lines) + "\n")


@command("warnings", "\\W", "Show warnings after every statement.")
def _warnings(runner: "Runner", cmd: "Command", origin: "Origin") -> None:
    runner.options.show_warnings = True
    runner.write("Show warnings enabled.\n")


@command("nowarning", "\\w", "Don't show warnings after every statement.")
def _nowarning(runner: "Runner", cmd: "Command", origin: "Origin") -> None:
    runner.options.show_warnings = False
    runner.write("Show warnings disabled.\n")


def help_text() -> str:
    entries = [(s.name, s.shortcut, s.help) for s in COMMANDS.values()] + SCANNER_COMMANDS
    lines = [
        "",
        "List of all tessera commands:",
        "Statements end with ';' or \\G (vertical output) and may span lines; commands like",
        "source take the rest of their line.",
        "",
    ]
    lines += [f"{name:<10}({shortcut}) {text}" for name, shortcut, text in sorted(entries)]
    lines += [
        "",
        "Ctrl-C cancels the running statement (also while it embeds) and keeps the shell.",
        "SQL: CREATE TABLE, INSERT, SELECT ... WHERE knn(col, k, 'text'), LOAD DATA INFILE,",
        "SELECT ... INTO OUTFILE, SHOW TABLES, DESCRIBE t, SHOW CREATE TABLE t, SHOW WARNINGS.",
        "See docs/shell.md.",
        "",
    ]
    return "\n".join(lines)
