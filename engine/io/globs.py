"""LOAD DATA's path: one file, or a glob (``shards/*.parquet``, ``docs/**/*.md``) with ``*``, ``?``,
``[...]`` and ``**`` (any number of folders), as Python's ``glob`` and the shells read them: names
starting with ``.`` match only a part that starts with ``.``, and matching is case-sensitive.

The walk follows symbolic links to folders (as ``glob`` does) but never into a folder it is already
inside, so a link loop ends instead of repeating the tree until the path is too long. Confined to a
folder (``within``, the server's ``--secure-file-priv``), it never follows a link whose target lies
outside it, whether or not the target exists: such links are collected in ``outside`` instead. A pattern's
*prefix* is its fixed leading folders (``docs`` for ``docs/**/*.md``, the folder of a plain file);
document loads name each file by its path relative to it (``tesseradb.io.documents``)."""
from __future__ import annotations

import fnmatch
import glob
import os
from collections.abc import Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Pattern:
    text: str                   # as written
    prefix: str                 # the fixed folders before the first part with a wildcard ('.' when none)
    parts: tuple[str, ...]      # the parts after the prefix: ('**', '*.md')

    @property
    def is_glob(self) -> bool:
        return glob.has_magic(self.text)


def split(pattern: str) -> Pattern:
    """``docs/**/*.md`` -> prefix ``docs``, parts ``('**', '*.md')``; ``notes/a.md`` -> ``notes``, ``('a.md',)``."""
    parts = pattern.split(os.sep)
    fixed = len(parts) - 1
    for n, part in enumerate(parts[:-1]):
        if glob.has_magic(part):
            fixed = n
            break
    head = os.sep.join(parts[:fixed])
    if not head and pattern.startswith(os.sep):
        head = os.sep
    rest = tuple(p for p in parts[fixed:] if p)
    if rest[-1:] == ("**",):        # 'docs/**': every file below docs
        rest += ("*",)
    return Pattern(pattern, head or ".", rest)


@dataclass(frozen=True)
class _Guard:
    within: str                 # resolved folder the walk may not leave
    outside: set[str]           # links met that lead out of it (paths as the walk found them)

    def leaves(self, path: str) -> bool:
        """A link whose target is outside ``within`` (checked without following it to see what it is)."""
        if not os.path.islink(path):
            return False                # the walk's folder is inside, so a plain entry of it is too
        real = os.path.realpath(path)
        if os.path.commonpath([real, self.within]) == self.within:
            return False
        self.outside.add(path)
        return True


def expand(pattern: str, within: str | None = None, outside: set[str] | None = None) -> list[str]:
    """The file named, or every file the glob matches, in name order; [] when nothing matches.
    ``within`` (a resolved folder the pattern's prefix is inside): links leading out of it are not
    followed and are added to ``outside``."""
    guard = _Guard(within, outside if outside is not None else set()) if within is not None else None
    p = split(pattern)
    if not p.is_glob:
        return [pattern] if os.path.isfile(pattern) else []
    start = "" if p.prefix == "." and not pattern.startswith("." + os.sep) else p.prefix
    if start and not os.path.isdir(start):
        return []
    found = set(_walk(start, p.parts, frozenset(), guard))
    return sorted(found)


def relative(p: Pattern, path: str) -> str:
    """``path`` (one of ``expand``'s) relative to the pattern's prefix, ``/``-separated."""
    return os.path.relpath(path, p.prefix).replace(os.sep, "/")


def matches(p: Pattern, rel: str) -> bool:
    """Would the pattern name the file at ``rel`` (relative to its prefix) if it existed?"""
    return _match(p.parts, tuple(rel.split("/")))


def _match(parts: tuple[str, ...], names: tuple[str, ...]) -> bool:
    if not parts:
        return not names
    head = parts[0]
    if head == "**":
        return _match(parts[1:], names) or (bool(names) and not _hidden(names[0], "*")
                                            and _match(parts, names[1:]))
    return bool(names) and _name_matches(head, names[0]) and _match(parts[1:], names[1:])


def _hidden(name: str, part: str) -> bool:
    return name.startswith(".") and not part.startswith(".")


def _name_matches(part: str, name: str) -> bool:
    if not glob.has_magic(part):
        return part == name
    return not _hidden(name, part) and fnmatch.fnmatchcase(name, part)


def _walk(folder: str, parts: tuple[str, ...], inside: frozenset, guard: _Guard | None) -> Iterator[str]:
    """Files under ``folder`` that ``parts`` match; ``inside`` holds the folders (device, inode) the
    walk is in, so a link back to one of them is not entered again; ``guard`` keeps it in a folder."""
    head, rest = parts[0], parts[1:]
    try:
        here = os.stat(folder or ".")
    except OSError:
        return
    inside = inside | {(here.st_dev, here.st_ino)}
    if head == "**":
        if rest:
            yield from _walk(folder, rest, inside, guard)
        for name in _folders(folder, inside, guard):
            yield from _walk(os.path.join(folder, name), parts, inside, guard)
        return
    for name in _entries(folder, head):
        path = os.path.join(folder, name)
        if guard is not None and guard.leaves(path):
            continue
        if not rest:
            if os.path.isfile(path):
                yield path
        elif os.path.isdir(path):
            yield from _walk(path, rest, inside, guard)


def _entries(folder: str, part: str) -> list[str]:
    if not glob.has_magic(part):
        return [part] if os.path.lexists(os.path.join(folder, part)) else []
    try:
        names = os.listdir(folder or ".")
    except OSError:
        return []
    return [n for n in names if _name_matches(part, n)]


def _folders(folder: str, inside: frozenset, guard: _Guard | None) -> list[str]:
    """The sub-folders ``**`` descends into: not hidden, not one the walk is already inside, not a
    link out of the guard's folder."""
    out = []
    try:
        entries = list(os.scandir(folder or "."))
    except OSError:
        return out
    for entry in entries:
        if entry.name.startswith("."):
            continue
        if guard is not None and entry.is_symlink() and guard.leaves(entry.path):
            continue
        try:
            if not entry.is_dir():
                continue
            st = entry.stat()
        except OSError:
            continue
        if (st.st_dev, st.st_ino) not in inside:
            out.append(entry.name)
    return out
