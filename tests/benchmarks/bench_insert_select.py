"""INSERT ... SELECT of a large table: anonymous memory (RssAnon) above its level before the statement,
time and rows per second (issue 37, item 4).

    .venv/bin/python tests/benchmarks/bench_insert_select.py --label paged       # 200k rows
    .venv/bin/python tests/benchmarks/bench_insert_select.py --label before      # run under the old engine

The source table has ``--rows`` rows of about ``--text-bytes`` of text and a ``--dims``-d float_vector
(no model: it measures the engine, not embedding). Two statements are measured, each on a fresh copy
of the same file, in a fresh process (a process keeps the heap an earlier case freed, which would hide
the next case's growth):

- ``copy``: ``INSERT INTO dst (body, v) SELECT body, v FROM src`` (another table: streams directly);
- ``self``: ``INSERT INTO src (body, v) SELECT body, v FROM src`` (its own table: doubles it, through
  a TEMP copy of what the SELECT read);
- ``autocommit``: the ``copy`` statement on a connection in autocommit mode: the statement's figures
  include its COMMIT, as a user of autocommit sees them.

The statement and its COMMIT are measured apart: the COMMIT applies the new chunk rows to the column's
FAISS HNSW index (built then, if this connection had not loaded it) and saves it. A thread samples
RssAnon from /proc/self/status every few milliseconds (the kernel keeps no peak of it); a figure is the
largest sample minus the one taken just before the statement (for the COMMIT too: the level before the
statement). Part of what the COMMIT adds is the index itself, which stays in memory to answer
searches: its footprint (vectors, links, id maps: ``VectorIndex.footprint()``) is recorded after the
COMMIT, and the peak above the index is the COMMIT's own transient memory. The results (one entry per
``--label``) go to results/insert_select.json and its section of docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import gc
import json
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

import tesseradb  # noqa: E402

DDL = "CREATE TABLE {name} (body text, v float_vector knn_type='hnsw' knn_dims='{dims}' hnsw_similarity='l2')"
STATEMENTS = {"copy": "INSERT INTO dst (body, v) SELECT body, v FROM src",
              "self": "INSERT INTO src (body, v) SELECT body, v FROM src",
              "autocommit": "INSERT INTO dst (body, v) SELECT body, v FROM src"}
TARGETS = {"copy": "dst", "self": "src", "autocommit": "dst"}


def rss_anon_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("RssAnon:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no RssAnon in /proc/self/status (Linux only)")


class Sampler(threading.Thread):
    """The largest RssAnon seen while it runs."""

    def __init__(self, every: float = 0.005):
        super().__init__(daemon=True)
        self.every, self.peak, self.samples = every, rss_anon_mib(), 0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            self.peak = max(self.peak, rss_anon_mib())
            self.samples += 1
            time.sleep(self.every)

    def stop(self) -> float:
        self._done.set()
        self.join()
        self.peak = max(self.peak, rss_anon_mib())
        return self.peak


def build_source(path: Path, rows: int, text_bytes: int, dims: int) -> None:
    import numpy as np
    rng = random.Random(37)
    words = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 10))) for _ in range(5000)]
    vecs = np.random.default_rng(37).standard_normal((rows, dims)).astype("float32")
    con = tesseradb.connect(str(path))
    con.execute(DDL.format(name="src", dims=dims))
    con.execute(DDL.format(name="dst", dims=dims))
    per_word = 7
    step = 5000
    for start in range(0, rows, step):
        batch = []
        for n in range(start, min(rows, start + step)):
            text = " ".join(rng.choices(words, k=text_bytes // per_word))[:text_bytes]
            batch.append((text, vecs[n].tolist()))
        con.executemany("INSERT INTO src (body, v) VALUES (?, ?)", batch)
        con.commit()
    con.close()


def index_mib(con, table: str) -> float:
    """Memory the column's FAISS index holds (vectors or codes, links, id maps), 0 when not loaded."""
    index = con.db.column_index(con.db.table(table), "v").index
    return 0.0 if index is None else sum(index.footprint().values()) / 2**20


