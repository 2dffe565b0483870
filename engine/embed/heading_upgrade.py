"""Chunk rows of a release before heading paths gain them once, when the database is opened.

The location columns (``storage.chunk_table.LOCATION_COLUMNS``) are added to each chunk table that lacks
them, and every chunk of a model column gets its heading path and section from its document's text
and its stored offsets (the same outline parse new chunks get theirs from, ``embed.chunk_context``).
Nothing is re-embedded and nothing else changes: the spans, vectors and keys stay as they were, and
the context line stays NULL (``chunk_context`` did not exist: such columns have ``'none'``). Runs in
its own transaction; a busy or read-only file is left as it is and tried again at the next open.
"""
from __future__ import annotations

import json
import logging
from collections.abc import Iterable

import apsw

from tesseradb.catalog.tables import Table
from tesseradb.storage.catalog import quote
from tesseradb.storage.chunk_table import add_location_columns, has_location_columns
from tesseradb.storage.rowstore import RowStore
from tesseradb.catalog.vector_columns import VectorSpec

log = logging.getLogger("tesseradb.embed")
DOC_BATCH = 500


def _tables_to_upgrade(store: RowStore, tables: Iterable[Table]) -> list[Table]:
    out = []
    for table in tables:
        names = [table.chunk_tables[k] for k in table.vectors if k in table.chunk_tables]
        if any(_exists(store, n) and not has_location_columns(store, n) for n in names):
            out.append(table)
    return out


def _exists(store: RowStore, name: str) -> bool:
    return store.one("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)) is not None


def upgrade(store: RowStore, tables: Iterable[Table]) -> int:
    """Give old chunk tables their location columns and heading paths. Returns the chunk tables done."""
    todo = _tables_to_upgrade(store, tables)
    if not todo or store.in_transaction:
        return 0
    done = 0
    try:
        store.begin()
        for table in todo:
            for key, spec in table.vectors.items():
                layout = table.layout(key)
                if not _exists(store, layout.chunks) or not add_location_columns(store, layout):
                    continue
                done += 1
                if spec.model_name:
                    rows = fill_headings(store, table, spec, layout.chunks)
                    log.info("chunk table %s: heading paths for %d chunks", layout.chunks, rows)
        store.commit()
    except apsw.Error as exc:          # busy, read-only, disk full: nothing is lost
        store.rollback()
        log.warning("could not add heading paths to old chunk rows now (%s); retrying at the next open", exc)
        return 0
    return done


def fill_headings(store: RowStore, table: Table, spec: VectorSpec, chunks: str) -> int:
    """Heading path and section of every chunk with a span, from its document's text."""
    from tesseradb.embed.markdown_chunks import parse_outline     # loaded only when a file needs it
    from tesseradb.embed.rows import source_text
    docs = [r[0] for r in store.execute(f"SELECT DISTINCT doc_id FROM {quote(chunks)} WHERE start IS NOT NULL "
                                        "ORDER BY doc_id")]
    names = list(dict.fromkeys(c.lower() for c in spec.from_columns))
    cols = ", ".join(quote(table.column(n).name) for n in names)
    count = 0
    for at in range(0, len(docs), DOC_BATCH):
        part = json.dumps(docs[at:at + DOC_BATCH])
        texts = {r[0]: source_text(spec, dict(zip(names, r[1:]))) for r in store.execute(
            f"SELECT id, {cols} FROM {quote(table.name)} WHERE id IN (SELECT value FROM json_each(?))", (part,))}
        spans: dict[int, list[tuple[int, int, int]]] = {}
        for chunk_id, doc, start, end in store.execute(
                f"SELECT chunk_id, doc_id, start, \"end\" FROM {quote(chunks)} WHERE start IS NOT NULL AND doc_id IN "
                "(SELECT value FROM json_each(?))", (part,)):
            spans.setdefault(doc, []).append((chunk_id, start, end))
        updates = []
        for doc, rows in spans.items():
            text = texts.get(doc)
            if text is None:
                continue
            outline = parse_outline(text)
            for chunk_id, start, end in rows:
                _, heading, (sec_start, sec_end) = outline.place(text, start, end)
                updates.append((heading, sec_start, sec_end, chunk_id))
        store.executemany(f"UPDATE {quote(chunks)} SET heading = ?, sec_start = ?, sec_end = ? WHERE chunk_id = ?",
                          updates)
        count += len(updates)
    return count
