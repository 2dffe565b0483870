"""Where knn over the MySQL protocol spends its time beyond the same statement in-process (issue 37,
docs/benchmarks.md "Over the wire"), and an older server beside the current one.

    TESSERA_BENCH_CORPUS=... nice .venv/bin/python tests/benchmarks/bench_wire_hops.py --every 1 --rounds 500 --old c74decd

The sides take turns call by call: knn in-process (a bound parameter, as bench_query_limit.py runs it)
and knn over the wire on each server (``tessera serve`` in a process of its own, PyMySQL interpolating
the text, as bench_query_limit.py's wire side). Each server runs from this script (``--probe-serve``)
with stamps in its client's thread: ``perf_counter`` (one clock across processes) and the thread's
CPU time at the command's start and end, around the engine call, run_select, and the result's
writing, and when ``epoll_wait`` returned the request. ``--old COMMIT``: a second server whose engine/,
grammar/ and storage/ come from that commit (``git archive`` into a temporary folder put first on
its PYTHONPATH; or a folder already laid out so). ``--mode``: ``first`` (texts no side embedded before), ``warm`` (each side repeats one
text: its vector is cached, no model run) or ``select1``.

Prints the medians and writes tests/benchmarks/results/wire_hops.json.
"""
from __future__ import annotations

import json
import os
import sys
import time

pc, tt = time.perf_counter, time.thread_time


def probe_serve(argv: list[str]) -> int:
    """``--probe-serve DB OUT``: tessera serve DB on a free port, stamping each command into OUT at exit."""
    import atexit
    import selectors
    import threading
    from tesseradb.clients.server import protocol, session
    from tesseradb.clients.shell.main import main
    from tesseradb.sql.statements import query
    db, out = argv
    records: list[dict] = []
    now: dict = {}

    def dump() -> None:
        with open(out, "w") as f:
            json.dump(records, f)

    def stamp(key: str) -> None:
        now[key], now["cpu " + key] = pc(), tt()

    def around(owner, name: str, start: str, end: str, coroutine: bool = False) -> None:
        inner = getattr(owner, name)
        if coroutine:
            async def timed(*args, **kwargs):
                stamp(start)
                try:
                    return await inner(*args, **kwargs)
                finally:
                    stamp(end)
        else:
            def timed(*args, **kwargs):
                stamp(start)
                try:
                    return inner(*args, **kwargs)
                finally:
                    stamp(end)
        setattr(owner, name, timed)

    command = protocol.WireConnection._command

    async def _command(self, data):
        woke = now.get("woke")
        now.clear()
        if woke is not None:
            now["woke"] = woke
        stamp("command")
        try:
            return await command(self, data)
        finally:
            stamp("done")
            records.append(dict(now))
            now.clear()         # a "woke" from here on is the next command's wait (none: it was there already)
    protocol.WireConnection._command = _command
    around(session.EngineSession, "_execute", "execute", "executed")
    around(query, "run_select", "select", "selected")
    around(query, "run_direct", "select", "selected")      # a cached plan (executor._direct)
    around(protocol.WireConnection, "write_outcome", "write", "written", coroutine=True)
    select = selectors.EpollSelector.select

    def watched(self, timeout=None):
        ready = select(self, timeout)
        if ready and threading.current_thread().name == "tessera-client":
            now["woke"] = pc()
        return ready
    selectors.EpollSelector.select = watched
    atexit.register(dump)
    try:        # a plain-TCP client's thread waits in poll() itself (direct_socket.py)
        from tesseradb.clients.server import direct_socket
    except ImportError:         # an older server (--old)
        return main(["serve", db, "--port", "0"])
    wait = direct_socket.DirectSocket._wait

    async def waited(self, *args):
        try:
            return await wait(self, *args)
        finally:
            now["woke"] = pc()
    direct_socket.DirectSocket._wait = waited
    around(direct_socket.DirectSocket, "write", "send", "sent")     # the socket's send (one per result)
    return main(["serve", db, "--port", "0"])


if __name__ == "__main__" and sys.argv[1:2] == ["--probe-serve"]:
    sys.exit(probe_serve(sys.argv[2:]))

import argparse  # noqa: E402
import itertools  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from bench_query_limit import KNN, build, started  # noqa: E402
from common import CACHE, REPO, log  # noqa: E402

# hops of one command in the server: (name, from stamp, to stamp); "cpu " stamps give the thread's CPU
HOPS = [("read and route", "command", "execute"), ("DB-API before run_select", "execute", "select"),
        ("run_select", "select", "selected"), ("DB-API after run_select", "selected", "executed"),
        ("write the result", "write", "written"), ("  of which send()", "send", "sent"),
        ("after writing", "written", "done")]


