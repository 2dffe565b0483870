"""A file database is read through a memory map (``PRAGMA mmap_size``, storage/rowstore.py): what a
quantized index rescores with must still be exactly what is committed, whoever committed it."""
from __future__ import annotations

import numpy as np

from tesseradb.storage import rowstore
from tesseradb.storage.blobs import pack_vector
from tesseradb.storage.chunk_table import ColumnLayout, create_chunk_table, read_chunk_vectors
from tesseradb.storage.rowstore import RowStore

DIMS = 32
LAYOUT = ColumnLayout(table="vecs", column="v", chunks="_tessera_chunks_vecs_v", is_array=False, dims=DIMS,
                      metric="cosine", hnsw_m=16, ef_construction=40, quantization="rabitq2")


def write(store: RowStore, x: np.ndarray, first_id: int) -> None:
    store.begin()
    ids = range(first_id, first_id + len(x))
    store.executemany("INSERT INTO vecs (id, v) VALUES (?, ?)", [(i, pack_vector(v)) for i, v in zip(ids, x)])
    store.executemany(f"INSERT INTO {LAYOUT.chunks} (chunk_id, doc_id, ord) VALUES (?, ?, 0)", [(i, i) for i in ids])
    store.commit()


def test_a_file_database_is_mapped_and_memory_is_not(tmp_path):
    on_file = RowStore(str(tmp_path / "a.db"))
    in_memory = RowStore(rowstore.MEMORY)
    assert on_file.one("PRAGMA mmap_size")[0] > 0
    assert (in_memory.one("PRAGMA mmap_size") or (0,))[0] == 0     # nothing to map
    read_only = RowStore(str(tmp_path / "a.db"), read_only=True)
    assert read_only.one("PRAGMA mmap_size")[0] > 0


def test_a_mapped_reader_sees_what_another_connection_commits(tmp_path):
    path = str(tmp_path / "v.db")
    rng = np.random.default_rng(0)
    writer = RowStore(path)
    writer.execute("CREATE TABLE vecs (id INTEGER PRIMARY KEY, v BLOB)")
    create_chunk_table(writer, LAYOUT)
    x = rng.standard_normal((50, DIMS)).astype(np.float32)
    write(writer, x, 1)
    reader = RowStore(path)                      # opened (and mapped) while the file is small
    found, got = read_chunk_vectors(reader, LAYOUT, np.arange(1, 51))
    assert np.array_equal(got[np.argsort(found)], x)

    more = rng.standard_normal((3000, DIMS)).astype(np.float32)   # the file grows past the first map
    write(writer, more, 51)
    writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")             # and the pages move into the file
    changed = rng.standard_normal(DIMS).astype(np.float32)
    writer.execute("UPDATE vecs SET v = ? WHERE id = 7", (pack_vector(changed),))   # this one in the WAL
    everything = np.vstack([x, more])
    everything[6] = changed

    ids = rng.choice(np.arange(1, 3051), 200, replace=False)
    found, got = read_chunk_vectors(reader, LAYOUT, np.append(ids, 7))
    unmapped = RowStore(path)
    unmapped.execute("PRAGMA mmap_size = 0")
    found0, got0 = read_chunk_vectors(unmapped, LAYOUT, np.append(ids, 7))
    assert np.array_equal(found, found0) and np.array_equal(got, got0)
    assert np.array_equal(got, everything[found - 1])
    assert 7 in found.tolist()
