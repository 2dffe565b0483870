"""Client commands: handled by the shell itself, never sent to the engine (mysql's ``help`` list)."""
from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass

import tesseradb
from tesseradb.clients.shell import prompt
from tesseradb.clients.shell import help_topics
from tesseradb.clients.shell.scanner import UNKNOWN, Command, Statement
from tesseradb.clients.shell.state import Origin, QuitShell
from tesseradb.clients.shell.state import Session as Runner


@dataclass(frozen=True)
class Spec:
    name: str
    shortcut: str
    help: str
    run: Callable[[Runner, Command, Origin], None]


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


def run(runner: Runner, cmd: Command, origin: Origin) -> None:
    if cmd.name == UNKNOWN:
        runner.report_error(f"Unknown command '{cmd.arg}'.", cmd.line, origin)
        return
    spec = COMMANDS.get(cmd.name)
    (spec.run if spec is not None else _unsupported)(runner, cmd, origin)


@command("help", "\\h", "Display this help; 'help contents' lists the SQL topics, 'help SELECT' shows one. "
         "Synonyms: ?, \\?.")
def _help(runner: Runner, cmd: Command, origin: Origin) -> None:
    if not cmd.arg.strip():
        runner.write(help_text() + "\n")
        return
    text = help_topics.lookup(cmd.arg)
    if text is None:
        runner.write(f"Nothing found\nPlease try to run 'help contents' for a list of all accessible topics\n")
        return
    runner.write(text + "\n")


@command("quit", "\\q", "Quit tessera. Synonym: exit. Ctrl-D at an empty prompt also quits.")
def _quit(runner: Runner, cmd: Command, origin: Origin) -> None:
    raise QuitShell()


@command("source", "\\.", "Execute an SQL script file. Takes a file name as an argument.")
def _source(runner: Runner, cmd: Command, origin: Origin) -> None:
    runner.source(cmd.arg, cmd.line, origin)


@command("status", "\\s", "Show the database, the version and the session state.")
def _status(runner: Runner, cmd: Command, origin: Origin) -> None:
    opts = runner.options
    mode = "vertical" if opts.vertical else "table" if (opts.table or opts.interactive) else "tab-separated"
    lines = [
        "--------------",
        f"tessera shell, tesseradb {tesseradb.__version__}",
        "",
        f"Database:\t\t{runner.db_label}",
        f"In transaction:\t\t{'yes' if runner.con.in_transaction else 'no'}",
        f"Output:\t\t\t{mode}",
        "Vectors:\t\t" + ("full" if opts.full_vectors else "abbreviated in tables and \\G"),
        f"Show warnings:\t\t{'on' if opts.show_warnings else 'off'}",
        f"Using delimiter:\t{opts.delimiter}",
        f"Current pager:\t\t{runner.sink.pager or 'stdout'}",
        f"Using outfile:\t\t'{runner.sink.tee_path or ''}'",
        "--------------",
        "",
    ]
    runner.write("\n".join(lines) + "\n")


@command("warnings", "\\W", "Show warnings after every statement.")
def _warnings(runner: Runner, cmd: Command, origin: Origin) -> None:
    runner.options.show_warnings = True
    runner.write("Show warnings enabled.\n")


@command("nowarning", "\\w", "Don't show warnings after every statement.")
def _nowarning(runner: Runner, cmd: Command, origin: Origin) -> None:
    runner.options.show_warnings = False
    runner.write("Show warnings disabled.\n")


@command("pager", "\\P", "Pipe each result through PAGER (default: $PAGER). Interactive only.")
def _pager(runner: Runner, cmd: Command, origin: Origin) -> None:
    if not runner.options.interactive:
        return                                   # as in mysql: batch output goes where it was sent
    pager = cmd.arg or os.environ.get("PAGER", "").strip()
    if not pager or pager == "stdout":
        runner.sink.pager = None
        runner.write("Default pager wasn't set, using stdout.\n" if not pager else "PAGER set to stdout\n")
        return
    runner.sink.pager = pager
    runner.write(f"PAGER set to '{pager}'\n")


@command("nopager", "\\n", "Disable the pager, print to stdout.")
def _nopager(runner: Runner, cmd: Command, origin: Origin) -> None:
    runner.sink.pager = None
    if runner.options.interactive:
        runner.write("PAGER set to stdout\n")


@command("tee", "\\T", "Append everything (statements, results, errors) to the given file.")
def _tee(runner: Runner, cmd: Command, origin: Origin) -> None:
    path = cmd.arg or runner.last_tee
    if not path:
        runner.report_error("No outfile specified!", cmd.line, origin)
        return
    try:
        runner.sink.open_tee(path)
    except OSError as exc:
        runner.report_error(f"Can't open file '{path}': {exc.strerror}", cmd.line, origin)
        return
    runner.last_tee = path
    runner.write(f"Logging to file '{path}'\n")


@command("notee", "\\t", "Stop writing to the tee file.")
def _notee(runner: Runner, cmd: Command, origin: Origin) -> None:
    runner.sink.close_tee()
    runner.write("Outfile disabled.\n")


