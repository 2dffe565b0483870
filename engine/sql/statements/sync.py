"""``LOAD DATA INFILE 'docs/**/*.md' SYNC INTO TABLE t``: make the table's rows from that folder
equal to its files. The engine's bookkeeping (``tesseradb.storage.sources``) keeps, for each row a
SYNC wrote, the table's **root** folder (the first SYNC's glob prefix, resolved), the file's path
under it and its sha256. A file whose sha256 is unchanged is not touched at all; a changed file's row
is replaced (same id; chunk reuse embeds only chunk texts not seen before); a new file is inserted;
a row under the synced folder whose path the glob would match but no file has any more is deleted.
Rows of other statements are never touched. All in the statement's one transaction.

One row per file, whatever folder is synced (issue 32): a folder inside the root updates the rows of
its files (paths stay relative to the root; deleting is limited to that subtree); a folder above the
root widens it (every path is rewritten, no file is read or embedded again); an unrelated folder is
refused, naming the root. (Tables synced from several unrelated folders by 0.3 keep each folder as
a root of its own.)"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from tesseradb import errors
from tesseradb.catalog.tables import Table
from tesseradb.errors import UserError
from tesseradb.grammar import ast
from tesseradb.io import documents, globs
from tesseradb.io.documents import Document
from tesseradb.results import Result
from tesseradb.sql.database import Database
from tesseradb.sql.statements import load_documents
from tesseradb.sql.statements.load_documents import FilesOf, Writer
from tesseradb.storage import sources
from tesseradb.storage.catalog import quote
from tesseradb.storage.sources import Source


@dataclass
class _State:
    """What the table holds now: rows this folder's SYNCs own (by path), and every row's path."""
    owned: dict[str, Source]
    others: dict[str, Source]           # paths another folder's SYNC owns
    paths: dict[str, int]               # every row's path -> id
    snapshots: dict[str, documents.Snapshot] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("added", "changed", "unchanged", "removed", "skipped"), 0))
    names: dict[str, list[str]] = field(default_factory=lambda: {"added": [], "changed": [], "removed": []})


def sync(db: Database, stmt: ast.LoadData, files_of: FilesOf, progress_of: Callable) -> Result:
    table = db.table(stmt.table)
    path_col = _unique_path_column(db, table)
    pattern, folder = _folder(stmt)
    root = _root(db, table, path_col, folder)
    under = _under(folder, root)
    before = len(db.pending_warnings)
    files = load_documents.document_files(stmt, files_of, missing_ok=True)
    links_out = sum(1 for w in db.pending_warnings[before:] if w.code == 1290)   # --secure-file-priv skips
    state = _current(db, table, path_col, root)
    writer = Writer(db, table, stmt, progress_of)
    writer.on_written = lambda written: _record(db, table, path_col, root, state, written)
    seen: set[str] = set()
    with writer:
        for n, file in enumerate(files, start=1):
            rel = under + globs.relative(pattern, file)
            seen.add(rel)
            doc = _changed_document(db, stmt, pattern, file, rel, state, writer)
            if doc is not None:
                owner = state.owned.get(rel)
                writer.add(doc, owner.row_id if owner else None, n / max(len(files), 1))
    gone = [s for rel, s in state.owned.items()
            if rel not in seen and rel.startswith(under) and globs.matches(pattern, rel[len(under):])]
    _remove(db, table, gone)
    state.names["removed"] = [s.path for s in gone]
    state.counts["removed"] = len(gone)
    state.counts["skipped"] = writer.skipped + links_out
    db.warn(f"LOAD DATA SYNC '{stmt.path}': " + ", ".join(f"{v} {k}" for k, v in state.counts.items()),
            code=1000, level="Note")
    named = [f"{kind} {_names(paths)}" for kind, paths in state.names.items() if paths]
    if named:
        db.warn("Synced files: " + "; ".join(named), code=1000, level="Note")
    return Result(rowcount=sum(state.counts[k] for k in ("added", "changed", "removed")))


def first_documents(db: Database, stmt: ast.LoadData, files_of: FilesOf, writer: Writer,
                    budget: int) -> list[tuple[Document, int | None]]:
    """SYNC's first pass (statements/embed_first_load.py), which writes nothing: the documents of its
    first new and changed files, read as the statement reads them, up to ``budget`` characters of text.
    A file whose size and modification time are the stored ones is passed over unread (the statement
    reads and hashes every file under the lock all the same). The statement stores what it reads
    itself: a file changed after this pass read it is stored as the statement reads it, and only chunk
    texts this pass did not see are embedded under the lock. Deletions are the statement's alone."""
    table = writer.table
    path_col = _unique_path_column(db, table)
    pattern, folder = _folder(stmt)
    root, narrower = _locate(db, table, folder)
    under = _under(folder, root)
    files = load_documents.document_files(stmt, files_of, missing_ok=True)
    state, _stale = _read_state(db, table, path_col, root, narrower)
    docs: list[tuple[Document, int | None]] = []
    chars = 0
    for file in files:
        if docs and chars >= budget:
            break
        rel = under + globs.relative(pattern, file)
        owner = state.owned.get(rel)
        if owner is not None and _same_stat(file, owner):
            continue
        doc = _changed_document(db, stmt, pattern, file, rel, state, writer)
        if doc is not None:
            docs.append((doc, owner.row_id if owner else None))
            chars += len(doc.body) + len(doc.title or "")
    return docs


