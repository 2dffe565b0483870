"""knn's 8-bit first pass (storage/int8_scan.py) on the whole manual: how many chunks it leaves, and what
it saves right after a model run against the float32 scan of every live chunk.

    TESSERA_BENCH_CORPUS=... nice .venv/bin/python tests/benchmarks/bench_int8_scan.py --rounds 400

The table is bench_query_limit.py's (built there, under the cache directory). Query texts are the
manual's section headings. Chunks left: for every heading, k 10 and k 50 (the shortlist of knn's
default and of hybrid_match's vector side). Timing: the two paths in turns, each call right after a
bare model run on a text never embedded before (so the codes, the vectors and the Python path start as
cold as in a first-time knn), with the query vector cached by the engine, so that only the engine's
work is timed: the index search alone and the whole knn statement. The paths differ by one switch
(``int8_scan.MIN_CHUNKS``): their results are compared call by call and must be equal.

Writes tests/benchmarks/results/int8_scan.json.
"""
from __future__ import annotations

import argparse
import gc
import itertools
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import CACHE, log  # noqa: E402

KNN = "SELECT id FROM manual WHERE knn(v, 10, ?)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=400)
    ap.add_argument("--note", action="append", default=[], help="a line for the page (what ran beside it, ...)")
    args = ap.parse_args()
    import tesseradb
    from tesseradb import embed
    from tesseradb.storage import int8_scan, vector_plan
    from tesseradb.storage.vectors import VectorIndex

    path = CACHE / "manual.query-limit.db"
    if not path.exists():
        raise SystemExit(f"{path} is missing: run bench_query_limit.py --every 1 first")
    con = tesseradb.connect(str(path))
    model = embed.get_model(common.MODEL_NAME)
    texts = list(dict.fromkeys(q.text for q in common.heading_queries(common.pages())))
    counter = itertools.count()
    cycle = itertools.cycle(texts)
    fresh = lambda: f"{next(cycle)} {next(counter)}"       # noqa: E731 - never embedded before
    from tesseradb.embed.model import QUERY_CACHE_SIZE
    cached = [f"{t} (cached)" for t in texts[:QUERY_CACHE_SIZE // 2]]      # all of them stay in the engine's cache
    for t in cached:                                         # the engine's query cache, the index, the codes
        con.execute(KNN, (t,)).fetchall()
    index = next(o for o in gc.get_objects() if isinstance(o, VectorIndex))
    first = index._derived.get("int8")                       # noqa: SLF001
    if first is None or not first.usable:
        raise SystemExit("the 8-bit pass is not built for this table")
    pos, docs, groups = index._live_groups()                 # noqa: SLF001
    vectors = [model.embed_query(t).astype(np.float32).reshape(1, -1) for t in cached]

    left: dict[str, list[int]] = {"k10": [], "k50": []}
    for q in np.asarray(model.embed(texts, query=True), np.float32).reshape(len(texts), 1, -1):
        scale = index._scale(q)                              # noqa: SLF001
        margin = 4.0 * vector_plan.RESCORE_TOL * (2.0 + 2.0 * scale) + int8_scan.ROUNDING * (1.0 + scale)
        for k in (10, 50):
            at = int8_scan.candidates(*first.scores(q, scale / index._max_norm), groups, docs, k, margin)  # noqa: SLF001
            left[f"k{k}"].append(len(docs) if at is None else len(at))

    def switch(path_name: str) -> None:
        int8_scan.MIN_CHUNKS = real_min if path_name == "8-bit pass" else 10**12

    real_min = int8_scan.MIN_CHUNKS
    sides = {"index search": lambda i: index.search(vectors[i % len(vectors)][0], 10),
             "knn statement": lambda i: con.execute(KNN, (cached[i % len(cached)],)).fetchall()}
    ms: dict[str, dict[str, list[float]]] = {s: {"8-bit pass": [], "float32 scan": []} for s in sides}
    loadavg_start = common.loadavg()
    for name, run in sides.items():
        for r in range(args.rounds):
            got = {}
            for path_name in (("8-bit pass", "float32 scan") if r % 2 else ("float32 scan", "8-bit pass")):
                switch(path_name)
                model.embed([fresh()], query=True)          # the bare model (its query cache untouched)
                started = time.perf_counter()
                got[path_name] = run(r)
                ms[name][path_name].append((time.perf_counter() - started) * 1000)
            if got["8-bit pass"] != got["float32 scan"]:
                raise SystemExit(f"{name}: the two paths differ on round {r}")
    switch("8-bit pass")
    con.close()

    def dist(v: list[int]) -> dict:
        a = np.array(v)
        return {"p50": float(np.median(a)), "p90": float(np.percentile(a, 90)), "mean": float(a.mean()),
                "share_over_rank_at_once": float(np.mean(a > int8_scan.RANK_AT_ONCE))}
    result = {"command": " ".join(sys.argv[1:]), "chunks": int(len(docs)), "headings": len(texts),
              "queries": len(vectors), "rounds": args.rounds, "page_notes": args.note,
              "loadavg_start": loadavg_start, "loadavg_end": common.loadavg(),
              "chunks_left": {k: dist(v) for k, v in left.items()},
              "cold_p50_ms": {s: {p: statistics.median(v) for p, v in by.items()} for s, by in ms.items()},
              "cold_p90_ms": {s: {p: float(np.percentile(v, 90)) for p, v in by.items()} for s, by in ms.items()}}
    common.save_result("int8_scan", result)
    log(f"chunks left {result['chunks_left']}; p50 ms {result['cold_p50_ms']}; load {loadavg_start}")


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the section this benchmark's results feed
    sections.write_sections("int8-scan")
