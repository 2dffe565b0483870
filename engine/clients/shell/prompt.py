"""The prompt string: ``prompt \\d> `` takes mysql's escapes (``\\d`` database, ``\\c`` statement counter,
``\\R:\\m`` time, ``\\_`` space...); unknown escapes stand for the letter itself."""
from __future__ import annotations

import datetime as _dt
import getpass
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT = "tessera> "


@dataclass(frozen=True)
class Context:
    database: str
    version: str
    delimiter: str
    counter: int


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "tessera"


# escape letter -> text, from the session context and the current time
ESCAPES: dict[str, Callable[[Context, _dt.datetime], str]] = {
    "d": lambda c, t: c.database,
    "v": lambda c, t: c.version,
    "l": lambda c, t: c.delimiter,
    "c": lambda c, t: str(c.counter),
    "h": lambda c, t: "localhost",
    "u": lambda c, t: _user(),
    "U": lambda c, t: _user() + "@localhost",
    "p": lambda c, t: "",
    "D": lambda c, t: t.strftime("%a %b %d %H:%M:%S %Y"),
    "w": lambda c, t: t.strftime("%a"),
    "y": lambda c, t: t.strftime("%y"),
    "Y": lambda c, t: t.strftime("%Y"),
    "o": lambda c, t: str(t.month),
    "O": lambda c, t: t.strftime("%b"),
    "R": lambda c, t: t.strftime("%H"),
    "r": lambda c, t: t.strftime("%I"),
    "m": lambda c, t: t.strftime("%M"),
    "s": lambda c, t: t.strftime("%S"),
    "P": lambda c, t: t.strftime("%p").lower(),
    "n": lambda c, t: "\n",
    "t": lambda c, t: "\t",
    "S": lambda c, t: ";",
    "_": lambda c, t: " ",
    " ": lambda c, t: " ",
}


def expand(template: str, context: Context, now: _dt.datetime | None = None) -> str:
    now = now or _dt.datetime.now()
    out, i = [], 0
    while i < len(template):
        ch = template[i]
        if ch == "\\" and i + 1 < len(template):
            letter = template[i + 1]
            fn = ESCAPES.get(letter)
            out.append(fn(context, now) if fn is not None else letter)
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)