def _same_stat(file: str, owner: Source) -> bool:
    try:
        st = os.stat(file)
    except OSError:
        return False
    return (st.st_mtime_ns, st.st_size) == (owner.mtime_ns, owner.size)


def _folder(stmt: ast.LoadData) -> tuple[globs.Pattern, str]:
    """The glob's parts and its folder, resolved (an error when it is no folder)."""
    pattern = globs.split(stmt.path)
    if not os.path.isdir(pattern.prefix):
        raise errors.OperationalError(f"Directory '{pattern.prefix}' not found (Errcode: 2 - No such file "
                                      "or directory)", errno=29)
    return pattern, os.path.realpath(pattern.prefix)


def _under(folder: str, root: str) -> str:
    """The path under the root of the synced folder ('' for the root itself, else ending with /)."""
    return "" if folder == root else os.path.relpath(folder, root).replace(os.sep, "/") + "/"


NAMED = 10          # the files a sync names in its Note, per kind (the rest are counted)


def _names(paths: list[str]) -> str:
    shown = ", ".join(paths[:NAMED])
    return shown + (f" and {len(paths) - NAMED} more" if len(paths) > NAMED else "")


def _root(db: Database, table: Table, path_col: str, folder: str) -> str:
    """The root the rows of ``folder``'s files live under (``_locate``), the narrower roots widened to it."""
    root, narrower = _locate(db, table, folder)
    for old in narrower:
        _widen(db, table, path_col, old, root)
    return root


def _locate(db: Database, table: Table, folder: str) -> tuple[str, list[str]]:
    """The root the rows of ``folder``'s files live under, and the table's roots to widen to it (read
    only): the table's root when ``folder`` is it or inside it; ``folder`` when the table has none yet,
    or when ``folder`` holds the table's roots (they are widened to it: paths rewritten, nothing read
    again); otherwise an error naming the root."""
    roots = sorted({s.prefix for s in sources.of_table(db.store, table.name)})
    for root in roots:
        if folder == root or _inside(folder, root):
            return root, []
    narrower = [r for r in roots if _inside(r, folder)]
    if roots and not narrower:
        named = " and ".join(f"'{r}'" for r in roots)
        raise UserError(f"LOAD DATA SYNC: table '{table.name}' holds the files of {named} (its root); "
                        f"'{folder}' is neither inside it nor above it. Sync that folder or one inside it, a "
                        "folder that contains it (the root widens), or use another table", errors.ProgrammingError)
    return folder, narrower


def _inside(path: str, folder: str) -> bool:
    return os.path.commonpath([path, folder]) == folder and path != folder


def _widen(db: Database, table: Table, path_col: str, root: str, wider: str) -> None:
    """The rows under ``root`` move under ``wider``: each path gains ``root``'s place under it."""
    lead = os.path.relpath(root, wider).replace(os.sep, "/") + "/"
    moved = [s for s in sources.of_table(db.store, table.name) if s.prefix == root]
    db.store.executemany(f"UPDATE {quote(table.name)} SET {quote(path_col)} = ? WHERE id = ? AND "
                         f"{quote(path_col)} = ?", [(lead + s.path, s.row_id, s.path) for s in moved])
    sources.record(db.store, table.name, [Source(s.row_id, wider, lead + s.path, s.sha256, s.mtime_ns, s.size)
                                          for s in moved])


def _changed_document(db: Database, stmt: ast.LoadData, pattern: globs.Pattern, file: str, rel: str,
                      state: _State, writer: Writer) -> Document | None:
    """The document to write for ``file``, or None when it is unchanged (or skipped)."""
    if db.check_cancelled():
        raise errors.Interrupted("Query execution was interrupted")
    try:
        snap = documents.snapshot(file)
    except documents.Unreadable as exc:
        writer.skip(file, str(exc))
        return None
    owner = state.owned.get(rel)
    if owner is not None and owner.sha256 == snap.sha256:
        state.counts["unchanged"] += 1
        return None
    if owner is None and rel in state.paths:
        raise _conflict(file, rel, state, prefix_of=pattern.prefix)
    doc = load_documents.read_document(db, stmt, pattern, file, writer, snap, relative=rel)
    if doc is not None:
        state.snapshots[rel] = snap
        kind = "changed" if owner is not None else "added"
        state.counts[kind] += 1
        state.names[kind].append(rel)
    return doc


