"""How long a LOAD DATA ... SYNC shuts other writers out (docs/benchmarks.md#sync-beside-another-writer).

    .venv/bin/python tests/benchmarks/bench_sync_lock.py [--pages 15]

A copy of ``--pages`` pages of the manual (8-30 kB each, in name order) is synced into a fresh
database with the table of bench_sync.py, three times: ``first`` (every page new), ``edited`` (a
paragraph added to 5 pages), ``nochange``. Meanwhile a second connection of the same process, whose
lock wait is 0, tries a one-row INSERT into another table every 10 ms: an attempt fails with 1205 while
the SYNC holds SQLite's write lock. Each step runs twice: in autocommit (the statement's first pass
reads and embeds the new and changed files before the lock, docs/durability.md) and inside
``BEGIN ... COMMIT`` (no first pass: everything under the lock, as every SYNC did before). Per run: the
statement's time, the writer's attempts that went through and that got 1205, and the longest time
between two of its writes that went through. Results: results/sync_lock.json.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

import tesseradb  # noqa: E402
from bench_sync import TABLE  # noqa: E402

POKE_SECONDS = 0.01
EDITED = 5
PARAGRAPH = "\n\nA paragraph added by the benchmark: replication lag pages the on-call engineer after five minutes.\n"


class Writer:
    """Another connection inserting a row every 10 ms with lock wait 0, until stopped after a success."""

    def __init__(self, db: str):
        self.con = tesseradb.connect(db, autocommit=True, timeout=0)
        self.ok: list[float] = []
        self.locked = 0
        self.stop = threading.Event()
        self.stopped_at = float("inf")
        self.thread = threading.Thread(target=self._run)

    def _run(self) -> None:
        while not (self.stop.is_set() and self.ok and self.ok[-1] > self.stopped_at):
            try:
                self.con.execute("INSERT INTO log (msg) VALUES ('beside the sync')")
                self.ok.append(time.monotonic())
            except tesseradb.OperationalError as exc:
                if exc.errno != 1205:
                    raise
                self.locked += 1
            time.sleep(POKE_SECONDS)

    def __enter__(self) -> Writer:
        self.thread.start()
        while not self.ok:
            time.sleep(POKE_SECONDS)
        return self

    def __exit__(self, *exc) -> None:
        self.stopped_at = time.monotonic()
        self.stop.set()
        self.thread.join()
        self.con.close()

    def longest_gap(self) -> float:
        return max((b - a for a, b in zip(self.ok, self.ok[1:])), default=0.0)


def step(db: str, folder: Path, bracket: bool) -> dict:
    con = tesseradb.connect(db, autocommit=True)
    with Writer(db) as writer:
        start = time.perf_counter()
        if bracket:
            con.execute("BEGIN")
        rows = con.execute(f"LOAD DATA INFILE '{folder}/*.md' SYNC INTO TABLE manual").rowcount
        if bracket:
            con.execute("COMMIT")
        seconds = time.perf_counter() - start
        writes_before = len(writer.ok)
    con.close()
    return {"rows": rows, "seconds": round(seconds, 3), "writer_ok": writes_before, "writer_1205": writer.locked,
            "longest_gap_s": round(writer.longest_gap(), 3)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=15)
    parser.add_argument("--no-report", action="store_true")
    args = parser.parse_args()
    chosen = [p for p in common.pages() if 8_000 < len(p.text.encode()) < 30_000][:args.pages]
    load_before = common.loadavg()
    runs: dict[str, dict] = {}
    for mode, bracket in (("autocommit", False), ("begin", True)):
        scratch = Path(tempfile.mkdtemp(prefix="bench_sync_lock_"))
        try:
            folder = scratch / "pages"
            folder.mkdir()
            for p in chosen:
                (folder / p.path.replace("/", "__")).write_text(p.text, encoding="utf-8")
            db = str(scratch / "x.db")
            con = tesseradb.connect(db, autocommit=True)
            con.execute(TABLE.format(name="manual"))
            con.execute("CREATE TABLE log (msg string)")
            con.close()
            runs[mode] = {"first": step(db, folder, bracket)}
            for f in sorted(folder.iterdir())[:EDITED]:
                with open(f, "a", encoding="utf-8") as out:
                    out.write(PARAGRAPH)
            runs[mode]["edited"] = step(db, folder, bracket)
            runs[mode]["nochange"] = step(db, folder, bracket)
            common.log(f"{mode}: {runs[mode]}")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    common.save_result("sync_lock", {
        "command": f"bench_sync_lock.py --pages {args.pages}", "pages": len(chosen),
        "text_bytes": sum(len(p.text.encode()) for p in chosen), "edited": EDITED,
        "poke_ms": POKE_SECONDS * 1000, "load_before": load_before, "load_after": common.loadavg(), "runs": runs})
    if not args.no_report:
        import sections
        sections.write_sections("sync-lock")
    return 0


if __name__ == "__main__":
    sys.exit(main())
