"""Queries at the model's limit (issue 37): first-time text knn against the bare model, hybrid_match
against knn, knn over the MySQL protocol against in-process; with a cProfile of each engine query.

    TESSERA_BENCH_CORPUS=... .venv/bin/python tests/benchmarks/bench_query_limit.py --every 6 --rounds 60

The table: the manual's pages (every ``--every``-th; 1 = the whole manual) in ``(title string, body
text, v float_vector_array ... chunk_strategy='recursive' max_tokens=256 overlap_tokens=32)``, built
once under the cache directory and reused. Query texts are the manual's section headings, each used
once in the run (the engine caches query vectors; the model does not): the sides take turns round by
round (model, knn, hybrid, knn over the wire), each getting texts no side embedded before, so the
ratios are of one run under the same load; then knn and knn over the wire alone, in turns call by call
(each call starts after the other process's: the same disturbance for both sides); then again in alternating blocks of ``BLOCK`` calls per
side (the first of each block not counted), where each side runs as it does on its own (the wire
side's server process otherwise starts every call with the caches the client's own model run left). The wire side is ``tessera serve`` in another process and
PyMySQL. Then the model takes turns, in blocks of calls, with itself on a session whose idle pool
threads spin (onnxruntime's default, which the engine turns off: model.ALLOW_SPINNING; call by call the
spinning session would slow the call after it), and hybrid_match with its
text side in a worker thread in turns with it inline (hybrid.spare_core chooses). hybrid_match's text
side runs in a worker thread that cProfile does not see: its own wall and CPU time are recorded
during the rounds, and each in-process call's time outside the model's onnxruntime runs. Then ``--profile`` first-time queries of knn and of hybrid_match run under
cProfile, and the top entries (by own time) are kept.

Writes tests/benchmarks/results/query_limit.json (with the ratios of the last ``HISTORY`` runs, this
one's included) and its section of docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import cProfile
import itertools
import pstats
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import CACHE, log  # noqa: E402

KNN = "SELECT id FROM manual WHERE knn(v, 10, {p})"
HYBRID = "SELECT id FROM manual WHERE hybrid_match({p}, v) LIMIT 10"
HISTORY = 8        # runs whose ratios the results keep (the newest last)
BLOCK = 12          # calls per block when sides take turns by blocks (in_blocks)
CREATE = ("CREATE TABLE manual (title string, body text, v float_vector_array knn_type='hnsw' "
          f"model_name='{common.MODEL_NAME}' from='body' chunk_strategy='recursive' max_tokens=256 overlap_tokens=32)")


def build(path: Path, every: int) -> int:
    import tesseradb
    pages = common.pages()[::every]
    if path.exists():
        return len(pages)
    log(f"loading {len(pages)} pages into {path}")
    con = tesseradb.connect(str(path))
    con.execute(CREATE)
    for s in range(0, len(pages), 20):
        con.executemany("INSERT INTO manual (id, title, body) VALUES (?, ?, ?)",
                        [(p.doc_id, p.path, p.text) for p in pages[s:s + 20]])
        con.commit()
    con.close()
    return len(pages)


def fts_segments(path: Path) -> dict[str, int]:
    """Each FTS5 index's segment count in the table's file (its ``_idx`` table's distinct segids): the
    text side reads every segment for each word, so the file's history matters (a file built by an
    older engine in more commits held 19 segments where this build, 10 commits, leaves 4)."""
    import apsw
    con = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        names = [n for (n,) in con.execute("SELECT name FROM sqlite_schema WHERE type = 'table' AND name LIKE '%fts%\\_idx' ESCAPE '\\'")]
        return {n[:-4]: con.execute(f'SELECT COUNT(DISTINCT segid) FROM "{n}"').fetchall()[0][0] for n in names}
    finally:
        con.close()


def serve(path: Path) -> tuple[subprocess.Popen, int]:
    return started([sys.executable, "-m", "tesseradb.clients.shell.main", "serve", str(path), "--port", "0"])


def started(command: list[str], env: dict[str, str] | None = None) -> tuple[subprocess.Popen, int]:
    """A server process started with ``command`` and the port its first line of stderr names."""
    proc = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    match = re.search(r" on [^ ]+:(\d+) ", proc.stderr.readline())
    if match is None:
        proc.kill()
        raise SystemExit("the server did not start")
    return proc, int(match.group(1))


def top_entries(profile: cProfile.Profile, n: int = 12) -> list[dict]:
    stats = pstats.Stats(profile)
    rows = []
    for (file, line, fn), (_, calls, own, cum, _) in stats.stats.items():       # type: ignore[attr-defined]
        rows.append({"function": f"{Path(file).name}:{line}({fn})" if line else fn, "calls": calls,
                     "own_s": own, "cumulative_s": cum})
    total = sum(r["own_s"] for r in rows)
    rows.sort(key=lambda r: -r["own_s"])
    for r in rows:
        r["share"] = r["own_s"] / total if total else 0.0
    return rows[:n]


def spinning_session(model):
    """A session of the model's graph whose idle pool threads spin (onnxruntime's default)."""
    import onnxruntime as ort
    from tesseradb.embed.model import session_options
    options = session_options()
    options.add_session_config_entry("session.intra_op.allow_spinning", "1")
    return ort.InferenceSession(model._graph(), options, providers=["CPUExecutionProvider"])  # noqa: SLF001


def embed_with(model, session, text: str) -> None:
    """The model embeds ``text`` as a query on ``session`` (then its own session again)."""
    own, model._session = model._session, session          # noqa: SLF001 - one thread: the rounds are sequential
    try:
        model.embed([text], query=True)
    finally:
        model._session = own                                # noqa: SLF001


class TextSideClock:
    """Wall and CPU milliseconds of each run of hybrid_match's unfiltered text side (its worker thread)."""

    def __init__(self) -> None:
        from tesseradb.sql.search import hybrid_defaults
        self.module, self.inner = hybrid_defaults, hybrid_defaults.best_chunks
        self.wall: list[float] = []
        self.cpu: list[float] = []

    def __enter__(self) -> "TextSideClock":
        def timed(*args):
            wall, cpu = time.perf_counter(), time.thread_time()
            try:
                return self.inner(*args)
            finally:
                self.wall.append((time.perf_counter() - wall) * 1000)
                self.cpu.append((time.thread_time() - cpu) * 1000)
        self.module.best_chunks = timed
        return self

    def __exit__(self, *exc) -> None:
        self.module.best_chunks = self.inner


