"""Which files SQL may read and write: MySQL's ``secure_file_priv``, in one place.

Every statement that names a file of the server's machine comes here: ``LOAD DATA INFILE`` (any
format, a single file or a glob, and the document loads and SYNC that share its expansion) asks
:meth:`FileAccess.expand` for the files it reads; ``SELECT ... INTO OUTFILE`` and ``BACKUP TO`` ask
:meth:`FileAccess.target` before they run and :meth:`FileAccess.publish` for the final rename.

The rule, by ``secure_file_priv`` (``tesseradb.connect(..., secure_file_priv=...)``, ``tessera serve
--secure-file-priv DIR``):

- ``None``: unrestricted, as sqlite3 is for an embedded program (the DB-API default); INTO OUTFILE
  replaces an existing file.
- a directory: a path (relative ones are taken inside the directory) is resolved with every symlink
  followed and must stay inside the directory, and so must a glob's fixed folders; a glob has no
  ``..`` after its first wildcard. The glob's walk does not follow a link leading out of the
  directory (file or folder, whether its target exists or not): it is skipped, and the statement
  names it in a Warning (1290) when given ``warn``, else is refused. INTO OUTFILE never replaces an
  existing file (MySQL's error 1086).
- ``""``: every file statement is refused (the server's default).

Refusals are MySQL's error 1290 and never name the path, so they do not tell whether a file outside
the directory exists; "not found" names only what the statement itself wrote.
"""
from __future__ import annotations

import glob
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass

from tesseradb import errors

def _refused(why: str) -> errors.Error:
    return errors.OperationalError(f"The server is running with the --secure-file-priv option so it "
                                   f"cannot execute this statement ({why})", errno=1290, sqlstate="HY000")


def not_found(pattern: str) -> errors.Error:
    return errors.OperationalError(f"File '{pattern}' not found (Errcode: 2 - No such file or directory)",
                                   errno=29)


def _regular(path: str) -> bool:
    """A regular file (after symlinks): never a FIFO, a device or a directory, which would block or
    make no sense to read."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


@dataclass(frozen=True)
class FileAccess:
    secure_file_priv: str | None = None

    @property
    def confined(self) -> bool:
        return self.secure_file_priv is not None

    @property
    def root(self) -> str:
        return os.path.realpath(self.secure_file_priv or "")

    def _check_enabled(self) -> None:
        if self.secure_file_priv == "":
            raise _refused("file statements are disabled")
        if self.confined and not os.path.isdir(self.root):
            raise _refused("its directory does not exist")

    def _inside(self, path: str) -> str:
        """``path`` resolved (symlinks followed); refused when it leaves the directory."""
        full = os.path.realpath(os.path.join(self.root, path))
        if os.path.commonpath([full, self.root]) != self.root:
            raise _refused("the file is outside the directory it allows")
        return full

    # -- reading -----------------------------------------------------------------------------
    def expand(self, pattern: str, missing_ok: bool = False,
               warn: Callable[[str], None] | None = None) -> list[str]:
        """The file named, or every regular file a glob pattern ('shards/*.parquet', 'docs/**/*.md')
        matches, in name order; refused or "not found" (``missing_ok``: []) as the rule says. A link
        out of the directory that a glob meets is skipped with ``warn(message)``, or refused without it."""
        if not self.confined:
            return _expand(pattern, missing_ok=missing_ok)
        full = self.located(pattern)
        if not glob.has_magic(pattern):
            if _regular(self._inside(pattern)):
                return [full]
            if missing_ok:
                return []
            raise not_found(pattern)
        outside: set[str] = set()
        from tesseradb.io import globs       # loaded by the first file statement
        paths = [p for p in globs.expand(full, within=self.root, outside=outside) if _regular(p)]
        for link in sorted(outside):
            if warn is None:
                raise _refused("the file is outside the directory it allows")
            warn(f"'{os.path.relpath(link, self.root)}' skipped: a symbolic link leading outside the "
                 "--secure-file-priv directory")
        if not paths and not missing_ok:
            raise not_found(pattern)
        return paths

    def located(self, pattern: str) -> str:
        """Where the files of ``pattern`` are looked for: inside the directory when confined, where
        its fixed folders (resolved) must stay, with no ``..`` after a wildcard; refused before
        anything is looked at otherwise, so a refusal says nothing of what exists outside."""
        if not self.confined:
            return pattern
        self._check_enabled()
        if glob.has_magic(pattern):
            parts = pattern.replace(os.sep, "/").split("/")
            first = next(n for n, part in enumerate(parts) if glob.has_magic(part))
            if ".." in parts[first:]:
                raise _refused("a '..' after a wildcard leaves the folder it names")
            self._inside(_fixed_prefix(pattern) or ".")
        else:
            self._inside(pattern)
        return os.path.join(self.root, pattern)

    # -- model folders -----------------------------------------------------------------------
    def model_folder(self, path: str) -> str:
        """A model folder named by path in ``model_name``: confined, it must lie inside the directory
        (a relative path is taken inside it), as LOAD DATA's files; refused (1290) otherwise. Built-in
        names, remote models and models already in the caches never come here."""
        if not self.confined:
            return path
        self._check_enabled()
        return self._inside(os.path.expanduser(path) if path.startswith("~") else path)

    # -- writing -----------------------------------------------------------------------------
    def target(self, path: str) -> str:
        """The file INTO OUTFILE writes (checked before the SELECT runs)."""
        if not self.confined:
            return path
        self._check_enabled()
        full = self._inside(path)
        if os.path.lexists(full) or os.path.lexists(os.path.join(self.root, path)):
            raise exists(path)
        return full

    def publish(self, tmp: str, path: str, shown: str, replace: bool = True) -> None:
        """Move the finished temporary file into place: unrestricted it replaces an existing file
        (unless ``replace`` is False: BACKUP TO never does); confined it never does (a hard link fails
        atomically when the name exists, and the temporary name is then removed)."""
        if not self.confined and replace:
            os.replace(tmp, path)
            return
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise exists(shown) from None
        os.unlink(tmp)


def exists(path: str) -> errors.Error:
    return errors.OperationalError(f"File '{path}' already exists", errno=1086, sqlstate="HY000")


def _fixed_prefix(pattern: str) -> str:
    """The folders of a glob before its first wildcard ('a/b/*.csv' -> 'a/b')."""
    parts = pattern.replace(os.sep, "/").split("/")
    fixed = []
    for part in parts[:-1]:
        if glob.has_magic(part):
            break
        fixed.append(part)
    return "/".join(fixed) if fixed or not pattern.startswith("/") else "/"


def _expand(pattern: str, missing_ok: bool = False) -> list[str]:
    """``globs.expand`` (``**`` recursive, never re-entering a folder it is inside), regular files only."""
    from tesseradb.io import globs
    paths = [p for p in globs.expand(pattern) if _regular(p)]
    if not paths and not missing_ok:
        raise not_found(pattern)
    return paths


UNRESTRICTED = FileAccess(None)
