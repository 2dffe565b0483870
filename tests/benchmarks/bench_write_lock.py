"""Writers that embed, over the wire, against knn() and MATCH readers (issue 33).

    .venv/bin/python tests/benchmarks/bench_write_lock.py [--clients 32] [--seconds 60]

Starts ``tessera serve`` on a scratch database (the three documents of tests/server/support.py, one
model-backed column: sentence chunks of 32 tokens), then runs the mix of tests/server/write_mix.py:
each client loops, 40% INSERTs of 2-8 sentences (embedded by the server), 30% knn() of a question,
30% MATCH of a word, each on its own PyMySQL connection, for ``--seconds``. Reported per kind of call:
how many went through, the error numbers clients saw (1205 is a writer that waited past the 5 s lock
wait), and latency p50 / p95 / max; then that every acknowledged row is stored once.

Writes tests/benchmarks/results/write_lock.json and its section of docs/benchmarks.md.
"""
from __future__ import annotations

import argparse
import signal
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import common  # noqa: E402
import sections  # noqa: E402

from tests.server.support import Process, load_docs  # noqa: E402
from tests.server.write_mix import run_mix, summary, titles  # noqa: E402


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--seconds", type=float, default=60.0)
    args = p.parse_args()
    load_before = common.loadavg()
    with tempfile.TemporaryDirectory() as scratch:
        proc = Process(str(Path(scratch) / "mix.db"))
        try:
            load_docs(proc.port)
            clients = run_mix(proc.port, args.clients, args.seconds)
            figures = summary(clients, args.seconds)
            acknowledged = sorted(t for c in clients for t in c.acknowledged)
            stored = sorted(titles(proc.port))
        finally:
            proc.stop(signal.SIGTERM)
    figures["acknowledged"] = len(acknowledged)
    figures["all_acknowledged_stored_once"] = stored == acknowledged
    figures["other_errors"] = [repr(e) for c in clients for e in c.other_errors][:10]
    common.save_result("write_lock", {
        "command": f"{' '.join(['tests/benchmarks/bench_write_lock.py', *sys.argv[1:]])}",
        "load_before": load_before, "load_after": common.loadavg(), **figures})
    sections.write_sections("write-lock")


if __name__ == "__main__":
    main()
