"""How the sides of a hybrid search run (split from hybrid.py): a side's ranked list, hybrid_match()'s
text side in a worker thread beside the model, and the knn side on the caller's thread beside that
thread when its search reads no SQLite.

The worker thread pays when a core is free for it (``cores.spare_core``, decided in hybrid.py). Its
text side holds the connection while it runs, and the connection is used by one thread at a time; so
the knn side's index is caught up with SQLite before the thread starts (``ready_index``), and after the
model the knn side searches it while the text side may still run (``run_sides``): the caller no longer
waits for the text side before it starts the knn side's scan. A knn side that needs SQLite (a filter,
the open transaction's own chunks, a quantized index's rescoring) runs after the text side as before.
"""
from __future__ import annotations

import concurrent.futures
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tesseradb.catalog.tables import Table
from tesseradb.sql.database import Database
from tesseradb.vectors.fusion import RankedList
from tesseradb.vectors.search import KnnRequest, run_knn
from tesseradb.vectors.search import narrowed

# hybrid_match()'s chunk BM25 query runs here while the model embeds the query text (the ONNX run and
# SQLite both release the GIL; the connection is used by one thread at a time) when a core is free for
# it (``spare_core``); otherwise it runs on the caller's thread before the model. The knn side then runs
# on the caller's thread beside it when its search needs no SQLite (``ready_index``, ``run_sides``)
EARLY = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="tessera-text-side")


@dataclass
class Search:
    """One side: how to run it (returns (doc, score, chunk) best first) and its fusion weight."""
    name: str | None
    kind: str
    run: Callable[[str | None, int], list[tuple[int, float, int | None]]]
    weight: float = 1.0
    k: int = 0                          # a knn side's own k: the window is at least that
    request: KnnRequest | None = None   # a knn side's request: knn_chunk*() score chunks against its query
    early: Any = None                   # a text side already running (Future), and the arguments it runs with
    early_args: tuple | None = None
    column: str | None = None           # the vector column whose chunk ids the side returns (rerank reads them)
    free: bool = False                  # runs without the connection: beside a started side, before it is waited for

    def ranked(self, filter_sql: str | None, window: int) -> list[tuple[int, float, int | None]]:
        if self.early is not None and self.early_args == (filter_sql, window):
            return self.early.result()
        return self.run(filter_sql, window)

    def start(self, filter_sql: str | None, window: int) -> None:
        """Run the side in a worker thread (it only reads SQLite) while the caller embeds the query."""
        self.early, self.early_args = EARLY.submit(self.run, filter_sql, window), (filter_sql, window)

    def settle(self) -> None:
        """Wait for a started side (before anything else may use the connection)."""
        if self.early is not None:
            concurrent.futures.wait([self.early])



def knn_search(db: Database, request: KnnRequest, name: str | None, ready: Any = None) -> Search:
    """A knn side; with ``ready`` (the column's index, caught up before a text side's thread took the
    connection: ``ready_index``) its unfiltered run is the index's search alone, which reads no SQLite."""
    def run(filter_sql: str | None, window: int) -> list[tuple[int, float, int | None]]:
        request.k = window          # the window is at least every knn side's own k (unless window_size says)
        request.filter_sql = filter_sql
        if ready is not None and filter_sql is None:      # Python ints and floats already (the index's hits)
            return narrowed(ready.search(request.query[0], window, ef=request.ef, rescore=request.options.rescore,
                                         oversampling=request.options.oversampling), window)
        return [(int(d), float(dist), c) for d, dist, c in run_knn(db, request)]
    return Search(name, "knn", run, k=request.k, request=request, column=request.column, free=ready is not None)


def ready_index(db: Database, table: Table, column: str, layout: Any = None) -> Any:
    """The column's index caught up with SQLite, for a knn side that searches it alone (beside a text
    side's thread holding the connection, or on the caller's thread; ``layout``: the plan's); None
    when its search needs SQLite: the open transaction's own writes (as run_knn's common path
    decides), or a quantized index's rescoring."""
    if db.store.in_transaction and db.has_pending():
        return None
    index = db.column_index(table, column, layout).catch_up()
    return index if index.quantization == "none" else None      # codes are rescored from SQLite


def run_sides(searches: list[Search], filter_sql: str | None, window: int) -> list[RankedList]:
    """Each side's ranked list, in the sides' order. A side that needs no connection runs first, while a
    text side started in the worker thread may still be running; then that side is waited for; then
    the others (the connection is used by one thread at a time)."""
    order = sorted(range(len(searches)), key=lambda i: 0 if searches[i].free else 1 if searches[i].early is not None else 2)
    hits: dict[int, list] = {}
    try:
        for i in order:
            hits[i] = searches[i].ranked(filter_sql, window)
    except BaseException:
        for search in searches:
            search.settle()
        raise
    return [RankedList(s.name, s.kind, hits[i], s.weight) for i, s in enumerate(searches)]
