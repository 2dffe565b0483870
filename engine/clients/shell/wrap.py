"""Long and multi-line text in result tables: each cell is cut into lines that stay inside its column.

A passage (``knn_chunk_text()``, ``SHOW CHUNKS``) holds newlines and runs to hundreds of characters.
Printed raw, a newline breaks the table's borders and a long line makes every row as wide as the
longest text. Here a cell's text is split at its newlines, and, when the table would be wider than
``limit`` display columns (the terminal), the widest columns are narrowed and their lines wrapped at
spaces (or anywhere, for text without spaces such as CJK). Widths are display columns (wcwidth).
"""
from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence

MIN_WIDTH = 16          # a wrapped column keeps at least this many display columns

Width = Callable[[str], int]


def caps(widths: Sequence[int], limit: int | None) -> list[int | None]:
    """Per column, the width to wrap at (None: as wide as its text), so that the bordered table
    (``| a | b |``: 3 columns per cell plus 1) fits in ``limit``; the widest columns give way first."""
    out: list[int | None] = [None] * len(widths)
    if not limit:
        return out
    current = list(widths)
    over = sum(w + 3 for w in current) + 1 - limit
    while over > 0:
        widest = max(range(len(current)), key=current.__getitem__)
        if current[widest] <= MIN_WIDTH:
            break
        second = max((w for i, w in enumerate(current) if i != widest), default=0)
        new = max(MIN_WIDTH, current[widest] - over, min(second, current[widest] - 1))
        over -= current[widest] - new
        current[widest] = out[widest] = new
    return out


def _wrap_line(line: str, cap: int, width: Width) -> list[str]:
    out, current, used = [], "", 0
    for word in _words(line):
        w = width(word)
        if used + w > cap and current:
            out.append(current.rstrip(" "))
            current, used = "", 0
            word = word.lstrip(" ")
            w = width(word)
        while w > cap:                      # a word wider than the column: cut it
            head, rest = _cut(word, cap, width)
            out.append(head)
            word, w = rest, width(rest)
        current += word
        used += w
    out.append(current.rstrip(" ") if out else current)
    return out


def _words(line: str) -> list[str]:
    """Pieces that end after a space (each keeps its trailing spaces)."""
    pieces, start = [], 0
    for i, ch in enumerate(line):
        if ch == " " and (i + 1 == len(line) or line[i + 1] != " "):
            pieces.append(line[start:i + 1])
            start = i + 1
    if start < len(line):
        pieces.append(line[start:])
    return pieces


def _cut(word: str, cap: int, width: Width) -> tuple[str, str]:
    used = 0
    for i, ch in enumerate(word):
        used += width(ch)
        if used > cap:
            return word[:max(i, 1)], word[max(i, 1):]
    return word, ""


def lines(text: str, cap: int | None, width: Width) -> list[str]:
    """The lines of one cell: its own newlines, then wrapping at ``cap`` display columns."""
    parts = text.replace("\r\n", "\n").split("\n")
    if cap is None:
        return parts
    return [piece for part in parts for piece in _wrap_line(part, cap, width)]


def physical_rows(row: Sequence[str], row_caps: Sequence[int | None], width: Width) -> list[list[str]]:
    """One logical row as the printed rows it needs (short cells padded with empty lines)."""
    cells = [lines(text, cap, width) for text, cap in zip(row, row_caps)]
    height = max((len(c) for c in cells), default=1)
    return [[c[i] if i < len(c) else "" for c in cells] for i in range(height)]


def continued(text: str, indent: int) -> str:
    """A multi-line value in ``\\G`` output: continuation lines start under the value's first line."""
    first, *rest = text.replace("\r\n", "\n").split("\n")
    return "\n".join([first] + [(" " * indent + line) if line else "" for line in rest])


def rows(texts: Sequence[Sequence[str]], names: Sequence[str] | None, limit: int | None,
         width: Width) -> list[list[str]]:
    """The printed rows of a table's cell texts: newlines split, columns wrapped to fit ``limit``."""
    if not texts:
        return []
    natural = [max([width(names[i]) if names else 0]
                   + [width(line) for row in texts for line in lines(row[i], None, width)])
               for i in range(len(texts[0]))]
    row_caps = caps(natural, limit)
    return [part for row in texts for part in physical_rows(row, row_caps, width)]


def terminal_width() -> int | None:
    """The terminal's width in columns (None when it cannot be told)."""
    columns = shutil.get_terminal_size((0, 0)).columns
    return columns or None
