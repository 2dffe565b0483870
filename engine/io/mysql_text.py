"""MySQL's text format for ``LOAD DATA ... FIELDS ... LINES ...``: Python's csv module splits records
and fields; one regular-expression pass before it turns MySQL's conventions into what csv can read.

csv cannot express MySQL's escapes by itself: its ``escapechar`` only makes the next character
literal, while MySQL's ``\\n`` is a newline, ``\\t`` a tab, ``\\0`` a NUL and ``\\N`` NULL; nor can it
take a multi-character field separator or any line terminator (it always ends records at ``\\r`` and
``\\n``). So the pass rewrites the file's text, streamed, into a private form: an escape becomes the
character it means (a newline as a private mark, so csv keeps it in the field), MySQL's escape of
a separator or quote becomes csv's own escape (a private character), a multi-character separator
a private separator, the line terminator csv's ``\\n``, and a real ``\\r``/``\\n``/NUL a private mark.
Each field csv returns is turned back with one ``str.translate``. The private characters are five
of Unicode's private use area (U+E000-U+E005); a file that contains one is refused."""
from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass

from tesseradb import errors
from tesseradb.io.formats import BATCH_BYTES, BATCH_ROWS, BadRow, Batch

ESC, SEP, CR, LF, NUL, NULL = "\ue000", "\ue001", "\ue002", "\ue003", "\ue004", "\ue005"
PRIVATE = ESC + SEP + CR + LF + NUL + NULL
ESCAPES = {"0": "\0", "b": "\b", "n": "\n", "r": "\r", "t": "\t", "Z": "\x1a", "N": NULL}
MARKS = {"\r": CR, "\n": LF, "\0": NUL}
CHUNK = 1 << 20                  # characters read at a time
CHARSETS = {"utf8": "utf-8-sig", "utf8mb4": "utf-8-sig", "utf8mb3": "utf-8-sig", "ascii": "ascii",
            "latin1": "cp1252", "binary": "utf-8-sig", "utf16": "utf-16", "utf16le": "utf-16-le"}
BAD_SEPARATOR = "Field separator argument is not what is expected; check the manual"


@dataclass(frozen=True)
class TextFormat:
    """MySQL's defaults are those of a clause that is not given."""
    terminated: str = "\t"
    enclosed: str = ""
    escaped: str = "\\"
    starting: str = ""
    line_end: str = "\n"
    encoding: str = "utf-8-sig"


def text_format(fields, lines, charset: str | None) -> TextFormat:
    """The format of ast.LoadFields / ast.LoadLines; ERROR 1083 as MySQL for what it refuses."""
    values = {k: v for k, v in vars(fields).items() if v is not None and k != "optionally"} if fields else {}
    if lines is not None:
        values.update({"starting": lines.starting, "line_end": lines.terminated})
    values = {k: v for k, v in values.items() if v is not None}
    if charset is not None:
        if charset not in CHARSETS:
            raise errors.ProgrammingError(f"Unknown character set: '{charset}'", errno=1115)
        values["encoding"] = CHARSETS[charset]
    fmt = TextFormat(**values)
    if len(fmt.enclosed) > 1 or len(fmt.escaped) > 1 or not fmt.line_end or fmt.terminated == fmt.line_end:
        raise errors.ProgrammingError(BAD_SEPARATOR, errno=1083)
    if not fmt.terminated:
        raise errors.NotSupportedError("LOAD DATA with FIELDS TERMINATED BY '' (fixed-width rows) is not "
                                       "supported; name a separator")
    if any(c in PRIVATE for c in fmt.terminated + fmt.enclosed + fmt.escaped + fmt.starting + fmt.line_end):
        raise errors.ProgrammingError(BAD_SEPARATOR, errno=1083)
    return fmt


