"""The manual in a minute (issue 37 item 5): LOAD DATA of the whole manual with the int8 model,
against the bare model on exactly the texts and batches the engine gave it.

    TESSERA_BENCH_CORPUS=$MANUAL nice .venv/bin/python tests/benchmarks/bench_manual_minute.py
    ... --every 6 --rounds 1 --profile        # a sixth of the pages, one round, plus a py-spy profile

Each round (4 by default), in an order that alternates between rounds (engine first in odd rounds:
engine, bare, bare, engine, engine, bare, ...; a drift of the machine falls on both sides):

* **engine** - into a fresh database: ``CREATE TABLE manual (path string, title string, body text,
  v float_vector_array ... model_name='all-MiniLM-L6-v2-int8' from='body' chunk_strategy='recursive'
  max_tokens='256' overlap_tokens='32')``, then ``LOAD DATA INFILE '<copy>/**/*.md' INTO TABLE manual``
  (a copy of the corpus without SOURCE.md), commit, the first knn() (the FAISS index) and close. All of
  that is the load time. The texts of every ``Model.embed`` call the statement made are recorded.
* **bare** - the same model object embedding exactly those texts, call by call (so the same batches).

Engine share = (engine - bare) / bare, in wall time and in CPU time (user + sys of this process,
``resource.getrusage``, all threads), with the load average at each step: on the shared machine the
wall times follow the other work, the CPU times much less. Both are medians over the rounds, and each
is taken apart (``measure``): the engine's own wall time (its load outside its ``Model.embed`` calls:
before the first, between them, after the last, COMMIT, the first knn()) and its model calls' wall
time against the bare wall time; its own CPU time (outside the model's batches, less the bare side's)
and its batches' CPU time against the bare batches'; and Python's garbage collections. Afterwards the stored vectors are checked
against the bare ones (the chunks re-planned from the stored bodies, each chunk's vector looked up by
its text). ``--profile`` loads once more in a child process sampled by py-spy (every thread, idle
ones left out; the child warms the model up before py-spy attaches) and keeps the samples grouped
by part and the top entries by own samples (not timed). Writes results/manual_minute.json and its
section of docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import gc
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import Config, log  # noqa: E402

MODEL = "all-MiniLM-L6-v2-int8"
REC = Config("recursive", 256, 32)
CREATE = ("CREATE TABLE manual (path string, title string, body text, "
          f"v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' model_name='{MODEL}' from='body' "
          f"chunk_strategy='recursive' max_tokens='{REC.max_tokens}' overlap_tokens='{REC.overlap}')")
LOAD = "LOAD DATA INFILE ? INTO TABLE manual"
KNN = "SELECT id FROM manual WHERE knn(v, 10, ?)"
TARGET_SECONDS, TARGET_SHARE = 60.0, 0.05

# py-spy frames ('function (file:line)') -> the part of the load they belong to: a sample goes to the
# part of its innermost frame that names one (the first part that matches; none: "other")
PARTS = [
    ("tokenizing documents for the chunk planner", ("Model.token_offsets", "Model.count_tokens", "Model.page_tokens",
                                                    "token_ids.py")),
    ("model (Model.embed: tokenizing the chunks, the onnxruntime batches)", ("Session.run", "onnxruntime", "Model.embed",
                                                                            "Model._run", "runner.py", "pooling.py")),
    ("markdown outline (markdown-it)", ("markdown_it/", "markdown_chunks.py")),
    ("chunk planning, locations and chunk keys", ("chunking.py", "chunk_context.py", "planning.py", "embed/rows.py",
                                                  "reuse.py")),
    ("reading and parsing the files", ("io/documents.py", "load_documents.py", "globs.py", "yaml", "formats.py",
                                       "embed_first_load.py")),
    ("FAISS index (built at commit)", ("faiss", "storage/vectors.py", "storage/chunks.py")),
    ("SQLite writes (apsw: rows, chunk rows, their full-text)", ("rowstore.py", "chunk_table.py", "apsw")),
]
# innermost frames of a thread that waits for another (py-spy does not always see it as idle): no CPU
WAITS = ("Condition.wait (threading.py)", "Event.wait (threading.py)", "Thread.join (threading.py)",
         "Thread._wait_for_tstate_lock (threading.py)", "wait (concurrent/futures/_base.py)")


def cpu_seconds() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


class Recorder:
    """Records the texts of every Model.embed call (not the query's) while ``active``, with each call's
    wall interval (``perf_counter`` at its start and end) and the CPU time of its batches
    (``Model._run``: onnxruntime and pooling, on the thread that runs them), whichever side runs them:
    the rest of a side's CPU time is the engine's own work plus the model's tokenizing of the chunks,
    which both sides do alike."""

    def __init__(self, model) -> None:
        self.calls: list[list[str]] = []
        self.spans: list[tuple[float, float, float]] = []     # per call: start, end, its batches' CPU s
        self.active = False
        self.batch_cpu = self.gc_cpu = self.gc_cpu_in_batches = 0.0
        self.in_batch = threading.local()
        self.gc_started = threading.local()
        inner, run = model.embed, model._run

        def embed(texts, **kw):
            if not kw.get("query"):
                if self.active:
                    self.calls.append([str(t) for t in texts])   # plain text: the bare model tokenizes it
                cpu, started = self.batch_cpu, time.perf_counter()
                try:
                    return inner(texts, **kw)
                finally:
                    self.spans.append((started, time.perf_counter(), self.batch_cpu - cpu))
            return inner(texts, **kw)

        def timed_run(*args, **kw):
            started = time.thread_time()
            self.in_batch.on = True
            try:
                return run(*args, **kw)
            finally:
                self.in_batch.on = False
                self.batch_cpu += time.thread_time() - started      # a float add: atomic enough under the GIL

        model.embed = embed
        model._run = timed_run
        gc.callbacks.append(self._gc)

    def _gc(self, phase: str, _info: dict) -> None:
        """Python's garbage collections: their CPU time, and the part of it inside the model's batches
        (a collection runs on the thread whose allocation set it off, and walks the whole heap's
        young or every generation, so a larger heap costs the batches more)."""
        if phase == "start":
            self.gc_started.at = time.thread_time()
            return
        spent = time.thread_time() - getattr(self.gc_started, "at", time.thread_time())
        self.gc_cpu += spent
        if getattr(self.in_batch, "on", False):
            self.gc_cpu_in_batches += spent

    def reset(self, active: bool) -> None:
        self.active, self.batch_cpu, self.spans = active, 0.0, []
        self.gc_cpu = self.gc_cpu_in_batches = 0.0
        if active:
            self.calls = []

    def timed(self, started: float) -> dict:
        """The side's model calls: their wall time, and each call's (start, end) from ``started`` and
        its batches' CPU time."""
        return {"batch_cpu": self.batch_cpu, "gc_cpu": self.gc_cpu, "gc_cpu_in_batches": self.gc_cpu_in_batches,
                "model_seconds": sum(b - a for a, b, _ in self.spans),
                "model_calls": [[a - started, b - started, c] for a, b, c in self.spans]}


def copy_corpus(dest: Path, every: int) -> int:
    pages = common.pages()[::every]
    for p in pages:
        target = dest / p.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(p.text, encoding="utf-8")
    return len(pages)


def fresh(path: Path) -> None:
    for p in (path, Path(str(path) + "-wal"), Path(str(path) + "-shm"), Path(str(path) + "-journal")):
        p.unlink(missing_ok=True)
    shutil.rmtree(Path(str(path) + ".tessera"), ignore_errors=True)


def engine_load(db_path: Path, pattern: str) -> dict:
    import tesseradb
    fresh(db_path)
    con = tesseradb.connect(str(db_path))
    con.cursor().execute(CREATE)
    con.commit()
    load, cpu, started = os.getloadavg(), cpu_seconds(), time.perf_counter()
    cur = con.cursor()
    cur.execute(LOAD, (pattern,))
    rows = cur.rowcount
    stated = time.perf_counter()
    con.commit()
    loaded = time.perf_counter()
    con.cursor().execute(KNN, ("warm up the index",)).fetchall()
    con.close()
    ended = time.perf_counter()
    return {"seconds": ended - started, "cpu": cpu_seconds() - cpu, "rows": rows, "started": started,
            "statement_seconds": stated - started, "commit_seconds": loaded - stated,
            "knn_seconds": ended - loaded, "load_start": list(load), "load_end": list(os.getloadavg())}


def bare_run(model, calls: list[list[str]]) -> tuple[dict, dict[str, np.ndarray]]:
    load, cpu, started = os.getloadavg(), cpu_seconds(), time.perf_counter()
    vectors = [model.embed(texts) for texts in calls]
    out = {"seconds": time.perf_counter() - started, "cpu": cpu_seconds() - cpu, "started": started,
           "load_start": list(load), "load_end": list(os.getloadavg())}
    return out, {t: v for texts, vecs in zip(calls, vectors) for t, v in zip(texts, vecs)}


def check_stored(db_path: Path, model, bare: dict[str, np.ndarray]) -> dict:
    """Each stored row's vectors against the bare vectors of its chunks (re-planned from its body)."""
    import tesseradb
    con = tesseradb.connect(str(db_path))
    rows = con.cursor().execute("SELECT id, body, v FROM manual ORDER BY id").fetchall()
    con.close()
    chunks = missing = 0
    worst = 0.0
    for _, body, stored in rows:
        texts = common.plan(model, body, REC)
        got = np.asarray(stored, np.float32).reshape(-1, model.dims)
        if len(got) != len(texts):
            return {"rows": len(rows), "same_chunks": False}
        for text, vec in zip(texts, got):
            chunks += 1
            if text not in bare:
                missing += 1
                continue
            worst = max(worst, float(np.abs(bare[text] - vec).max()))
    return {"rows": len(rows), "chunks": chunks, "same_chunks": missing == 0, "max_abs_diff": worst}


def profile_load(db_path: Path, pattern: str, rate: int = 200, top: int = 15) -> dict:
    """One more load (LOAD DATA, commit, first knn(), close) in a child process, sampled by py-spy
    ``rate`` times a second, every thread, idle ones left out (so on a quiet machine a sample is
    1/rate CPU second). The child warms the model up, then py-spy attaches, then it loads."""
    spy = shutil.which("py-spy", path=str(Path(sys.executable).parent)) or shutil.which("py-spy")
    if spy is None:
        log("py-spy is not installed (pip install 'tesseradb[test]'): no profile")
        return {}
    raw = db_path.parent / "profile.raw"
    child = subprocess.Popen([sys.executable, __file__, "--profile-child", pattern, str(db_path)],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        if child.stdout.readline().strip() != "ready":
            raise RuntimeError("the profiled child did not start")
        sampler = subprocess.Popen([spy, "record", "-r", str(rate), "-f", "raw", "-o", str(raw), "--threads",
                                    "--pid", str(child.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(2.0)                         # py-spy attaches (it says so only on a terminal)
        child.stdin.write("go\n")
        child.stdin.flush()
        timed = json.loads(child.stdout.readline())
        child.stdin.close()
        child.wait(timeout=120)
        sampler.wait(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
    if not raw.exists():
        log("py-spy could not sample the child (ptrace not allowed?): no profile")
        return {}
    return {"sampler": f"py-spy record -r {rate} --threads (idle threads left out)", "rate": rate,
            "load": timed, **_samples(raw, rate, top)}


def _samples(raw: Path, rate: int, top: int) -> dict:
    """py-spy's raw stacks grouped by part and by their innermost frame (own samples)."""
    frame_re = re.compile(r"^(.*) \((.*?):\d+\)$")
    parts: dict[str, int] = {}
    own: dict[str, list] = {}
    threads: dict[str, int] = {}
    total = waiting = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        frames = stack.split(";")
        thread = re.sub(r"^thread \(\d+\):? ?", "", frames[0]).rstrip("_0123456789") or "thread"
        frames = [m.group(1) + " (" + m.group(2) + ")" if (m := frame_re.match(f)) else f for f in frames[1:]]
        if frames and frames[-1] in WAITS:
            waiting += n
            continue
        part = next((name for f in reversed(frames) for name, keys in PARTS if any(k in f for k in keys)), "other")
        total += n
        parts[part] = parts.get(part, 0) + n
        threads[thread] = threads.get(thread, 0) + n
        leaf = frames[-1] if frames else "(no Python frame)"
        entry = own.setdefault(leaf, [0, part])
        entry[0] += n
    ranked = sorted(own.items(), key=lambda kv: -kv[1][0])[:top]
    return {"samples": total, "seconds": total / rate, "waiting_seconds": waiting / rate,
            "parts": {k: v / rate for k, v in sorted(parts.items(), key=lambda kv: -kv[1])},
            "threads": {k: v / rate for k, v in sorted(threads.items(), key=lambda kv: -kv[1])},
            "top": [{"where": where, "seconds": n / rate, "part": part} for where, (n, part) in ranked]}


def profile_child(pattern: str, db_path: str) -> None:
    """The profiled load (``--profile-child``): warm up, say ready, wait for go, load, print the times."""
    from tesseradb import embed
    import tesseradb
    model = embed.get_model(MODEL)
    warm_up(model)
    scratch = tesseradb.connect(":memory:")         # the grammar, as the timed rounds found it
    scratch.cursor().execute(CREATE)
    scratch.close()
    print("ready", flush=True)
    sys.stdin.readline()
    print(json.dumps(engine_load(Path(db_path), pattern)), flush=True)
    sys.stdin.read()


def warm_up(model) -> None:
    """The model's first use, which neither side pays: its two bulk sessions and its query session
    (the first knn() of the engine's load embeds a query; the bare model embeds none)."""
    model.embed(["warm up"] * 2 + ["a longer text to warm up the second batch " * 30] * 40)
    model.embed_query("warm up the query session")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=1, help="only every Nth page (1 = the whole manual)")
    ap.add_argument("--rounds", type=int, default=4,
                    help="engine/bare rounds, the order alternating: engine, bare, bare, engine, engine, ...")
    ap.add_argument("--profile", action="store_true", help="also load once sampled by py-spy (not timed)")
    ap.add_argument("--profile-every", type=int, default=0,
                    help="the profiled load takes every Nth page of those loaded (0: all of them)")
    ap.add_argument("--out", default="manual_minute", help="result name under tests/benchmarks/results/")
    ap.add_argument("--note", action="append", default=[], help="a note about the run, kept with its figures")
    ap.add_argument("--profile-child", nargs=2, metavar=("PATTERN", "DB"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.profile_child:
        profile_child(*args.profile_child)
        return

    from tesseradb import embed
    work = Path(tempfile.mkdtemp(prefix="tessera-minute."))
    try:
        pages = copy_corpus(work / "manual", args.every)
        pattern = str(work / "manual" / "**" / "*.md")
        db_path = work / "manual.db"
        model = embed.get_model(MODEL)
        warm_up(model)
        recorder = Recorder(model)
        result: dict = {"model": MODEL, "pages": pages, "every": args.every, "cpus": os.cpu_count(),
                        "workers": model.bulk_workers(), "machine": common.machine(), "rounds": [],
                        "notes": args.note, "args": sys.argv[1:]}
        for n in range(args.rounds):
            order = ["engine", "bare"] if n % 2 == 0 or not recorder.calls else ["bare", "engine"]
            row: dict = {"order": order}
            for side in order:
                if side == "engine":
                    recorder.reset(active=True)
                    row["engine"] = engine_load(db_path, pattern)
                    recorder.active = False
                    calls = recorder.calls
                else:
                    recorder.reset(active=False)
                    row["bare"], bare_vectors = bare_run(model, recorder.calls)
                row[side].update(recorder.timed(row[side].pop("started")))
            row["calls"] = [len(c) for c in calls]
            measure(row)
            result["rounds"].append(row)
            log(f"round {n + 1}: engine {row['engine']['seconds']:.1f} s (cpu {row['engine']['cpu']:.1f}, model calls "
                f"{row['engine']['model_seconds']:.1f} s), bare {row['bare']['seconds']:.1f} s (cpu "
                f"{row['bare']['cpu']:.1f}); share wall {100 * row['share_wall']:.1f}% cpu {100 * row['share_cpu']:.1f}%; "
                f"own wall {row['own_wall']:.2f} s ({100 * row['share_own_wall']:.1f}%), model wall inflation "
                f"{row['model_wall_inflation']:+.2f} s; own cpu {row['own_cpu']:.1f} s ({100 * row['share_own_cpu']:.1f}%), "
                f"batch cpu {row['engine']['batch_cpu']:.1f} vs {row['bare']['batch_cpu']:.1f}; gc cpu "
                f"{row['engine']['gc_cpu']:.2f} ({row['engine']['gc_cpu_in_batches']:.2f} in batches) vs "
                f"{row['bare']['gc_cpu']:.2f} ({row['bare']['gc_cpu_in_batches']:.2f}); load {os.getloadavg()}")
        result["check"] = check_stored(db_path, model, bare_vectors)
        result["tokens"] = common.model_tokens(model, [t for c in calls for t in c])
        result["chunks_embedded"] = sum(len(c) for c in calls)
        log(f"stored vs bare: {result['check']}")
        if args.profile:
            part = work / "profiled"
            result["profile_pages"] = copy_corpus(part, args.every * max(1, args.profile_every))
            result["profile"] = profile_load(db_path, str(part / "**" / "*.md"))
        summarize(result)
        path = common.save_result(args.out, result)
        log(f"wrote {path}")
        print(result["summary"])
    finally:
        shutil.rmtree(work, ignore_errors=True)


def measure(row: dict) -> None:
    """A round's shares. Plain: engine / bare - 1, by wall and by CPU time. The engine's own wall time
    is its load's wall time outside its ``Model.embed`` calls (before the first, between them, after the
    last: the writes, COMMIT, the first knn()); the rest of the wall share is the engine's model calls
    taking longer than the same calls bare (``model_wall_inflation``: their batches slowed by what ran
    beside them, or by the machine). The engine's own CPU time is its CPU time outside the model's
    batches less the bare side's (the model's tokenizing of the chunks, which both do)."""
    e, b = row["engine"], row["bare"]
    row["share_wall"] = e["seconds"] / b["seconds"] - 1
    row["share_cpu"] = e["cpu"] / b["cpu"] - 1
    row["own_wall"] = e["seconds"] - e["model_seconds"]
    row["share_own_wall"] = row["own_wall"] / b["seconds"]
    row["model_wall_inflation"] = e["model_seconds"] - b["seconds"]
    calls = e["model_calls"]
    row["own_wall_parts"] = {
        "before the first model call": calls[0][0] if calls else row["own_wall"],
        "between model calls": sum(nxt[0] - cur[1] for cur, nxt in zip(calls, calls[1:])),
        "after the last, to the statement's end": e["statement_seconds"] - calls[-1][1] if calls else 0.0,
        "COMMIT": e["commit_seconds"], "the first knn() (its FAISS index) and close": e["knn_seconds"]}
    row["batch_inflation_cpu"] = e["batch_cpu"] - b["batch_cpu"]
    row["own_cpu"] = (e["cpu"] - e["batch_cpu"]) - (b["cpu"] - b["batch_cpu"])
    row["share_own_cpu"] = row["own_cpu"] / b["cpu"]


def summarize(r: dict) -> None:
    rounds = r["rounds"]
    med = lambda xs: float(np.median(xs))  # noqa: E731
    r["summary"] = {
        "engine_seconds": med([x["engine"]["seconds"] for x in rounds]),
        "engine_best_seconds": min(x["engine"]["seconds"] for x in rounds),
        "engine_cpu": med([x["engine"]["cpu"] for x in rounds]),
        "bare_seconds": med([x["bare"]["seconds"] for x in rounds]),
        "bare_cpu": med([x["bare"]["cpu"] for x in rounds]),
        "share_wall": med([x["share_wall"] for x in rounds]),
        "share_cpu": med([x["share_cpu"] for x in rounds]),
        # the medians' ratio: each side's typical time, whichever rounds they come from
        "share_wall_of_medians": med([x["engine"]["seconds"] for x in rounds])
        / med([x["bare"]["seconds"] for x in rounds]) - 1,
        "own_wall": med([x["own_wall"] for x in rounds]),
        "share_own_wall": med([x["share_own_wall"] for x in rounds]),
        "model_wall_inflation": med([x["model_wall_inflation"] for x in rounds]),
        "batch_inflation_cpu": med([x["batch_inflation_cpu"] for x in rounds]),
        "own_cpu": med([x["own_cpu"] for x in rounds]),
        "share_own_cpu": med([x["share_own_cpu"] for x in rounds]),
        # the engine's CPU time spread over the cores: the wall time of an otherwise idle machine, at best
        "engine_cpu_per_core": med([x["engine"]["cpu"] for x in rounds]) / max(1, r["workers"]),
    }


if __name__ == "__main__":
    main()
    if "--profile-child" in sys.argv:
        sys.exit(0)
    import sections  # docs/benchmarks.md: the section this benchmark's results feed
    sections.write_sections("manual-minute")