def measure(path: Path, case: str) -> dict:
    autocommit = case == "autocommit"
    con = tesseradb.connect(str(path), autocommit=autocommit)
    target = TARGETS[case]
    count = f"SELECT COUNT(*) FROM {target}"
    before_rows = con.execute(count).fetchone()[0]
    con.execute("BEGIN")
    con.execute(STATEMENTS[case] + " LIMIT 1")         # warm-up: the modules the statement loads
    con.execute("ROLLBACK")
    index_before = index_mib(con, target)
    gc.collect()
    sampler = Sampler()
    base = sampler.peak
    sampler.start()
    t0 = time.perf_counter()
    cur = con.execute(STATEMENTS[case])
    elapsed = time.perf_counter() - t0
    peak = sampler.stop()
    copied = cur.rowcount
    committer = Sampler()
    committer.start()
    t0 = time.perf_counter()
    con.commit()
    commit_s = time.perf_counter() - t0
    commit_peak = committer.stop()
    index = index_mib(con, target) - index_before
    gc.collect()
    after = rss_anon_mib()
    after_rows = con.execute(count).fetchone()[0]
    con.close()
    assert after_rows == before_rows + copied, (before_rows, copied, after_rows)
    figures = {"statement": STATEMENTS[case], "autocommit": autocommit, "rows": copied,
               "seconds": round(elapsed, 2), "rows_per_s": round(copied / elapsed),
               "rss_anon_before_mib": round(base, 1), "rss_anon_peak_mib": round(peak, 1),
               "rss_anon_above_mib": round(peak - base, 1), "index_mib": round(index, 1),
               "rss_anon_after_commit_mib": round(after - base, 1), "samples": sampler.samples}
    if autocommit:          # the statement's own figures are its COMMIT's too
        figures.update({"commit_seconds": None, "commit_rss_anon_above_mib": None,
                        "transient_above_index_mib": round(peak - base - index, 1)})
    else:
        figures.update({"commit_seconds": round(commit_s, 2), "commit_rss_anon_above_mib": round(commit_peak - base, 1),
                        "transient_above_index_mib": round(max(peak, commit_peak) - base - index, 1)})
    return figures


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--text-bytes", type=int, default=1000)
    ap.add_argument("--dims", type=int, default=64)
    ap.add_argument("--label", default="paged",
                    help="the entry of the results this run writes (before, after: streamed; paged: and its COMMIT paged)")
    ap.add_argument("--cases", default="copy,self,autocommit")
    ap.add_argument("--out", default="insert_select")
    ap.add_argument("--no-report", action="store_true", help="do not rewrite the docs/benchmarks.md section")
    ap.add_argument("--measure", help=argparse.SUPPRESS)     # the child: measure one case on this file
    args = ap.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(Path(args.measure), args.cases)))
        return 0
    scratch = Path(tempfile.gettempdir()) / "tesseradb-bench-insert-select"
    scratch.mkdir(exist_ok=True)
    source = scratch / f"src_{args.rows}_{args.text_bytes}_{args.dims}.db"
    if not source.exists():
        common.log(f"building the source table: {args.rows:,} rows")
        build_source(scratch / "building.db", args.rows, args.text_bytes, args.dims)
        (scratch / "building.db").rename(source)
    results = common.load_result(args.out) or {"runs": {}}
    entry = results["runs"].setdefault(args.label, {"cases": {}})
    entry.update({"rows": args.rows, "text_bytes": args.text_bytes, "dims": args.dims, "machine": common.machine()})
    for case in args.cases.split(","):
        run = scratch / f"run_{args.label}_{case}.db"
        for suffix in ("", "-wal", "-shm"):
            Path(str(run) + suffix).unlink(missing_ok=True)
        shutil.copyfile(source, run)
        load_start = common.loadavg()
        child = subprocess.run([sys.executable, __file__, "--measure", str(run), "--cases", case],
                               check=True, capture_output=True, text=True)     # a fresh process per case
        figures = json.loads(child.stdout.strip().splitlines()[-1])
        figures.update({"when": time.strftime("%Y-%m-%d %H:%M", time.gmtime()), "loadavg_start": load_start,
                        "loadavg_end": common.loadavg(),
                        "command": f"bench_insert_select.py --label {args.label} --cases {case} --rows {args.rows}"})
        common.log(f"{args.label} {case}: {figures}")
        for suffix in ("", "-wal", "-shm"):
            Path(str(run) + suffix).unlink(missing_ok=True)
        results = common.load_result(args.out) or results      # another run may have written meanwhile
        results["runs"].setdefault(args.label, entry)["cases"][case] = figures
        common.save_result(args.out, results)
    if not args.no_report:
        import sections
        sections.write_sections("insert-select")
    return 0


if __name__ == "__main__":
    sys.exit(main())
