"""Running a bulk embedding's planned batches: several at once, each on one thread.

``Model.embed`` plans its batches (length-sorted, padded, ``plan_batches``) and, when there are
several (``PARALLEL_MIN_BATCHES``) and more than one CPU, hands them here. Each worker thread runs whole batches on a
single-thread onnxruntime session (onnxruntime's ``run`` releases the GIL and may be called from
several threads at once), so the CPUs work on different batches instead of splitting every operator
of one batch between them. Measured on 300 of the manual's 256-token chunks on the 2 shared cores
(load 13-15): the same batches took 35% less CPU time per token with the int8 model and 19% less
with float32 than on one two-thread session, whose threads meet at every operator and spin while
they wait (docs/benchmarks.md, "The manual in a minute", has the whole manual).

The batches are exactly the ones the sequential path runs, so the vectors are too (an int8 graph
quantizes its activations per call: a different batching would change its vectors; the built-in
int8 model runs one text per call, so its vectors never depend on batching). A query's single
batch keeps the model's multi-thread session (its latency is one batch's). The single-thread session
is a second copy of the weights (float32 ~90 MB, int8 ~23 MB), made by the first bulk embedding.

Cancellation and progress keep ``Model.embed``'s rules: ``should_stop()`` is asked before each batch
is handed out (batches already running finish; nothing after them starts) and each batch's
``(rows, vectors)`` is yielded as it ends, in the order batches end. An error in any batch is raised once the batches
running beside it have finished, and no batch starts after it.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

import numpy as np

#: Batches handed out per worker ahead of the one it runs (a worker never waits for the next batch).
AHEAD = 1


def run_parallel(batches: Sequence[np.ndarray], run: Callable[[np.ndarray], np.ndarray], *, workers: int,
                 should_stop: Callable[[], bool] | None = None) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """``(rows, vectors)`` of every batch (``rows``: positions in the embedding's input, ``run(rows)``:
    their vectors), as batches finish. Stops handing out batches once ``should_stop()`` is true: the
    caller then sees fewer results and says so (``EmbeddingCancelled``)."""
    pending = iter(batches)
    running: dict[Future, np.ndarray] = {}
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="tessera-embed") as pool:
        try:
            stopped = _hand_out(pool, pending, running, run, workers * (1 + AHEAD), should_stop)
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in _in_hand_out_order(done, running):
                    rows = running.pop(future)
                    yield rows, future.result()
                if not stopped:
                    stopped = _hand_out(pool, pending, running, run, workers * (1 + AHEAD), should_stop)
        finally:
            for future in running:          # an error, a cancel or a caller that stopped reading
                future.cancel()
            wait(running)


def _hand_out(pool: ThreadPoolExecutor, pending: Iterator[np.ndarray], running: dict[Future, np.ndarray],
              run: Callable[[np.ndarray], np.ndarray], limit: int,
              should_stop: Callable[[], bool] | None) -> bool:
    """Start batches until ``limit`` are running; True once ``should_stop()`` said stop."""
    while len(running) < limit:
        if should_stop is not None and should_stop():
            return True
        rows = next(pending, None)
        if rows is None:
            return False
        running[pool.submit(run, rows)] = rows
    return False


def _in_hand_out_order(done: set[Future], running: dict[Future, np.ndarray]) -> list[Future]:
    return [f for f in running if f in done]
