"""The wire server's boundary under attack (issue 21): SIGKILL rounds, many clients, pathological input.

    .venv/bin/python tests/benchmarks/bench_boundary.py                       # defaults below
    .venv/bin/python tests/benchmarks/bench_boundary.py --rounds 10 --clients 32 --seconds 60

- kill: ``--rounds`` times, a `tessera serve` process takes autocommit INSERTs from 4 writer
  processes (PyMySQL); it is SIGKILLed at a random moment, restarted, and every id a writer was told
  was committed (acknowledged) must be present; rows present but never acknowledged (the kill hit
  between COMMIT and its OK packet) are counted too.
- load: ``--clients`` client processes for ``--seconds`` seconds, each a closed loop of a random
  statement kind (point SELECT, INSERT, UPDATE, knn with a vector literal, SHOW PROCESSLIST); p50 and
  p99 per kind, errors per kind (a 1205 lock wait counts as an error).
- refuse: the time, over the wire, from sending each pathological statement (100,000-term OR chain,
  200,000-value IN list, 5,000-deep nesting, 100,000-term + chain) to its error.

Writes tests/benchmarks/results/boundary.json and prints it. No model runs (the statement kinds use
vector literals), so the figures are about the server, not embedding.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RESULTS = REPO / "tests" / "benchmarks" / "results" / "boundary.json"
SERVE = [sys.executable, "-m", "tesseradb.clients.shell.main", "serve"]
SCHEMA = "CREATE TABLE t (k int, v float_vector knn_type='hnsw' knn_dims='4' hnsw_similarity='l2')"


def _start(db: str, *args: str) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen(SERVE + [db, "--port", "0", *args], stderr=subprocess.PIPE, text=True)
    line = proc.stderr.readline()
    port = int(line.split(" on ")[1].split(" ")[0].rsplit(":", 1)[1])
    return proc, port


def _connect(port: int):
    import pymysql
    return pymysql.connect(host="127.0.0.1", port=port, user="bench", autocommit=True,
                           connect_timeout=30, read_timeout=120)


# -- SIGKILL rounds ---------------------------------------------------------------------------------
def _writer(port: int, first_id: int, out: str) -> None:
    acked = []
    try:
        con = _connect(port)
        cur = con.cursor()
        i = first_id
        while True:
            cur.execute("INSERT INTO t (id, k, v) VALUES (%s, %s, (1, 2, 3, 4))", (i, i))
            acked.append(i)
            i += 1
    except Exception:  # noqa: BLE001 - the kill ends it
        pass
    finally:
        Path(out).write_text(json.dumps(acked))


def kill_rounds(rounds: int, folder: str) -> dict:
    db = os.path.join(folder, "b.db")
    proc, port = _start(db)
    with _connect(port) as c, c.cursor() as cur:
        cur.execute(SCHEMA)
    acked_total, next_id = set(), 1
    for n in range(rounds):
        outs = [os.path.join(folder, f"acked-{n}-{w}.json") for w in range(4)]
        writers = [mp.Process(target=_writer, args=(port, next_id + w * 1_000_000, out))
                   for w, out in enumerate(outs)]
        for w in writers:
            w.start()
        time.sleep(random.uniform(0.5, 2.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        for w in writers:
            w.join(60)
        for out in outs:
            acked_total.update(json.loads(Path(out).read_text()))
        next_id += 10_000_000
        proc, port = _start(db)
    with _connect(port) as c, c.cursor() as cur:
        cur.execute("SELECT id FROM t")
        present = {r[0] for r in cur.fetchall()}
        cur.execute("CHECK TABLE t")
        check = cur.fetchall()[-1][3]
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)
    return {"rounds": rounds, "acknowledged": len(acked_total), "present": len(present),
            "acknowledged_missing": len(acked_total - present), "present_not_acknowledged": len(present - acked_total),
            "check_table": check}


# -- many clients -----------------------------------------------------------------------------------
KINDS = {
    "point_select": ("SELECT id, k FROM t WHERE id = %s", lambda r: (r.randint(1, 2000),)),
    "insert": ("INSERT INTO t (k, v) VALUES (%s, (1, 2, 3, 4))", lambda r: (r.randint(0, 9),)),
    "update": ("UPDATE t SET k = %s WHERE id = %s", lambda r: (r.randint(0, 9), r.randint(1, 2000))),
    "knn": ("SELECT id, knn_dist() FROM t WHERE knn(v, 5, (%s, 1, 1, 1))", lambda r: (r.random(),)),
    "processlist": ("SHOW PROCESSLIST", lambda r: ()),
}


def _client(port: int, seconds: float, seed: int, out: str) -> None:
    r = random.Random(seed)
    lat: dict[str, list[float]] = {k: [] for k in KINDS}
    errs: dict[str, int] = {k: 0 for k in KINDS}
    codes: dict[str, int] = {}
    con = _connect(port)
    cur = con.cursor()
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        kind = r.choice(list(KINDS))
        sql, args = KINDS[kind]
        t = time.perf_counter()
        try:
            cur.execute(sql, args(r))
            cur.fetchall()
            lat[kind].append(time.perf_counter() - t)
        except Exception as exc:  # noqa: BLE001 - counted, by error number
            errs[kind] += 1
            code = str(exc.args[0]) if exc.args else type(exc).__name__
            codes[code] = codes.get(code, 0) + 1
    con.close()
    Path(out).write_text(json.dumps({"lat": lat, "errs": errs, "codes": codes}))


def load(clients: int, seconds: float, folder: str) -> dict:
    db = os.path.join(folder, "load.db")
    proc, port = _start(db)
    with _connect(port) as c, c.cursor() as cur:
        cur.execute(SCHEMA)
        cur.executemany("INSERT INTO t (k, v) VALUES (%s, (1, 2, 3, 4))", [(i % 10,) for i in range(2000)])
    outs = [os.path.join(folder, f"client-{i}.json") for i in range(clients)]
    procs = [mp.Process(target=_client, args=(port, seconds, i, out)) for i, out in enumerate(outs)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(seconds + 300)
    proc.send_signal(signal.SIGTERM)
    proc.wait(120)
    merged = {k: [] for k in KINDS}
    errors = {k: 0 for k in KINDS}
    codes: dict[str, int] = {}
    for out in outs:
        data = json.loads(Path(out).read_text())
        for code, n in data.get("codes", {}).items():
            codes[code] = codes.get(code, 0) + n
        for k in KINDS:
            merged[k] += data["lat"][k]
            errors[k] += data["errs"][k]
    report = {}
    for k, values in merged.items():
        values.sort()
        pick = (lambda q: round(values[min(int(q * len(values)), len(values) - 1)] * 1000, 1)) if values else (lambda q: None)
        report[k] = {"count": len(values), "errors": errors[k], "p50_ms": pick(0.5), "p99_ms": pick(0.99)}
    return {"clients": clients, "seconds": seconds, "kinds": report, "error_codes": codes}


# -- pathological input -----------------------------------------------------------------------------
PATHOLOGICAL = {
    "or_chain_100k": "SELECT 1 WHERE " + " OR ".join(["1 = 1"] * 100_000),
    "in_list_200k": "SELECT 1 WHERE 1 IN (" + ",".join(["1"] * 200_000) + ")",
    "nesting_5000": "SELECT " + "(" * 5000 + "1" + ")" * 5000,
    "plus_chain_100k": "SELECT " + "+".join(["1"] * 100_000),
}


def refuse(folder: str) -> dict:
    proc, port = _start(os.path.join(folder, "p.db"))
    out = {}
    with _connect(port) as c, c.cursor() as cur:
        for name, sql in PATHOLOGICAL.items():
            t = time.perf_counter()
            try:
                cur.execute(sql)
                result = "ran"
            except Exception as exc:  # noqa: BLE001 - the refusal is what is timed
                result = str(exc)[:80]
            out[name] = {"seconds": round(time.perf_counter() - t, 3), "bytes": len(sql), "result": result}
    proc.send_signal(signal.SIGTERM)
    proc.wait(60)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--clients", type=int, default=32)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--only", default="refuse,kill,load")
    args = ap.parse_args()
    results = {"load_average_start": os.getloadavg()}
    with tempfile.TemporaryDirectory() as folder:
        parts = args.only.split(",")
        if "refuse" in parts:
            results["refuse"] = refuse(folder)
        if "kill" in parts:
            results["kill"] = kill_rounds(args.rounds, folder)
        if "load" in parts:
            results["load"] = load(args.clients, args.seconds, folder)
    results["load_average_end"] = os.getloadavg()
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
