"""Which full-text indexes a table has (from its catalog entry), and creating, dropping, rebuilding
and upgrading them. As in Manticore, every ``text`` column is a full-text field; ``string`` columns
are not. Each model-backed vector column also gets a chunk-level index of its chunks' text.

Table options (Manticore's spelling): ``morphology='stem_en'`` stems English words (Porter);
``morphology='none'`` (the default) indexes words as written, case-folded. ``stopwords='en'`` leaves
common English words out of queries (outside phrases; the index keeps them, so phrases still match).
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

import apsw

from tesseradb.errors import NotSupportedError, UserError
from tesseradb.grammar.stopwords import LISTS as STOPWORD_LISTS
from tesseradb.storage import fulltext as fts
from tesseradb.storage.fulltext import ChunkTextIndex, TextIndex
from tesseradb.storage.rowstore import RowStore

from tesseradb.catalog.tables import Table

log = logging.getLogger("tesseradb.fulltext")
DEFAULT_MORPHOLOGY = "none"
CHUNK_TOKENIZER = fts.TOKENIZERS["stem_en"]
TABLE_OPTION_KEYS = frozenset({"morphology", "stopwords"})
Progress = Callable[[int, int], None] | None


def table_options(options: Sequence[tuple[str, object]]) -> dict[str, str]:
    """The full-text options of CREATE TABLE ... morphology='stem_en', validated (others are left alone)."""
    out: dict[str, str] = {}
    for key, value in options:
        if key == "morphology":
            out["morphology"] = morphology(str(value))
        elif key == "stopwords":
            if str(value).lower() not in STOPWORD_LISTS:
                raise UserError(f"stopwords '{value}' is not supported: use 'en' (the built-in English list)",
                                NotSupportedError)
            out["stopwords"] = str(value).lower()
    return out


def morphology(value: str) -> str:
    parts = [p.strip().lower() for p in value.split(",") if p.strip()] or [DEFAULT_MORPHOLOGY]
    if len(parts) > 1 or parts[0] not in fts.TOKENIZERS:
        raise UserError(f"morphology '{value}' is not supported: use 'stem_en' (English stemming) or 'none'",
                        NotSupportedError)
    return parts[0]


def stopwords(table: Table) -> frozenset[str]:
    """The words left out of the table's full-text queries (``stopwords='en'``; none by default)."""
    return STOPWORD_LISTS.get(table.options.get("stopwords", ""), frozenset())


def tokenizer(table: Table) -> str:
    return fts.TOKENIZERS[table.options.get("morphology", DEFAULT_MORPHOLOGY)]


def text_columns(table: Table) -> tuple[str, ...]:
    return tuple(c.name for c in table.columns if c.type == "text")


def text_index(table: Table) -> TextIndex | None:
    columns = text_columns(table)
    return TextIndex(table.name, columns, tokenizer(table)) if columns else None


def chunk_index(table: Table, column: str) -> ChunkTextIndex | None:
    spec = table.vectors.get(column.lower())
    if spec is None or not spec.model_name or not spec.from_columns:
        return None
    sources = tuple(table.column(c).name for c in spec.from_columns if table.column(c) is not None)
    return ChunkTextIndex(table.name, table.chunk_tables[column.lower()], sources, chunk_tokenizer(table),
                          "char(10, 10)" if spec.chunk_strategy == "markdown" else "' '")


def chunk_tokenizer(table: Table) -> str:
    """The chunk-level index is hybrid_match()'s own: English stemming whatever the table's
    ``morphology`` (which governs MATCH() on the rows). Measured: docs/benchmarks.md."""
    return CHUNK_TOKENIZER



def chunk_indexes(table: Table) -> list[ChunkTextIndex]:
    return [i for i in (chunk_index(table, c) for c in table.vectors) if i is not None]


def all_indexes(table: Table) -> list[TextIndex | ChunkTextIndex]:
    row = text_index(table)
    return ([row] if row else []) + chunk_indexes(table)


# -- lifecycle ---------------------------------------------------------------------------------
def create(store: RowStore, table: Table) -> None:
    for index in all_indexes(table):
        index.create(store)


def drop(store: RowStore, table: Table) -> None:
    """Drop the table's row-level index (its columns change) or, before DROP TABLE, every index."""
    TextIndex(table.name, (), "").drop(store)      # by name: also when no text column is left


