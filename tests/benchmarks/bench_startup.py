"""Start-up: what a script and a shell pay before their first answer (issue 28).

    .venv/bin/python tests/benchmarks/bench_startup.py [--runs 10]

Each case is a fresh process, timed from spawn to exit, ``--runs`` times; the median is reported
with the machine's load average (every process here competes for the same cores):

- ``sqlite3``: ``import sqlite3`` + connect + ``SELECT 1`` (the floor: CPython's own start-up)
- ``tesseradb``: ``import tesseradb`` + connect + first ``SELECT 1``
- ``shell``: ``tessera -e "SELECT 1"``
- ``first knn``: connect to a database with a model-backed column and run one knn text query
  (loads onnxruntime, tokenizers and the model; FAISS only when the table is past exact search)

Each case is timed twice over: wall clock, and the CPU time the child used (user + system, from
``resource.getrusage``), which a shared machine's load disturbs less. The cases take turns, run by
run, so load falls on all alike. Writes tests/benchmarks/results/startup.json and its section of
docs/benchmarks.md (report_startup.py).
"""
from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import log  # noqa: E402

PY = sys.executable
TESSERA = str(Path(PY).with_name("tessera"))
KNN_DB = """
import tesseradb
c = tesseradb.connect({path!r}, autocommit=True)
c.execute("CREATE TABLE IF NOT EXISTS d (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
          "model_name='Xenova/all-MiniLM-L6-v2' from='body' chunk_strategy='recursive' max_tokens='64')")
if not c.execute("SELECT COUNT(*) FROM d").fetchone()[0]:
    c.executemany("INSERT INTO d (body) VALUES (?)", [(f"note {{i}} about certificates and logs",) for i in range(50)])
c.close()
"""
KNN = ("import tesseradb; c = tesseradb.connect({path!r});"
       " c.execute(\"SELECT id FROM d WHERE knn(v, 3, 'rotate the certificate')\").fetchall()")

CASES = {
    "sqlite3": [PY, "-c", "import sqlite3; sqlite3.connect(':memory:').execute('SELECT 1').fetchall()"],
    "tesseradb": [PY, "-c", "import tesseradb; tesseradb.connect(':memory:').execute('SELECT 1').fetchall()"],
    "shell": [TESSERA, "-e", "SELECT 1"],
}


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(cmd, check=True, capture_output=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=10)
    args = ap.parse_args()
    result = {"machine": common.machine(), "loadavg_start": common.loadavg(), "runs": args.runs, "cases": {}}
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "knn.db")
        subprocess.run([PY, "-c", KNN_DB.format(path=path)], check=True)
        cases = {**CASES, "first knn": [PY, "-c", KNN.format(path=path)]}
        for _ in range(2):                                    # warm the OS file cache
            for cmd in cases.values():
                subprocess.run(cmd, capture_output=True)
        walls: dict[str, list[float]] = {name: [] for name in cases}
        cpus: dict[str, list[float]] = {name: [] for name in cases}
        for _ in range(args.runs):                          # the cases take turns
            for name, cmd in cases.items():
                wall, cpu = timed(cmd)
                walls[name].append(wall)
                cpus[name].append(cpu)
        for name in cases:
            w, c = walls[name], cpus[name]
            result["cases"][name] = {"median_s": statistics.median(w), "min_s": min(w), "max_s": max(w),
                                     "cpu_median_s": statistics.median(c)}
            log(f"  {name:10} median {statistics.median(w):.3f} s (min {min(w):.3f}, max {max(w):.3f}); "
                f"CPU {statistics.median(c):.3f} s")
    result["loadavg_end"] = common.loadavg()
    common.save_result("startup", result)
    log(f"wrote {common.RESULTS / 'startup.json'}")


if __name__ == "__main__":
    main()
    import sections  # docs/benchmarks.md: the section this benchmark's results feed
    sections.write_sections("startup")
