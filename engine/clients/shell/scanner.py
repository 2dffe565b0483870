"""Cut input into statements and client commands the way the mysql client does.

A statement ends at the delimiter (``;`` unless ``delimiter`` changed it), ``\\g`` or ``\\G`` (vertical
output) outside quotes and comments; ``\\c`` clears the statement being typed. Client commands
(``source f``, ``pager less``, ``use db``...) are recognised at the start of a statement and take the
rest of their line; backslash forms (``\\.``, ``\\P``, ``\\!``...) work anywhere outside quotes.
Every mysql client command is a :class:`Command` -- the ones we do not support too, so that the
shell can refuse them instead of sending them as SQL. The scanner is incremental: the shell feeds it
whole lines and asks whether a statement is still open (to show the continuation prompt).
"""
from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Statement:
    text: str          # without its terminator
    line: int          # 1-based line of its first character that is not a comment
    vertical: bool = False


@dataclass(frozen=True)
class Command:
    name: str          # canonical name: source, help, quit, status, pager, tee, delimiter, ...
    arg: str
    line: int
    text: str = ""     # print (\\p): the statement being typed when the command came


Item = Statement | Command

# Long-form client commands (mysql's ``help`` list): recognised only where a statement would start.
WORD_COMMANDS = {
    "source": "source", "help": "help", "?": "help", "quit": "quit", "exit": "quit",
    "status": "status", "warnings": "warnings", "nowarning": "nowarning",
    "pager": "pager", "nopager": "nopager", "tee": "tee", "notee": "notee", "system": "system",
    "use": "use", "delimiter": "delimiter", "prompt": "prompt", "charset": "charset",
    "rehash": "rehash", "print": "print", "vectors": "vectors",
    "connect": "connect", "edit": "edit", "resetconnection": "resetconnection",
    "query_attributes": "query_attributes", "ssl_session_data_print": "ssl_session_data_print",
}
# Commands that take no argument: with one, the line is SQL (e.g. ``status = 1`` inside a statement).
NO_ARGUMENT = {"quit", "status", "warnings", "nowarning", "nopager", "notee", "rehash", "print",
               "resetconnection"}
# Words that end or clear the statement being typed when alone on a line: \g, \G, \c spelled out.
LINE_WORDS = {"go", "ego", "clear"}
# Backslash commands: recognised anywhere outside quotes and comments.
UNKNOWN = "unknown command"       # a backslash letter that names no command (never sent as SQL)
BACKSLASH_COMMANDS = {
    ".": "source", "h": "help", "?": "help", "q": "quit", "s": "status", "W": "warnings",
    "w": "nowarning", "P": "pager", "n": "nopager", "T": "tee", "t": "notee", "!": "system",
    "u": "use", "d": "delimiter", "R": "prompt", "C": "charset", "#": "rehash", "p": "print",
    "r": "connect", "e": "edit", "x": "resetconnection",
}
# Backslash commands that take the rest of the line as their argument.
REST_OF_LINE = {"source", "pager", "tee", "system", "use", "delimiter", "prompt", "charset", "connect"}
_WORD = re.compile(r"\s*(\?|[A-Za-z_]+)(?=\s|;|$)")