def _conflict(file: str, rel: str, state: _State, prefix_of: str) -> UserError:
    other = state.others.get(rel)
    if other is not None:
        return UserError(f"LOAD DATA SYNC: '{file}' and '{os.path.join(other.prefix, rel)}' both give path "
                         f"'{rel}' (the row loaded from '{other.prefix}' is kept)", errors.DuplicateKey)
    return UserError(f"LOAD DATA SYNC: '{file}' gives path '{rel}', which row {state.paths[rel]} already has "
                     f"and which no SYNC of '{prefix_of}' loaded; delete that row or sync into another table",
                     errors.DuplicateKey)


def _unique_path_column(db: Database, table: Table) -> str:
    """The table's ``path`` column, which must have a unique index of its own."""
    col = table.column("path")
    if col is not None:
        for _, name, unique, *_ in db.store.execute(f"PRAGMA index_list({quote(table.name)})"):
            cols = [r[2] for r in db.store.execute(f"PRAGMA index_info({quote(name)})")]
            if unique and [c.lower() for c in cols if c] == ["path"]:
                return col.name
    raise UserError(f"LOAD DATA ... SYNC needs a unique column 'path' in table '{table.name}' (for example "
                    "path string UNIQUE): each file's row is found by its path", errors.ProgrammingError)


def _current(db: Database, table: Table, path_col: str, prefix: str) -> _State:
    """The table's rows and the bookkeeping of those a SYNC wrote; entries whose row was deleted or
    given another path by other statements are dropped (that row is no longer the file's)."""
    state, stale = _read_state(db, table, path_col, prefix)
    sources.forget(db.store, table.name, stale)
    return state


def _read_state(db: Database, table: Table, path_col: str, prefix: str,
                narrower: Sequence[str] = ()) -> tuple[_State, list[int]]:
    """``_current`` read only, and the row ids of its stale entries; the entries of the ``narrower``
    roots are seen as widened to ``prefix`` (SYNC's first pass, which writes nothing)."""
    paths = {p: i for i, p in db.store.execute(f"SELECT id, {quote(path_col)} FROM {quote(table.name)} "
                                               f"WHERE {quote(path_col)} IS NOT NULL")}
    by_id = {i: p for p, i in paths.items()}
    entries = sources.of_table(db.store, table.name)
    stale = [s.row_id for s in entries if by_id.get(s.row_id) != s.path]
    valid = []
    for s in entries:
        if by_id.get(s.row_id) != s.path:
            continue
        if s.prefix in narrower:
            lead = os.path.relpath(s.prefix, prefix).replace(os.sep, "/") + "/"
            paths.pop(s.path, None)
            s = Source(s.row_id, prefix, lead + s.path, s.sha256, s.mtime_ns, s.size)
        valid.append(s)
    paths.update((s.path, s.row_id) for s in valid)
    return _State(owned={s.path: s for s in valid if s.prefix == prefix},
                  others={s.path: s for s in valid if s.prefix != prefix}, paths=paths), stale


def _record(db: Database, table: Table, path_col: str, prefix: str, state: _State,
            written: list[tuple[Document, int | None]]) -> None:
    """After a batch is written: the bookkeeping of its rows (new rows' ids found by their path)."""
    new = [d.path for d, row_id in written if row_id is None]
    ids = {d.path: row_id for d, row_id in written if row_id is not None}
    for start in range(0, len(new), 500):
        part = new[start:start + 500]
        ids.update((p, i) for i, p in db.store.execute(
            f"SELECT id, {quote(path_col)} FROM {quote(table.name)} WHERE {quote(path_col)} IN "
            f"({','.join('?' * len(part))})", part))
    entries = []
    for doc, _ in written:
        snap = state.snapshots.pop(doc.path)
        entries.append(Source(ids[doc.path], prefix, doc.path, snap.sha256, snap.mtime_ns, snap.size))
    sources.record(db.store, table.name, entries)


def _remove(db: Database, table: Table, gone: list[Source]) -> None:
    ids = [s.row_id for s in gone]
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        db.store.execute(f"DELETE FROM {quote(table.name)} WHERE id IN ({','.join('?' * len(part))})", part)
    sources.forget(db.store, table.name, ids)
