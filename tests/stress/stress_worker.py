"""Child processes of the stress tests (run as a script, killed or awaited by the tests).

  load      write the batches of stress_plan from --start on, acknowledging each COMMIT in --ack,
            until killed with SIGKILL
  diskfull  write big rows under a file-size limit (RLIMIT_FSIZE) until the disk is "full"
  writer    insert --n rows in transactions of --batch, then wait for the others and check that its
            knn sees every row (the index cache catches up with other processes' commits)
  reader    run SELECTs and knn searches until --stop exists; count them and any errors
  hold      open a write transaction, say so, and hold it until --release exists
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import tesseradb  # noqa: E402
from stress_plan import DIMS, MODEL, batch_ops, vec  # noqa: E402


def wait_for(path: str, limit: float = 300.0) -> None:
    end = time.monotonic() + limit
    while not os.path.exists(path):
        if time.monotonic() > end:
            raise SystemExit(f"gave up waiting for {path}")
        time.sleep(0.005)


def load(args) -> None:
    con = tesseradb.connect(args.db)
    cur = con.cursor()
    ack = open(args.ack, "a", buffering=1)
    if args.model:
        from tesseradb import embed
        embed.get_model(MODEL).embed(["warm up"])
    ack.write("ready\n")
    ack.flush()
    g = args.start
    while True:
        for kind, sql, params in batch_ops(g, bool(args.model)):
            if kind == "many":
                cur.executemany(sql, params)
            else:
                cur.execute(sql, params)
        con.commit()
        ack.write(f"{g}\n")
        ack.flush()
        if g % 3 == 1:
            cur.execute("SELECT id FROM t WHERE knn(v, 5, ?)", (vec(g, 0),)).fetchall()
            cur.execute("SELECT id FROM t WHERE knn(a, 5, (1, 1, 1, 1))").fetchall()
        if g % 4 == 2:
            con.db.save_indexes()       # write the index files now and then, so kills land in saves
        g += 1


def diskfull(args) -> None:
    out = open(args.ack, "a", buffering=1)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # over the limit, write() fails with EFBIG
    con = tesseradb.connect(args.db)
    cur = con.cursor()
    limit = args.limit
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    out.write("ready\n")
    next_id = args.start
    failure = None
    while failure is None and next_id < args.start + 100_000:
        ids = list(range(next_id, next_id + 5))
        try:
            cur.executemany("INSERT INTO t (id, title, n, v) VALUES (?, ?, ?, ?)",
                            [(i, f"row {i} " + "x" * args.text, i, vec(i, 0)) for i in ids])
            con.commit()
        except tesseradb.Error as exc:
            failure = exc
            break
        except BaseException as exc:  # noqa: BLE001 - reported to the test, which fails on it
            out.write(json.dumps({"escaped": f"{type(exc).__name__}: {exc}"}) + "\n")
            raise
        out.write(json.dumps({"committed": ids}) + "\n")
        next_id += 5
    report = {"error": type(failure).__name__ if failure else None, "errno": getattr(failure, "errno", None),
              "msg": str(failure) if failure else None, "is_engine_error": isinstance(failure, tesseradb.Error)}
    try:
        con.rollback()
        report["rollback"] = "ok"
    except tesseradb.Error as exc:
        report["rollback"] = f"{type(exc).__name__}: {exc}"
    try:
        report["count_after"] = cur.execute("SELECT COUNT(*) FROM t").fetchone()[0]
        report["knn_after"] = len(cur.execute("SELECT id FROM t WHERE knn(v, 3, ?)", (vec(1, 0),)).fetchall())
    except tesseradb.Error as exc:
        report["read_after"] = f"{type(exc).__name__}: {exc}"
    # Still full while closing: the index file and the WAL checkpoint cannot be written either.
    resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))
    try:
        con.close()
        report["close"] = "ok"
    except tesseradb.Error as exc:
        report["close"] = f"{type(exc).__name__}: {exc}"
    out.write(json.dumps({"report": report}) + "\n")


def writer(args) -> None:
    con = tesseradb.connect(args.db, timeout=120)
    cur = con.cursor()
    open(args.ready, "w").close()
    wait_for(args.go)
    start, began = time.perf_counter(), time.time()
    ids = []
    for b in range(0, args.n, args.batch):
        rows = [(args.base + i, f"w {args.base + i}", args.base + i, vec(args.base + i, 0))
                for i in range(b, min(b + args.batch, args.n))]
        cur.executemany("INSERT INTO t (id, title, n, v) VALUES (?, ?, ?, ?)", rows)
        con.commit()
        ids += [r[0] for r in rows]
        if b % (args.batch * 10) == 0:     # search now and then: the index cache is live during writes
            cur.execute("SELECT id FROM t WHERE knn(v, 3, ?)", (vec(args.base, 0),)).fetchall()
    seconds, ended = time.perf_counter() - start, time.time()
    open(args.done, "w").close()
    for other in args.wait:
        wait_for(other)
    total = cur.execute("SELECT COUNT(*) FROM t").fetchone()[0]
    seen = [r[0] for r in cur.execute(f"SELECT id FROM t WHERE knn(v, {total + 10}, ?)", ([0.0] * DIMS,))]
    rows = [r[0] for r in cur.execute("SELECT id FROM t")]
    con.close()
    with open(args.out, "w") as f:
        json.dump({"ids": ids, "seconds": seconds, "began": began, "ended": ended, "rows": len(rows),
                   "knn_missing": sorted(set(rows) - set(seen)), "knn_ghosts": sorted(set(seen) - set(rows))}, f)


def reader(args) -> None:
    con = tesseradb.connect(args.db, timeout=args.busy)
    cur = con.cursor()
    open(args.ready, "w").close()
    queries, errors = 0, []
    while not os.path.exists(args.stop):
        try:
            cur.execute("SELECT COUNT(*) FROM t").fetchone()
            cur.execute("SELECT id, knn_dist() FROM t WHERE knn(v, 5, ?)", (vec(queries, 0),)).fetchall()
            queries += 2
        except tesseradb.Error as exc:
            errors.append(f"{type(exc).__name__}: {exc}")
    con.close()
    with open(args.out, "w") as f:
        json.dump({"queries": queries, "errors": errors}, f)


def hold(args) -> None:
    con = tesseradb.connect(args.db)
    con.execute("INSERT INTO t (id, title, n, v) VALUES (?, 'held', 0, ?)", (args.id, vec(args.id, 0)))
    open(args.ready, "w").close()
    wait_for(args.release)
    con.commit()
    con.close()


def main() -> None:
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="mode", required=True)
    s = sub.add_parser("load")
    s.add_argument("--db", required=True)
    s.add_argument("--start", type=int, required=True)
    s.add_argument("--model", type=int, default=0)
    s.add_argument("--ack", required=True)
    s = sub.add_parser("diskfull")
    s.add_argument("--db", required=True)
    s.add_argument("--start", type=int, required=True)
    s.add_argument("--limit", type=int, required=True)
    s.add_argument("--text", type=int, default=20_000)
    s.add_argument("--ack", required=True)
    s = sub.add_parser("writer")
    for name in ("--db", "--ready", "--go", "--done", "--out"):
        s.add_argument(name, required=True)
    s.add_argument("--base", type=int, required=True)
    s.add_argument("--n", type=int, required=True)
    s.add_argument("--batch", type=int, default=10)
    s.add_argument("--wait", nargs="*", default=[])
    s = sub.add_parser("reader")
    for name in ("--db", "--ready", "--stop", "--out"):
        s.add_argument(name, required=True)
    s.add_argument("--busy", type=float, default=5.0)
    s = sub.add_parser("hold")
    for name in ("--db", "--ready", "--release"):
        s.add_argument(name, required=True)
    s.add_argument("--id", type=int, required=True)
    args = p.parse_args()
    {"load": load, "diskfull": diskfull, "writer": writer, "reader": reader, "hold": hold}[args.mode](args)


if __name__ == "__main__":
    main()