def drop_all(store: RowStore, table: Table) -> None:
    drop(store, table)
    for index in chunk_indexes(table):
        index.drop(store)


def recreate_row_index(store: RowStore, table: Table, on_progress: Progress = None) -> None:
    """After ALTER TABLE ADD/DROP COLUMN: the row-level index over the new set of text columns."""
    row = text_index(table)
    if row is not None:
        row.create(store)
        row.rebuild(store, on_progress)


def recreate_chunk_index(store: RowStore, table: Table, column: str) -> None:
    """A model column's chunk index, empty, with triggers for its current ``from`` columns (its
    chunk rows are about to be written again)."""
    index = chunk_index(table, column)
    if index is not None:
        index.drop(store)
        index.create(store)


def rebuild(store: RowStore, table: Table, on_progress: Progress = None) -> list[str]:
    """Drop, create and fill every index of the table (REPAIR TABLE). Returns what was rebuilt."""
    done = []
    for index in all_indexes(table):
        index.drop(store)
        index.create(store)
        rows = index.rebuild(store, on_progress)
        done.append(f"full-text index {index.name} rebuilt ({rows} entries)")
    return done


def optimize(store: RowStore, table: Table) -> None:
    for index in all_indexes(table):
        if index.exists(store):
            index.optimize(store)


def check(store: RowStore, table: Table) -> list[str]:
    return [p for index in all_indexes(table) for p in index.check(store)]


def missing(store: RowStore, tables: Iterable[Table]) -> list[tuple[Table, TextIndex | ChunkTextIndex]]:
    """Indexes to build on open: absent (a file from before full-text search), or built another way
    than they are defined now (``_rebuild_reason``)."""
    return [(t, i) for t in tables for i in all_indexes(t) if not i.exists(store) or _rebuild_reason(store, i)]


def previous_triggers(store: RowStore, tables: Iterable[Table]) -> list[ChunkTextIndex]:
    """Chunk-level indexes kept by the previous release's insert trigger, which indexed every new chunk
    row; this release's skips the chunks whose writer gave them their entries (same entries: the
    trigger is replaced, nothing is rebuilt)."""
    return [i for t in tables for i in chunk_indexes(t) if i.exists(store) and i.has_previous_trigger(store)]


def _rebuild_reason(store: RowStore, index: TextIndex | ChunkTextIndex) -> str | None:
    """Why an existing index must be built again: another tokenizer (a chunk-level index of a release
    before hybrid_match() stemmed regardless of ``morphology``), or other text per entry (a chunk-level
    index from before its entries held the chunk's context line or heading path as a field)."""
    if fts.built_tokenizer(store, index.name) not in (None, index.tokenize):
        return "rebuilt with its new tokenizer"
    if not index.indexes_as_defined(store):
        return "rebuilt: its entries now hold each chunk's context line or heading path"
    return None


def upgrade(store: RowStore, tables: Iterable[Table], on_progress: Progress = None) -> int:
    """Build the indexes a database written before full-text search lacks (once, when it is opened).
    Returns how many were built. Runs in its own transaction; a busy or read-only file is left as it
    is (MATCH() on it reports the missing index) and tried again at the next open."""
    tables = list(tables)
    if not (missing(store, tables) or previous_triggers(store, tables)) or store.in_transaction:
        return 0
    try:
        store.begin()
        for index in previous_triggers(store, tables):      # again, under the write lock
            log.info("the chunk full-text index %s gets this release's insert trigger", index.name)
            index.replace_previous_trigger(store)
        todo = missing(store, tables)           # again, under the write lock
        for table, index in todo:
            log.info("building the full-text index %s of table %s (%s)", index.name, table.name,
                     _rebuild_reason(store, index) if index.exists(store) else "missing")
            index.drop(store)
            index.create(store)

            def progress(done: int, total: int, name=index.name) -> None:
                log.info("full-text index %s: %d of %d", name, done, total)
                if on_progress is not None:
                    on_progress(done, total)
            index.rebuild(store, progress)
        store.commit()
        return len(todo)
    except apsw.Error as exc:         # busy, read-only, disk full: nothing is lost
        store.rollback()
        log.warning("could not build the full-text indexes now (%s); retrying at the next open", exc)
        return 0