def take_turns(sides: dict, ms: dict[str, list[float]], rounds: int, fresh, clock: "RunClock | None" = None,
               outside: dict[str, list[float]] | None = None, inside: dict[str, list[float]] | None = None) -> None:
    """Each round runs every side once on a text of its own; the order turns by one each round and
    runs backwards every other round, so no side always follows the same one. With ``clock``,
    ``outside[name]`` gets each call's time outside the model's onnxruntime runs and ``inside[name]``
    the time in them."""
    names = list(sides)
    for r in range(rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in (order if r % 2 == 0 else order[::-1]):
            text = fresh(f"r{r}")
            if clock is not None:
                clock.runs.clear()
            started = time.perf_counter()
            sides[name](text)
            ms[name].append((time.perf_counter() - started) * 1000)
            if clock is not None and outside is not None:
                outside[name].append(ms[name][-1] - sum(clock.runs))
            if clock is not None and inside is not None:
                inside[name].append(sum(clock.runs))


class RunClock:
    """The model's session, timing each onnxruntime run (milliseconds, in ``runs``) in this process."""

    def __init__(self, model) -> None:
        self.model, self.session, self.runs = model, model.session(), []

    def __getattr__(self, name: str):
        return getattr(self.session, name)

    def run(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            return self.session.run(*args, **kwargs)
        finally:
            self.runs.append((time.perf_counter() - started) * 1000)

    def __enter__(self) -> "RunClock":
        self.model._session = self                          # noqa: SLF001
        return self

    def __exit__(self, *exc) -> None:
        self.model._session = self.session                  # noqa: SLF001


def in_blocks(sides: dict, ms: dict[str, list[float]], calls: int, fresh, block: int = BLOCK) -> None:
    """About ``calls`` calls of each side, in blocks of ``block`` calls that take turns; the first call of
    a block is not counted. For sides that disturb the next call (a session whose pool threads spin
    on after its run slows whatever runs next), so that each is measured as it runs on its own."""
    names = list(sides)
    for b in range(max(1, calls // (block - 1))):
        for name in (names if b % 2 == 0 else names[::-1]):
            for i in range(block):
                text = fresh(f"b{b}")
                started = time.perf_counter()
                sides[name](text)
                if i:
                    ms[name].append((time.perf_counter() - started) * 1000)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=6, help="every n-th page of the manual (1: all of it)")
    ap.add_argument("--rounds", type=int, default=60)
    ap.add_argument("--profile", type=int, default=40, help="first-time queries profiled per statement")
    args = ap.parse_args()
    import pymysql
    import tesseradb
    from tesseradb import embed
    path = CACHE / ("manual.query-limit.db" if args.every == 1 else f"manual-every{args.every}.db")
    CACHE.mkdir(parents=True, exist_ok=True)
    pages = build(path, args.every)
    texts = itertools.cycle(dict.fromkeys(q.text for q in common.heading_queries(common.pages())))
    fresh = lambda tag: f"{next(texts)} {tag}"         # noqa: E731  - never embedded before in this run
    con = tesseradb.connect(str(path))
    model = embed.get_model(common.MODEL_NAME)
    proc, port = serve(path)
    try:
        wire = pymysql.connect(host="127.0.0.1", port=port, user="bench", autocommit=True)
        wcur = wire.cursor()
        sides = {
            "model": lambda t: model.embed_query(t),
            "knn": lambda t: con.execute(KNN.format(p="?"), (t,)).fetchall(),
            "hybrid": lambda t: con.execute(HYBRID.format(p="?"), (t,)).fetchall(),
            "knn over the wire": lambda t: (wcur.execute(KNN.format(p="%s"), (t,)), wcur.fetchall()),
        }
        for name, run in sides.items():                  # warm: the model, the index, the connection
            run(fresh("warm"))
        result: dict = {"pages": pages, "every": args.every, "rounds": args.rounds, "loadavg_start": common.loadavg(),
                        "fts_segments": fts_segments(path)}
        ms: dict[str, list[float]] = {name: [] for name in sides}
        outside: dict[str, list[float]] = {name: [] for name in sides}
        inside: dict[str, list[float]] = {name: [] for name in sides}
        from tesseradb.sql.search import hybrid
        chooser, picks = hybrid.spare_core, []      # how often the text side ran beside the model
        hybrid.spare_core = lambda: (picks.append(chooser()), picks[-1])[1]
        try:
            with TextSideClock() as text_side, RunClock(model) as clock:
                take_turns(sides, ms, args.rounds, fresh, clock, outside, inside)
        finally:
            hybrid.spare_core = chooser
        result["text_side_beside_model"] = [sum(picks), len(picks)]
        result["outside_model_p50_ms"] = {name: statistics.median(outside[name]) for name in ("model", "knn", "hybrid")}
        # the same model run timed inside each side: on a loaded machine it differs between sides by more
        # than the engine's own work (the scheduler, not the statement)
        result["inside_model_p50_ms"] = {name: statistics.median(inside[name]) for name in ("model", "knn", "hybrid")}
        result["loadavg_end"] = common.loadavg()
        result["text_side_ms"] = {"wall_p50": statistics.median(text_side.wall), "cpu_p50": statistics.median(text_side.cpu),
                                  "wall_p90": statistics.quantiles(text_side.wall, n=10)[-1], "runs": len(text_side.wall)}
        result["p50_ms"] = {name: statistics.median(v) for name, v in ms.items()}
        p = result["p50_ms"]
        result["ratios"] = {"knn / model": p["knn"] / p["model"], "hybrid / knn": p["hybrid"] / p["knn"],
                            "wire / in-process knn": p["knn over the wire"] / p["knn"]}
        # knn and knn over the wire alone, call by call: each call starts with what the other process's
        # call left in the caches. Among the four sides above three run in this process, so the server's
        # process starts every call after this one's, while the in-process knn follows another
        # in-process side in two calls of three (docs/benchmarks.md, "Over the wire")
        wire_pair = {name: sides[name] for name in ("knn", "knn over the wire")}
        wire_ms: dict[str, list[float]] = {name: [] for name in wire_pair}
        take_turns(wire_pair, wire_ms, args.rounds, lambda tag: fresh(f"w{tag}"))
        w = result["wire_pair_p50_ms"] = {name: statistics.median(v) for name, v in wire_ms.items()}
        result["wire_pair_ratio"] = w["knn over the wire"] / w["knn"]
        # the same four sides again in alternating blocks (the wording): each side runs BLOCK calls
        # in a row, as a server answering a stream of queries does, so the server's process does not
        # start each call with the caches the client process's own model and vectors left (two copies of
        # the ~90 MB model and of the vectors share one 32 MB L3 here)
        block_ms: dict[str, list[float]] = {name: [] for name in sides}
        in_blocks(sides, block_ms, args.rounds, lambda tag: fresh(f"k{tag}"))
        b = result["blocks_p50_ms"] = {name: statistics.median(v) for name, v in block_ms.items()}
        result["blocks_ratios"] = {"knn / model": b["knn"] / b["model"], "hybrid / knn": b["hybrid"] / b["knn"],
                                   "wire / in-process knn": b["knn over the wire"] / b["knn"]}
        # the same model on a session whose idle pool threads spin, in turns with the model's own session
        spinning = spinning_session(model)
        pair = {"model": lambda t: model.embed([t], query=True), "model, spinning pool": lambda t: embed_with(model, spinning, t)}
        pair_ms: dict[str, list[float]] = {name: [] for name in pair}
        in_blocks(pair, pair_ms, args.rounds, lambda tag: fresh(f"s{tag}"))
        result["block"] = BLOCK
        result["spinning_p50_ms"] = {name: statistics.median(v) for name, v in pair_ms.items()}
        result["spinning_min_ms"] = {name: min(v) for name, v in pair_ms.items()}
        del spinning
        # hybrid_match with its text side in a worker thread beside the model, and on the caller's thread
        # before it (hybrid.spare_core chooses by the machine's runnable threads at that moment), in turns

        def hybrid_with(threaded: bool):
            def run(t: str) -> None:
                hybrid.spare_core = lambda: threaded
                try:
                    con.execute(HYBRID.format(p="?"), (t,)).fetchall()
                finally:
                    hybrid.spare_core = chooser
            return run
        pair = {"worker thread": hybrid_with(True), "inline": hybrid_with(False)}
        pair_ms = {name: [] for name in pair}
        take_turns(pair, pair_ms, args.rounds, lambda tag: fresh(f"h{tag}"))
        result["text_side_p50_ms"] = {name: statistics.median(v) for name, v in pair_ms.items()}
        result["profiles"] = {}
        for name, sql in (("knn", KNN), ("hybrid", HYBRID)):
            profile = cProfile.Profile()
            profile.enable()
            for i in range(args.profile):
                con.execute(sql.format(p="?"), (fresh(f"p{i}"),)).fetchall()
            profile.disable()
            result["profiles"][name] = top_entries(profile)
        wire.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    con.close()
    log(f"p50 ms {({k: round(v, 2) for k, v in result['p50_ms'].items()})}; "
        f"ratios {({k: round(v, 3) for k, v in result['ratios'].items()})}; in blocks of {BLOCK}: "
        f"{({k: round(v, 3) for k, v in result['blocks_ratios'].items()})}; wire / in-process knn, the two "
        f"alone in turns: {result['wire_pair_ratio']:.3f}")
    name = "query_limit" if args.every != 1 else "query_limit_manual"
    # the ratios of the last runs too: one run on a shared machine carries that run's noise
    kept = (common.load_result(name) or {}).get("history", [])[-(HISTORY - 1):]
    result["history"] = kept + [{"when": time.strftime("%Y-%m-%d %H:%M:%S"), "rounds": args.rounds,
                                 "loadavg_start": result["loadavg_start"], "ratios": result["ratios"],
                                 "blocks_ratios": result["blocks_ratios"], "wire_pair_ratio": result["wire_pair_ratio"]}]
    common.save_result(name, result)
    log(f"wrote {common.RESULTS / (name + '.json')}")


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the section this benchmark's results feed
    sections.write_sections("query-limit")
