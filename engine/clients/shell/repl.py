"""The interactive shell: prompt_toolkit with history, completion, MySQL highlighting and the mysql
client's multi-line rule (Enter runs the input once it ends with ``;`` or ``\\G`` or is a command)."""
from __future__ import annotations

import os

from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.lexers import PygmentsLexer
from pygments.lexers.sql import MySqlLexer

from tesseradb.clients.shell.complete import SqlCompleter
from tesseradb.clients.shell.runner import QuitShell, Runner
from tesseradb.clients.shell.scanner import Scanner, ends_with_print, is_complete


def history_path() -> str:
    return os.environ.get("TESSERA_HISTORY") or os.path.join(os.path.expanduser("~"), ".tessera_history")


def _bindings(runner: Runner) -> KeyBindings:
    kb = KeyBindings()

    @kb.add("enter")
    def _enter(event) -> None:
        buf = event.current_buffer
        if buf.complete_state is not None:
            current = buf.complete_state.current_completion
            if current is not None:
                buf.apply_completion(current)
                return
            buf.cancel_completion()
        if is_complete(buf.text, runner.options.delimiter):
            buf.validate_and_handle()
        else:
            buf.insert_text("\n")

    return kb


def _continuation(session: PromptSession, runner: Runner):
    def prompt(width: int, line_number: int, is_soft_wrap: bool) -> str:
        if is_soft_wrap:
            return ""           # a long line wrapped on screen is still one line being edited: no "->"
        lines = session.default_buffer.document.lines[:line_number + 1]
        scanner = Scanner(runner.options.delimiter)
        scanner.feed("\n".join(lines[:line_number]) + "\n")
        return (scanner.prompt_state + " ").rjust(width)
    return prompt


def banner(db_label: str, version: str) -> str:
    return (f"Welcome to the tessera shell (tesseradb {version}).\n"
            f"Database: {db_label}\n"
            "Type 'help;' or '\\h' for help. Type '\\c' to clear the current input statement.\n")


def run(runner: Runner, version: str) -> None:
    completer = SqlCompleter()
    session: PromptSession = PromptSession(
        history=FileHistory(history_path()), lexer=PygmentsLexer(MySqlLexer), completer=completer,
        complete_while_typing=False, multiline=True, key_bindings=_bindings(runner),
        enable_open_in_editor=False)
    session.prompt_continuation = _continuation(session, runner)
    runner.write(banner(runner.db_label, version) + "\n")
    runner.out.flush()
    keep = ""                                    # a statement printed with \\p, typed on
    while True:
        if runner.schema_stale and not runner.last_warnings:
            completer.refresh(runner)            # SHOW TABLES would clear SHOW WARNINGS: wait for none
            runner.schema_stale = False
        try:
            shown = runner.prompt_text()
            text = session.prompt(shown, default=keep)
            keep = ""
        except KeyboardInterrupt:
            continue                             # Ctrl-C at the prompt clears the input
        except EOFError:
            runner.write("Bye\n")
            return
        runner.sink.echo(shown + text + "\n")
        scanner = Scanner(runner.options.delimiter)
        items = scanner.feed(text + "\n")
        if scanner.pending and ends_with_print(text):
            keep = text.rstrip()[:-2].rstrip()
        else:
            items += scanner.finish()
        try:
            runner.run_items(items)
        except QuitShell:
            runner.write("Bye\n")
            return
        except KeyboardInterrupt:
            runner.out.flush()
            runner.err.write("^C\n")
        runner.out.flush()