class Scanner:
    def __init__(self, delimiter: str = ";") -> None:
        self.delimiter = delimiter
        self.buf: list[str] = []
        self.line = 1                   # line of the next character fed
        self.start_line: int | None = None
        self.quote: str | None = None   # ' " or ` while inside a quoted string or name
        self.block_comment = False

    @property
    def pending(self) -> bool:
        """True while a statement (or a quote or comment) is open."""
        return self.start_line is not None or self.quote is not None or self.block_comment

    @property
    def prompt_state(self) -> str:
        """What mysql's continuation prompt shows: ->, or '> "> `> in a quote, /*> in a comment."""
        if self.quote:
            return self.quote + ">"
        return "/*>" if self.block_comment else "->"

    def feed(self, text: str) -> list[Item]:
        """Scan ``text`` (whole lines); return the statements and commands completed by it."""
        out: list[Item] = []
        for line in text.splitlines(keepends=True):
            self._scan_line(line, out)
            self.line += 1
        return out

    def finish(self) -> list[Item]:
        """End of input: an unterminated statement still runs (as the mysql client does)."""
        out: list[Item] = []
        if self.start_line is not None:
            self._emit(out, vertical=False)
        self.quote, self.block_comment = None, False
        return out

    def clear(self) -> None:
        self.buf, self.start_line, self.quote, self.block_comment = [], None, None, False

    # -- scanning -------------------------------------------------------------------------------
    def _scan_line(self, line: str, out: list[Item]) -> None:
        if self.quote is None and not self.block_comment:
            word = _strip_delimiter(line.strip(), self.delimiter).lower()
            if word in LINE_WORDS:            # go / ego / clear alone on a line, as in mysql
                if word == "clear":
                    self.buf, self.start_line = [], None
                else:
                    self._emit(out, vertical=word == "ego")
                return
        if self.start_line is None and self.quote is None and not self.block_comment:
            command = _word_command(line, self.line, self.delimiter)
            if command is not None:
                self._command(command, out)
                return
        i, n = 0, len(line)
        while i < n:
            ch = line[i]
            if self.block_comment:
                end = line.find("*/", i)
                if end < 0:
                    self.buf.append(line[i:])
                    return
                self.buf.append(line[i:end + 2])
                self.block_comment, i = False, end + 2
                continue
            if self.quote is not None:
                i = self._scan_quoted(line, i)
                continue
            if ch in "'\"`":
                self._code(line[i])
                self.quote, i = ch, i + 1
                continue
            if ch == "#" or (line.startswith("--", i) and (i + 2 >= n or line[i + 2] in " \t\r\n")):
                self.buf.append(line[i:])
                return
            if line.startswith("/*", i):
                self.block_comment = True
                self.buf.append("/*")
                i += 2
                continue
            if line.startswith(self.delimiter, i):
                self._emit(out, vertical=False)
                i += len(self.delimiter)
                continue
            if ch == "\\" and i + 1 < n:
                i = self._backslash(line, i, out)
                continue
            if ch.isspace():
                self.buf.append(ch)
            else:
                self._code(ch)
            i += 1

    def _scan_quoted(self, line: str, i: int) -> int:
        q = self.quote
        j = i
        while j < len(line):
            c = line[j]
            if c == "\\" and q != "`":
                j += 2
                continue
            if c == q:
                if line.startswith(q * 2, j):
                    j += 2
                    continue
                self.buf.append(line[i:j + 1])
                self.quote = None
                return j + 1
            j += 1
        self.buf.append(line[i:])
        return len(line)

    def _backslash(self, line: str, i: int, out: list[Item]) -> int:
        c = line[i + 1]
        if c in "gG":
            self._emit(out, vertical=c == "G")
            return i + 2
        if c == "c":
            self.buf, self.start_line = [], None
            return i + 2
        name = BACKSLASH_COMMANDS.get(c)
        if name is None and c.isalpha():          # the mysql client: \j is "Unknown command '\j'."
            out.append(Command(UNKNOWN, "\\" + c, self.line))
            return i + 2
        if name is None:
            self._code(line[i:i + 2])
            return i + 2
        if name in REST_OF_LINE:             # \. file, \P less, \! ls: the rest of the line
            rest = line[i + 2:].strip()
            arg = _delimiter_arg(rest) if name == "delimiter" else _strip_delimiter(rest, self.delimiter)
            if name == "prompt":
                arg = _prompt_arg(line[i + 2:], self.delimiter)
            self._command(Command(name, arg, self.line), out)
            return len(line)
        self._command(Command(name, "", self.line, "".join(self.buf).strip()), out)
        return i + 2

    def _command(self, command: Command, out: list[Item]) -> None:
        if command.name == "delimiter" and _valid_delimiter(command.arg):
            self.delimiter = command.arg
        out.append(command)

    def _code(self, text: str) -> None:
        if self.start_line is None:
            self.start_line = self.line
            self.buf = []                      # drop comments and blank space before the statement
        self.buf.append(text)

    def _emit(self, out: list[Item], vertical: bool) -> None:
        text = "".join(self.buf).strip()
        if self.start_line is not None and text:
            out.extend(self._statements(text, self.start_line, vertical))
        self.buf, self.start_line = [], None

    def _statements(self, text: str, line: int, vertical: bool) -> list[Statement]:
        """Under a custom delimiter, ``SELECT 1; SELECT 2//`` is two statements run in order, as the
        mysql client sends them (the server runs both); ``\\G`` applies to the last one."""
        if self.delimiter == ";" or ";" not in text:
            return [Statement(text, line, vertical)]
        inner = Scanner(";")
        parts = [p for p in inner.feed(text + "\n") + inner.finish() if isinstance(p, Statement)]
        if not parts:
            return [Statement(text, line, vertical)]
        parts[-1] = Statement(parts[-1].text, parts[-1].line, vertical or parts[-1].vertical)
        return [Statement(p.text, line + p.line - 1, p.vertical) for p in parts]


def _word_command(line: str, number: int, delimiter: str = ";") -> Command | None:
    match = _WORD.match(line)
    if match is None:
        return None
    name = WORD_COMMANDS.get(match.group(1).lower())
    if name is None:
        return None
    rest = line[match.end():].strip()
    arg = _delimiter_arg(rest) if name == "delimiter" else _strip_delimiter(rest, delimiter)
    if name == "prompt":                    # a prompt keeps its trailing spaces: "prompt \d> "
        arg = _prompt_arg(line[match.end():], delimiter)
    if name in NO_ARGUMENT and arg:
        return None                         # e.g. "status = 1" is not the status command
    return Command(name, arg, number)


def _strip_delimiter(text: str, delimiter: str) -> str:
    """A command's argument without the statement delimiter after it (``source f.sql;``)."""
    text = text.strip()
    while text.endswith(delimiter) or text.endswith(";"):
        text = text[:-len(delimiter)] if text.endswith(delimiter) else text[:-1]
        text = text.rstrip()
    return text


def _prompt_arg(rest: str, delimiter: str) -> str:
    text = rest.rstrip("\r\n")
    text = text[1:] if text[:1] in (" ", "\t") else text
    stripped = text.rstrip()
    return stripped[:-len(delimiter)] if stripped.endswith(delimiter) else text


def _delimiter_arg(rest: str) -> str:
    """``delimiter //``: the first word after the command (mysql also reads a quoted one)."""
    word = rest.split(None, 1)[0] if rest.split() else ""
    if len(word) > 1 and word[0] in "'\"`" and word.endswith(word[0]):
        word = word[1:-1]
    return word


def _valid_delimiter(text: str) -> bool:
    return bool(text) and "\\" not in text


def split_script(text: str, delimiter: str = ";") -> list[Item]:
    """All statements and commands of a whole script."""
    scanner = Scanner(delimiter)
    return scanner.feed(text) + scanner.finish()


def is_complete(text: str, delimiter: str = ";") -> bool:
    """True when typed text ends a statement or command (the shell then runs it on Enter)."""
    scanner = Scanner(delimiter)
    scanner.feed(text if text.endswith("\n") else text + "\n")
    return not scanner.pending or ends_with_print(text)


def ends_with_print(text: str) -> bool:
    """Typed text ending in ``\\p``: print the statement so far and go on editing it."""
    return text.rstrip().endswith("\\p") and not text.rstrip().endswith("\\\\p")