@command("system", "\\!", "Run a command of the operating system's shell.")
def _system(runner: Runner, cmd: Command, origin: Origin) -> None:
    if not cmd.arg:
        runner.report_error("Usage: \\! shell-command", cmd.line, origin)
        return
    runner.sink.flush()
    subprocess.run(cmd.arg, shell=True, check=False)


@command("use", "\\u", "Use another database (there is one: see SHOW DATABASES).")
def _use(runner: Runner, cmd: Command, origin: Origin) -> None:
    name = cmd.arg.strip("`")
    if not name:
        runner.report_error("USE must be followed by a database name", cmd.line, origin)
        return
    if runner.run_statement(Statement(f"USE `{name.replace('`', '``')}`", cmd.line), origin, quiet=True):
        if runner.options.interactive:
            runner.write("Database changed\n")


@command("delimiter", "\\d", "Set the statement delimiter (the scanner switches to it at once).")
def _delimiter(runner: Runner, cmd: Command, origin: Origin) -> None:
    if not cmd.arg:
        runner.report_error("DELIMITER must be followed by a 'delimiter' character or string",
                            cmd.line, origin)
    elif "\\" in cmd.arg:
        runner.report_error("DELIMITER cannot contain a backslash character", cmd.line, origin)
    else:
        runner.options.delimiter = cmd.arg


@command("prompt", "\\R", "Change the prompt (mysql's escapes: \\d database, \\c counter, \\R:\\m time...).")
def _prompt(runner: Runner, cmd: Command, origin: Origin) -> None:
    if cmd.arg:
        runner.options.prompt = cmd.arg
        runner.write(f"PROMPT set to '{cmd.arg}'\n")
    else:
        runner.options.prompt = prompt.DEFAULT
        runner.write(f"Returning to default PROMPT of {prompt.DEFAULT}\n")


@command("charset", "\\C", "Switch the character set: tessera reads and writes UTF-8 (utf8mb4) only.")
def _charset(runner: Runner, cmd: Command, origin: Origin) -> None:
    name = cmd.arg.strip("'\"`").lower()
    if not name:
        runner.report_error("Usage: charset charset_name", cmd.line, origin)
    elif name not in UTF8_NAMES:
        runner.report_error(f"Unknown character set: '{cmd.arg}' (tessera reads and writes UTF-8: "
                            "utf8mb4)", cmd.line, origin)
    elif runner.options.interactive:
        runner.write("Charset changed\n")


@command("rehash", "\\#", "Re-read table and column names for completion.")
def _rehash(runner: Runner, cmd: Command, origin: Origin) -> None:
    runner.schema_stale = True


@command("print", "\\p", "Print the statement being typed.")
def _print(runner: Runner, cmd: Command, origin: Origin) -> None:
    runner.write(f"--------------\n{cmd.text}\n--------------\n")


@command("vectors", "", "Vectors in tables: 'vectors full', 'vectors short' (abbreviated, the "
         "interactive default); no argument toggles.")
def _vectors(runner: Runner, cmd: Command, origin: Origin) -> None:
    arg = cmd.arg.lower()
    if arg and arg not in VECTOR_MODES:
        runner.report_error("Usage: vectors [full|short]", cmd.line, origin)
        return
    choice = VECTOR_MODES[arg] if arg else not runner.options.full_vectors
    runner.options.full_vectors = choice
    runner.write("Vectors print in full.\n" if choice else
                 "Vectors print abbreviated in tables and \\G (batch and -e output stay exact).\n")


# mysql client commands that make no sense for an embedded database: refused, never sent as SQL.
UNSUPPORTED = {
    "connect": "\\r", "edit": "\\e", "resetconnection": "\\x", "query_attributes": "",
    "ssl_session_data_print": "",
}
UTF8_NAMES = {"utf8", "utf8mb4", "utf8mb3", "utf-8"}
VECTOR_MODES = {"full": True, "short": False, "on": True, "off": False}


def _unsupported(runner: Runner, cmd: Command, origin: Origin) -> None:
    runner.report_error(f"command '{cmd.name}' is not supported", cmd.line, origin)


def help_text() -> str:
    entries = [(s.name, s.shortcut, s.help) for s in COMMANDS.values()] + SCANNER_COMMANDS
    lines = [
        "",
        "List of all tessera commands:",
        "Statements end with ';' (or the delimiter set by 'delimiter') or \\G (vertical output) and",
        "may span lines; commands like source take the rest of their line.",
        "",
    ]
    lines += [f"{name:<10}({shortcut or '-'}) {text}" for name, shortcut, text in sorted(entries)]
    lines += ["", "Not supported (refused, never sent as SQL): " + ", ".join(sorted(UNSUPPORTED)) + "."]
    lines += [
        "",
        "Ctrl-C cancels the running statement (also while it embeds) and keeps the shell.",
        "SQL: CREATE TABLE, INSERT, SELECT ... WHERE knn(col, k, 'text'), LOAD DATA INFILE,",
        "SELECT ... INTO OUTFILE, SHOW TABLES, DESCRIBE t, SHOW CREATE TABLE t, SHOW WARNINGS.",
        "For SQL help type 'help contents' (topics) or 'help <statement>', e.g. 'help SELECT'.",
        "",
    ]
    return "\n".join(lines)