class _Encoder:
    """The pass before csv (see the module's docstring), over text that arrives in chunks."""

    def __init__(self, fmt: TextFormat):
        self.fmt = fmt
        self.own_separator = len(fmt.terminated) == 1 and fmt.terminated not in MARKS
        self.delimiter = fmt.terminated if self.own_separator else SEP
        words = [fmt.line_end] if fmt.line_end != "\n" else []
        words += [] if self.own_separator else [fmt.terminated]
        parts = ([re.escape(fmt.escaped) + "(.)"] if fmt.escaped else [])
        marks = "\r\0" + ("" if fmt.line_end == "\n" else "\n")     # "\n" ends csv's records
        parts += [re.escape(w) for w in sorted(words, key=len, reverse=True)] + ["[" + marks + PRIVATE + "]"]
        self.pattern = re.compile("|".join(parts), re.DOTALL)
        self.keep = max(len(fmt.line_end), len(fmt.terminated), 2)
        self.back = str.maketrans({CR: "\r", LF: "\n", NUL: "\0", SEP: fmt.terminated,
                                   **({"\n": fmt.line_end} if fmt.line_end != "\n" else {}), NULL: "N"})

    def _literal(self, ch: str) -> str:
        if ch in MARKS:
            return MARKS[ch]
        if ch == self.fmt.enclosed or ch == self.delimiter or ch == NULL:
            return ch if ch == NULL else ESC + ch
        return ch

    def _replace(self, match: re.Match) -> str:
        escaped = match.group(1) if self.fmt.escaped else None
        if escaped is not None and escaped not in PRIVATE:
            return self._literal(ESCAPES.get(escaped, escaped))
        text = match.group(0) if escaped is None else escaped
        if text == self.fmt.line_end:
            return "\n"
        if text == self.fmt.terminated and not self.own_separator:
            return SEP
        if text in PRIVATE:
            raise BadRow(f"the file contains U+{ord(text):04X}, a private use character that LOAD DATA's "
                         "FIELDS/LINES reader keeps for itself")
        return MARKS[text]

    def encode(self, text: str, final: bool) -> tuple[str, str]:
        """(the encoded part, the tail kept for the next chunk: an escape or separator may straddle)."""
        if final:
            return self.pattern.sub(self._replace, text), ""
        cut, out, pos = len(text) - self.keep, [], 0
        for match in self.pattern.finditer(text):
            if match.start() >= cut:
                break
            out += [text[pos:match.start()], self._replace(match)]
            pos = match.end()
        done = max(pos, cut)
        out.append(text[pos:done])
        return "".join(out), text[done:]

    def decode(self, value: str) -> str | None:
        return None if value == NULL else value.translate(self.back)


class _Lines:
    """The encoded text as lines for csv; LINES STARTING BY applies where a record starts: a line
    without the prefix is skipped, and whatever comes before the prefix is dropped."""

    def __init__(self, raw, fmt: TextFormat, encoder: _Encoder):
        self.text = io.TextIOWrapper(raw, encoding=fmt.encoding, newline="")
        self.encoder, self.lines = encoder, self._lines()
        self.prefix = encoder.encode(fmt.starting, True)[0]
        self.at_start, self.number, self.first = True, 0, 0

    def _lines(self) -> Iterator[str]:
        carry, pending = "", ""
        while True:
            chunk = self.text.read(CHUNK)
            encoded, carry = self.encoder.encode(carry + chunk, final=not chunk)
            parts = (pending + encoded).split("\n")
            pending = parts.pop()
            yield from (p + "\n" for p in parts)
            if not chunk:
                break
        if pending:
            yield pending

    def __iter__(self) -> "_Lines":
        return self

    def __next__(self) -> str:
        while True:
            line = next(self.lines)
            self.number += 1
            if not self.at_start:
                return line
            at = line.find(self.prefix) if self.prefix else 0
            if at >= 0:
                self.at_start, self.first = False, self.number
                return line[at + len(self.prefix):]


def records(path: str, fmt: TextFormat, skip: int) -> Iterator[Batch]:
    """Batches of the file's records (lists of str, None for NULL), after the first ``skip``; a
    Batch's ``names`` is empty (the columns come from the statement) and ``lines`` are where each
    record starts, counted in LINES TERMINATED BY."""
    encoder = _Encoder(fmt)
    csv.field_size_limit(max(csv.field_size_limit(), 2**31 - 1))
    size = max(os.path.getsize(path), 1)
    with open(path, "rb") as raw:
        source = _Lines(raw, fmt, encoder)
        reader = csv.reader(source, delimiter=encoder.delimiter, quotechar=fmt.enclosed or None,
                            quoting=csv.QUOTE_MINIMAL if fmt.enclosed else csv.QUOTE_NONE,
                            escapechar=ESC, doublequote=True, strict=False)
        rows, lines, text_bytes = [], [], 0
        for record in _checked(reader, source):
            source.at_start = True
            if not record or skip > 0:
                skip -= bool(record)
                continue
            rows.append([encoder.decode(v) for v in record])
            lines.append(source.first)
            text_bytes += sum(map(len, record))
            if len(rows) >= BATCH_ROWS or text_bytes >= BATCH_BYTES:
                yield Batch([], rows, lines, min(raw.tell() / size, 0.999))
                rows, lines, text_bytes = [], [], 0
        if rows:
            yield Batch([], rows, lines, 1.0)


def _checked(reader: Iterator[list[str]], source: _Lines) -> Iterator[list[str]]:
    try:
        yield from reader
    except csv.Error as exc:
        raise BadRow(f"cannot read the record: {exc}", source.first or None) from None
