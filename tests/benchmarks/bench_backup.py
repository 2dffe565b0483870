"""BACKUP TO of the manual while a writer inserts (issue 28).

    .venv/bin/python tests/benchmarks/bench_backup.py [--writer-seconds 40] [--db manual.db]

The database is the manual (189 pages, one model-backed vector column, recursive 256/32 chunks; built
once through the engine and cached, or ``--db``: one with bench_hybrid_peers.py's table ``manual``). It is copied to a scratch folder; then a second process
(its own connection) inserts short documents into the same table, one per committed transaction,
embedding each (the real write path), for ``--writer-seconds``. Half-way, this process runs
``BACKUP TO`` on its own connection. Reported:

- the backup's wall time and the copy's size (one file: the index caches are inside it);
- the writer's commits and commit latency (p50 / max) before and during the backup: SQLite's online
  backup reads in one transaction (WAL), so the writer is not held up;
- the copy: ``CHECK TABLE`` (rows, chunks and indexes agree), its row count (one committed state:
  between the counts before and after the backup), and the time to open it and answer a first knn
  query (its indexes were saved inside it: a catch-up of the rows committed since, no rebuild), next to
  the same on the source (both after the model is loaded: the process's very first knn, which loads it,
  is reported apart).

Writes tests/benchmarks/results/backup.json.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import CACHE, log  # noqa: E402

import tesseradb  # noqa: E402

QUESTION = "how do I rotate the replication certificate"
CREATE = ("CREATE TABLE manual (path string, body text, v float_vector_array knn_type='hnsw' "
          "hnsw_similarity='cosine' model_name='Xenova/all-MiniLM-L6-v2' from='body' "
          "chunk_strategy='recursive' max_tokens='256' overlap_tokens='32')")
INSERT = "INSERT INTO manual (path, body) VALUES (?, ?)"
KNN = "SELECT id FROM manual WHERE knn(v, 10, ?)"


def build(path: Path) -> None:
    log(f"loading the manual into {path} (the engine only)")
    con = tesseradb.connect(str(path))
    con.execute(CREATE)
    pages = common.pages()
    for s in range(0, len(pages), 20):
        con.executemany(INSERT, [(p.path, p.text) for p in pages[s:s + 20]])
        con.commit()
        log(f"  {min(s + 20, len(pages))}/{len(pages)} pages")
    con.close()


def writer(path: str, seconds: float, out) -> None:
    """One committed INSERT at a time; (wall-clock start, latency) of each."""
    con = tesseradb.connect(path)
    started, times, n = time.perf_counter(), [], 0
    while time.perf_counter() - started < seconds:
        at, t0 = time.time(), time.perf_counter()
        con.execute(INSERT, (f"notes/{n}.md", f"Writer note {n}: the replication certificate was rotated at step {n}."))
        con.commit()
        times.append((at, time.perf_counter() - t0))
        n += 1
    con.close()
    out.put(times)


def first_knn(path: str) -> tuple[float, int]:
    t0 = time.perf_counter()
    con = tesseradb.connect(path)
    rows = con.execute(KNN, (QUESTION,)).fetchall()
    seconds = time.perf_counter() - t0
    con.close()
    return seconds, len(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--writer-seconds", type=float, default=40.0)
    parser.add_argument("--db", type=Path, default=CACHE / "backup-manual.db")
    args = parser.parse_args()
    if not args.db.exists():
        args.db.parent.mkdir(parents=True, exist_ok=True)
        build(args.db)
    scratch = Path(tempfile.mkdtemp(prefix="tessera-backup-"))
    source, copy = scratch / "manual.db", scratch / "manual-backup.db"
    con = tesseradb.connect(str(args.db))
    con.execute(f"BACKUP TO '{source}'")          # a private copy to write into (the cached one stays)
    con.close()
    before_open = first_knn(str(source))
    con = tesseradb.connect(str(source))
    rows_before = con.execute("SELECT COUNT(*) FROM manual").fetchone()[0]
    queue = mp.get_context("spawn").Queue()
    proc = mp.get_context("spawn").Process(target=writer, args=(str(source), args.writer_seconds, queue))
    load_start = common.loadavg()
    proc.start()
    time.sleep(args.writer_seconds / 2)
    began = time.time()
    con.execute(f"BACKUP TO '{copy}'")
    ended = time.time()
    backup_seconds = ended - began
    con.close()
    times = queue.get()
    proc.join()
    during = [lat for at, lat in times if began <= at <= ended]
    before = [lat for at, lat in times if at < began]
    con = tesseradb.connect(str(copy))
    check = con.execute("CHECK TABLE manual").fetchall()
    rows_copy = con.execute("SELECT COUNT(*) FROM manual").fetchone()[0]
    con.close()
    con = tesseradb.connect(str(source))
    rows_after = con.execute("SELECT COUNT(*) FROM manual").fetchone()[0]
    con.close()
    copy_open = first_knn(str(copy))
    source_open = first_knn(str(source))       # the model is loaded by now: both are open + index + query
    result = {
        "machine": common.machine(), "load_start": load_start, "load_end": common.loadavg(),
        "backup_seconds": backup_seconds, "copy_bytes": copy.stat().st_size,
        "copy_files": sorted(p.name for p in scratch.iterdir() if p.name.startswith("manual-backup")),
        "writer_commits": len(times), "writer_commits_during_backup": len(during),
        "writer_latency_ms_before": _lat(before), "writer_latency_ms_during": _lat(during),
        "rows_before": rows_before, "rows_in_copy": rows_copy, "rows_after": rows_after,
        "check_table": [list(r) for r in check],
        "first_knn_of_the_process_s": before_open[0],
        "source_open_and_first_knn_s": source_open[0], "copy_open_and_first_knn_s": copy_open[0],
        "copy_knn_rows": copy_open[1],
    }
    shutil.rmtree(scratch, ignore_errors=True)
    print(json.dumps(result, indent=2))
    log(f"wrote {common.save_result('backup', result)}")


def _lat(ms: list[float]) -> dict:
    ms = [x * 1000 for x in ms]
    return {"n": len(ms), "p50": statistics.median(ms) if ms else None, "max": max(ms) if ms else None}


if __name__ == "__main__":
    main()
