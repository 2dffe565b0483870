"""``tessera [DB] [options]``: the interactive shell when standard input is a terminal, otherwise (or
with ``-e``) the script runner, like the ``mysql`` client."""
from __future__ import annotations

import argparse
import os
import sys
import warnings

import tesseradb
from tesseradb.clients.shell import lazy_file
from tesseradb.clients.shell.progress import Progress
from tesseradb.clients.shell.runner import Options, QuitShell, Runner, ScriptAborted
from tesseradb.clients.shell.scanner import Scanner

MEMORY_NOTE = "tessera: no database file given; using a transient in-memory database (nothing is saved)\n"


SUBCOMMANDS = """subcommands:
  tessera serve DB [--port 9306] [options]    serve DB over the MySQL protocol (tessera serve -h)
  tessera index DB DIR [--watch]               a folder of notes as a table, kept in sync (tessera index -h)
  tessera embed SOURCE OUTPUT [options]        embed files into Parquet shards with Ray (tessera embed -h)
  tessera backup DB DEST                       a consistent copy of DB (BACKUP TO)
  tessera mcp DB [options]                     Model Context Protocol tools for LLM agents (tessera mcp -h)
  tessera model pull NAME[@REVISION]           fetch an embedding model into the local cache (tessera model -h)
"""
CREDENTIALS_NOTE = ("tessera: -u/--user and -p/--password are accepted for mysql habits and ignored: an "
                    "embedded database file has no users (access is the file's permissions; "
                    "'tessera serve' accepts any user name)\n")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tessera", description="The tesseradb shell: an interactive SQL prompt on a terminal, "
        "a script runner otherwise (tessera db.db < script.sql).", epilog=SUBCOMMANDS,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("database", nargs="?", help="database file (created at the first write); default: in memory")
    p.add_argument("-D", "--database", dest="database_file", metavar="FILE",
                   help="the database file (as mysql -D names the database)")
    p.add_argument("-u", "--user", help="accepted and ignored: an embedded file has no users")
    p.add_argument("-p", "--password", nargs="?", const="", help="accepted and ignored (no passwords)")
    modes = p.add_mutually_exclusive_group()
    for mode, text in (("csv", "CSV with a header line (-N drops it)"), ("json", "a JSON array of objects"),
                       ("html", "an HTML table"), ("markdown", "a Markdown table")):
        modes.add_argument(f"--{mode}", dest="mode", action="store_const", const=mode, help=f"results as {text}")
    p.add_argument("-e", "--execute", metavar="SQL", help="run these statements and exit")
    p.add_argument("-t", "--table", action="store_true", help="bordered tables in batch mode")
    p.add_argument("-B", "--batch", action="store_true",
                   help="batch mode even on a terminal: tab-separated, no prompt, no history")
    p.add_argument("-N", "--skip-column-names", action="store_true", help="no header row")
    p.add_argument("-E", "--vertical", action="store_true", help="print every result vertically (like \\G)")
    p.add_argument("-r", "--raw", action="store_true", help="no escaping of tabs/newlines in batch output")
    p.add_argument("-v", "--verbose", action="count", default=0,
                   help="echo statements (-vv: also row counts, -vvv: also timings)")
    p.add_argument("-f", "--force", action="store_true", help="report errors and continue")
    p.add_argument("--show-warnings", action="store_true", help="print warnings after every statement")
    p.add_argument("--progress", action="store_true", help="show embedding progress in batch mode")
    p.add_argument("--no-progress", action="store_true", help="never show embedding progress")
    p.add_argument("--progress-delay", type=float, default=1.0, metavar="SECONDS",
                   help="how long a statement runs before its progress shows (default 1)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="interrupt any statement running longer than this")
    p.add_argument("--full-vectors", action="store_true",
                   help="print whole vectors in interactive tables (default: abbreviated; see 'vectors')")
    p.add_argument("--pager", nargs="?", const="", metavar="CMD",
                   help="pipe interactive results through CMD (default: $PAGER), like the pager command")
    p.add_argument("--tee", metavar="FILE", help="append statements and results to FILE (like tee)")
    p.add_argument("--delimiter", default=";", metavar="STR", help="statement delimiter (default ;)")
    p.add_argument("--prompt", metavar="FORMAT", help="the prompt, with mysql's escapes (\\d, \\c, ...)")
    p.add_argument("-V", "--version", action="version", version=f"tessera (tesseradb) {tesseradb.__version__}")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["embed"]:           # tessera embed SOURCE OUTPUT [options]: Ray ingest into shards
        from tesseradb.clients.shell.embed_command import main as embed_main
        return embed_main(argv[1:])
    if argv[:1] == ["model"]:           # tessera model pull NAME[@REVISION]: the one explicit download
        from tesseradb.clients.shell.model_cmd import main as model_main
        return model_main(argv[1:])
    if argv[:1] == ["index"]:           # tessera index DB DIR [--watch]: a folder of documents, kept in sync
        from tesseradb.clients.shell.index_cmd import main as index_main
        return index_main(argv[1:])
    if argv[:1] == ["backup"]:          # tessera backup DB DEST: BACKUP TO, from the command line
        from tesseradb.clients.shell.backup_command import main as backup_main
        return backup_main(argv[1:])
    if argv[:1] == ["mcp"]:             # tessera mcp DB [options]: MCP tools for LLM agents
        from tesseradb.clients.mcp.cli import main as mcp_main
        return mcp_main(argv[1:])
    if argv[:1] == ["serve"]:           # tessera serve DB [options]: the MySQL-protocol server
        from tesseradb.clients.server.cli import main as serve_main
        return serve_main(argv[1:])
    args = parser().parse_args(argv)
    if args.database_file and args.database and args.database_file != args.database:
        sys.stderr.write(f"tessera: two database files given ('{args.database}' and -D '{args.database_file}')\n")
        return 2
    args.database = args.database_file or args.database
    if args.user is not None or args.password is not None:
        sys.stderr.write(CREDENTIALS_NOTE)
    warnings.filterwarnings("ignore", category=tesseradb.DataTruncatedWarning)   # the shell counts warnings itself
    interactive = sys.stdin.isatty() and args.execute is None and not args.batch
    if args.database is None:
        sys.stderr.write(MEMORY_NOTE)
    path = args.database or ":memory:"
    created = lazy_file.Creation(path)
    try:
        con = tesseradb.connect(path, autocommit=True, statement_timeout=args.timeout)
    except tesseradb.Error as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    options = Options(
        interactive=interactive,
        table=args.table or (args.execute is not None and sys.stdout.isatty() and not args.batch),
        vertical=args.vertical, headers=not args.skip_column_names, raw=args.raw, verbose=args.verbose,
        force=args.force, show_warnings=args.show_warnings, full_vectors=args.full_vectors,
        delimiter=args.delimiter or ";", mode=args.mode)
    if args.prompt:
        options.prompt = args.prompt
    show_progress = not args.no_progress and (interactive or args.progress)
    progress = Progress(sys.stderr, enabled=show_progress, delay=args.progress_delay)
    label = os.path.abspath(path) if args.database else "in-memory (nothing is saved)"
    runner = Runner(con, options, sys.stdout, sys.stderr, progress, label)
    startup_commands(runner, args)
    try:
        if interactive:
            from tesseradb.clients.shell import repl
            repl.run(runner, tesseradb.__version__)
        else:
            run_batch(runner, args.execute)
    except ScriptAborted:
        pass
    except QuitShell:
        pass
    except BrokenPipeError:
        _silence_stdout()
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("Aborted\n")
        runner.failures += 1
    finally:
        runner.close()
        try:
            created.forget_if_unused(con)       # sqlite3's habit: nothing written, no file left behind
            con.close()
        except tesseradb.Error as exc:
            sys.stderr.write(f"{exc}\n")
        created.remove_if_unused()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()
    return 1 if runner.failures else 0


def startup_commands(runner: Runner, args: argparse.Namespace) -> None:
    """``--pager`` and ``--tee`` act as the commands of the same names typed first."""
    if args.pager is not None and runner.options.interactive:
        runner.sink.pager = args.pager or os.environ.get("PAGER") or None
    if args.tee:
        try:
            runner.sink.open_tee(args.tee)
            runner.last_tee = args.tee
        except OSError as exc:
            sys.stderr.write(f"tessera: can't open tee file '{args.tee}': {exc.strerror}\n")


def run_batch(runner: Runner, execute: str | None) -> None:
    """Statements from -e or standard input, streamed line by line."""
    scanner = Scanner(runner.options.delimiter)
    lines = execute.splitlines(keepends=True) if execute is not None else sys.stdin
    for line in lines:
        runner.run_items(scanner.feed(line))
    runner.run_items(scanner.finish())


def _silence_stdout() -> None:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


if __name__ == "__main__":
    sys.exit(main())