def old_tree(commit: str, into: Path) -> Path:
    """engine/, grammar/ and storage/ of ``commit`` laid out as the package ``tesseradb`` under ``into``."""
    archive = subprocess.run(["git", "-C", str(REPO), "archive", commit, "engine", "grammar", "storage"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    (into / "engine").rename(into / "tesseradb")
    for part in ("grammar", "storage"):
        (into / part).rename(into / "tesseradb" / part)
    return into


def start(db: Path, out: Path, pythonpath: str | None) -> tuple[subprocess.Popen, int]:
    env = dict(os.environ)
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    return started([sys.executable, __file__, "--probe-serve", str(db), str(out)], env)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--every", type=int, default=1, help="every n-th page of the manual (1: all of it)")
    ap.add_argument("--rounds", type=int, default=400)
    ap.add_argument("--mode", choices=["first", "warm", "select1"], default="first")
    ap.add_argument("--old", metavar="COMMIT", help="a second server from this commit's engine, side by side "
                    "(or a folder holding a package tesseradb laid out as old_tree lays it out)")
    args = ap.parse_args()
    import pymysql
    import pymysql.connections
    import tesseradb
    path = CACHE / ("manual.query-limit.db" if args.every == 1 else f"manual-every{args.every}.db")
    CACHE.mkdir(parents=True, exist_ok=True)
    build(path, args.every)
    texts = itertools.cycle(dict.fromkeys(q.text for q in common.heading_queries(common.pages())))
    sent: dict[str, float] = {}
    write_bytes = pymysql.connections.Connection._write_bytes

    def _write_bytes(self, data):
        write_bytes(self, data)
        sent["at"] = pc()
    pymysql.connections.Connection._write_bytes = _write_bytes
    tmp = Path(tempfile.mkdtemp(prefix="wire-hops-"))
    old = args.old and (args.old if Path(args.old, "tesseradb").is_dir() else str(old_tree(args.old, tmp)))
    servers = {"wire": None} | ({f"wire ({args.old})": old} if args.old else {})
    started = {name: start(path, tmp / f"{n}.json", pp) for n, (name, pp) in enumerate(servers.items())}
    con = tesseradb.connect(str(path))

    def run_in(text: str) -> dict:
        t0, c0 = pc(), tt()
        if args.mode == "select1":
            con.execute("SELECT 1").fetchall()
        else:
            con.execute(KNN.format(p="?"), (text,)).fetchall()
        return {"ms": (pc() - t0) * 1000, "cpu": (tt() - c0) * 1000}

    def run_wire(cur):
        def run(text: str) -> dict:
            t0, c0 = pc(), tt()
            if args.mode == "select1":
                cur.execute("SELECT 1")
            else:
                cur.execute(KNN.format(p="%s"), (text,))
            cur.fetchall()
            t1 = pc()
            return {"ms": (t1 - t0) * 1000, "cpu": (tt() - c0) * 1000, "sent": sent["at"], "back": t1}
        return run
    wires = {name: pymysql.connect(host="127.0.0.1", port=port, user="bench", autocommit=True)
             for name, (_, port) in started.items()}
    sides = {"in-process": run_in} | {name: run_wire(w.cursor()) for name, w in wires.items()}
    fixed = {name: f"{next(texts)} again" for name in sides}
    text = (lambda name, tag: fixed[name]) if args.mode == "warm" else (lambda name, tag: f"{next(texts)} {tag}")
    for name, run in sides.items():
        run(text(name, "warm-up"))
    samples: dict[str, list[dict]] = {name: [] for name in sides}
    load = common.loadavg()
    names = list(sides)
    for r in range(args.rounds):
        order = names[r % len(names):] + names[:r % len(names)]
        for name in (order if r % 2 == 0 else order[::-1]):
            samples[name].append(sides[name](text(name, f"r{r}")))
    result: dict = {"every": args.every, "rounds": args.rounds, "mode": args.mode, "old": args.old,
                    "loadavg_start": load, "loadavg_end": common.loadavg()}
    for w in wires.values():
        w.close()
    for proc, _ in started.values():
        proc.terminate()
        proc.wait(timeout=30)
    con.close()
    med = statistics.median
    base = med(s["ms"] for s in samples["in-process"])
    result["sides"] = {name: {"p50_ms": med(s["ms"] for s in ss), "mean_ms": statistics.mean(s["ms"] for s in ss),
                              "ratio": med(s["ms"] for s in ss) / base, "client_cpu_ms": med(s["cpu"] for s in ss)}
                       for name, ss in samples.items()}
    for n, name in enumerate(servers):
        records = json.loads((tmp / f"{n}.json").read_text())[-args.rounds:]
        pairs = list(zip(samples[name], records))
        hops = {hop: {"cpu_ms": med((r["cpu " + b] - r["cpu " + a]) * 1000 for _, r in pairs if a in r and b in r),
                      "wall_ms": med((r[b] - r[a]) * 1000 for _, r in pairs if a in r and b in r)}
                for hop, a, b in HOPS if any(a in r and b in r for _, r in pairs)}
        hops["client send -> server epoll returns"] = {"wall_ms": med((r["woke"] - s["sent"]) * 1000 for s, r in pairs if r.get("woke"))}
        hops["epoll returns -> command"] = {"wall_ms": med((r["command"] - r["woke"]) * 1000 for _, r in pairs if r.get("woke"))}
        hops["server done -> client has the rows"] = {"wall_ms": med((s["back"] - r["done"]) * 1000 for s, r in pairs)}
        result["sides"][name]["server_hops"] = hops
    for name, side in result["sides"].items():
        line = f"{name}: p50 {side['p50_ms']:.3f} ms (x{side['ratio']:.3f}), mean {side['mean_ms']:.3f}, client CPU {side['client_cpu_ms']:.3f}"
        for hop, v in side.get("server_hops", {}).items():
            line += f"\n    {hop}: " + ", ".join(f"{k} {x:.3f}" for k, x in v.items())
        log(line)
    log(f"load average {load} -> {result['loadavg_end']}")
    name = f"wire_hops_{args.mode}"
    common.save_result(name, result)
    log(f"wrote {common.RESULTS / (name + '.json')}")


if __name__ == "__main__":
    main()
