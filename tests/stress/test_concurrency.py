"""Concurrency: connections in threads and processes on one file, busy timeout, statement timeout,
Connection.interrupt().

WAL mode: a reader never waits for a writer (it reads the last committed state); writers take turns,
each waiting up to its connection's ``timeout`` (busy timeout) for the write lock. Every connection
keeps its own copy of each vector index and catches it up with other connections' commits.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

import pytest

import tesseradb
from tesseradb import errors
from stress_plan import DIMS, MODEL, SCHEMA, WORKER, vec

pytestmark = pytest.mark.stress

WRITER_ROWS = int(os.environ.get("TESSERA_WRITER_ROWS", "300"))
INFINITE = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c"


@pytest.fixture
def path(tmp_path):
    p = str(tmp_path / "conc.db")
    con = tesseradb.connect(p)
    con.execute(SCHEMA[0])
    con.executemany("INSERT INTO t (id, title, n, v) VALUES (?, ?, ?, ?)",
                    [(i, f"seed {i}", i, vec(i, 0)) for i in range(1, 11)])
    con.commit()
    con.close()
    return p


def _knn_ids(con, k: int = 100_000) -> set[int]:
    return {r[0] for r in con.execute(f"SELECT id FROM t WHERE knn(v, {k}, ?)", ([0.0] * DIMS,))}


def _row_ids(con) -> set[int]:
    return {r[0] for r in con.execute("SELECT id FROM t")}


def _in_thread(fn, *args):
    box: dict = {}

    def run():
        try:
            box["result"] = fn(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, box


# -- threads, one connection each ---------------------------------------------------------------
def test_readers_never_block_on_a_writer(path):
    assert tesseradb.threadsafety == 1          # threads share the module, each opens its own connection
    writer = tesseradb.connect(path)
    reader = tesseradb.connect(path, timeout=0)         # would fail at once if it ever had to wait
    writer.executemany("INSERT INTO t (id, title, n, v) VALUES (?, ?, ?, ?)",
                       [(i, "new", i, vec(i, 0)) for i in range(100, 110)])
    assert writer.in_transaction                      # holds the write lock, uncommitted

    def read():
        return (_row_ids(reader), _knn_ids(reader),
                reader.execute("SELECT COUNT(*) FROM t WHERE title = 'new'").fetchone()[0])

    thread, box = _in_thread(read)
    thread.join(120)
    assert "error" not in box, box.get("error")
    rows, found, new = box["result"]
    assert rows == found == set(range(1, 11)) and new == 0      # the last committed state
    writer.commit()
    thread, box = _in_thread(read)
    thread.join(120)
    rows, found, new = box["result"]
    assert rows == found == set(range(1, 11)) | set(range(100, 110)) and new == 10
    writer.close()
    reader.close()


def test_a_writer_waits_for_the_lock_within_its_busy_timeout(path):
    first = tesseradb.connect(path)
    second = tesseradb.connect(path, timeout=60)
    first.execute("INSERT INTO t (id, title, n, v) VALUES (200, 'first', 200, ?)", (vec(200, 0),))

    def write():
        second.execute("INSERT INTO t (id, title, n, v) VALUES (201, 'second', 201, ?)", (vec(201, 0),))
        second.commit()

    thread, box = _in_thread(write)
    time.sleep(0.3)                     # let it start waiting (not a timing assertion)
    assert thread.is_alive() and not box, box
    first.commit()
    thread.join(120)
    assert box == {"result": None}
    assert {200, 201} <= _row_ids(first) and {200, 201} <= _knn_ids(second)
    first.close()
    second.close()


def test_a_writer_gets_busy_after_its_busy_timeout(path):
    first = tesseradb.connect(path)
    impatient = tesseradb.connect(path, timeout=0.2)
    first.execute("INSERT INTO t (id, title, n, v) VALUES (300, 'first', 300, ?)", (vec(300, 0),))
    with pytest.raises(errors.Busy) as info:
        impatient.execute("INSERT INTO t (id, title, n, v) VALUES (301, 'x', 301, ?)", (vec(301, 0),))
    assert isinstance(info.value, tesseradb.OperationalError) and info.value.errno == 1205
    assert not impatient.in_transaction
    assert 300 not in _row_ids(impatient)             # reads still work
    first.commit()
    impatient.execute("INSERT INTO t (id, title, n, v) VALUES (301, 'x', 301, ?)", (vec(301, 0),))
    impatient.commit()
    assert {300, 301} <= _knn_ids(first)
    first.close()
    impatient.close()


def test_index_watermark_does_not_skip_another_connections_commit(path):
    """Regression: A's commit advanced its watermark past B's chunks, so A's knn never saw them."""
    a, b = tesseradb.connect(path), tesseradb.connect(path)
    assert _knn_ids(a) == set(range(1, 11))            # A's index is loaded and current
    b.execute("DELETE FROM t WHERE id <= 5")
    b.executemany("INSERT INTO t (id, title, n, v) VALUES (?, 'b', ?, ?)", [(i, i, vec(i, 0)) for i in range(20, 25)])
    b.commit()
    a.executemany("INSERT INTO t (id, title, n, v) VALUES (?, 'a', ?, ?)", [(i, i, vec(i, 0)) for i in range(30, 35)])
    a.commit()
    assert _knn_ids(a) == _row_ids(a) == set(range(6, 11)) | set(range(20, 25)) | set(range(30, 35))
    assert a.execute("CHECK TABLE t").fetchall()[-1][2:] == ("status", "OK")
    a.close()
    b.close()


def test_threads_with_their_own_connections_stay_consistent(path):
    threads_n, rounds = 4, 25
    report: dict[int, list[str]] = {}

    def work(n: int) -> None:
        con = tesseradb.connect(path, timeout=120)
        problems = report.setdefault(n, [])
        mine: list[int] = []
        for r in range(rounds):
            base = 10_000 * (n + 1) + 10 * r
            rows = [(base + j, f"t{n}", base + j, vec(base + j, 0)) for j in range(3)]
            con.executemany("INSERT INTO t (id, title, n, v) VALUES (?, ?, ?, ?)", rows)
            mine += [row[0] for row in rows]
            if r % 3 == 2:
                con.execute("DELETE FROM t WHERE id = ?", (mine.pop(0),))
            if r % 4 == 1:
                con.execute("UPDATE t SET v = ? WHERE id = ?", (vec(mine[-1], r), mine[-1]))
            con.commit()
            # Other threads commit meanwhile: rows present before and after must be found, and
            # nothing may be found that was in neither.
            before = _row_ids(con)
            found = _knn_ids(con)
            after = _row_ids(con)
            if not (before & after) <= found or not found <= (before | after):
                problems.append(f"round {r}: ghosts {sorted(found - before - after)[:5]}, "
                                f"missing {sorted((before & after) - found)[:5]}")
            own = {row[0] for row in con.execute("SELECT id FROM t WHERE MATCH(?)", (f"t{n}",))}
            if own != set(mine):            # the full-text index holds exactly this thread's live rows
                problems.append(f"round {r}: MATCH found {sorted(own ^ set(mine))[:5]} wrongly")
        con.close()

    workers = [threading.Thread(target=work, args=(n,)) for n in range(threads_n)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(600)
    assert all(not p for p in report.values()), report
    con = tesseradb.connect(path)
    assert _knn_ids(con) == _row_ids(con)
    assert len(_row_ids(con)) == 10 + threads_n * (rounds * 3 - rounds // 3)
    assert con.execute("CHECK TABLE t").fetchall()[-1][2:] == ("status", "OK")
    con.close()


# -- processes ----------------------------------------------------------------------------------
def _spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, WORKER, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _wait_files(procs, files, limit: float = 300.0) -> None:
    end = time.monotonic() + limit
    while not all(os.path.exists(f) for f in files):
        for p in procs:
            if p.poll() is not None and p.returncode != 0:
                raise AssertionError(p.stderr.read().decode()[-3000:])
        assert time.monotonic() < end, f"children never wrote {files}"
        time.sleep(0.01)


def test_two_writer_processes_and_a_reader_on_one_file(path, tmp_path):
    d = str(tmp_path)
    go, stop = f"{d}/go", f"{d}/stop"
    writers = []
    for n in range(2):
        other = f"{d}/done{1 - n}"
        writers.append(_spawn("writer", "--db", path, "--ready", f"{d}/ready{n}", "--go", go, "--done", f"{d}/done{n}",
                              "--out", f"{d}/out{n}", "--base", str(100_000 * (n + 1)), "--n", str(WRITER_ROWS),
                              "--batch", "10", "--wait", other))
    reader = _spawn("reader", "--db", path, "--ready", f"{d}/ready_r", "--stop", stop, "--out", f"{d}/out_r")
    _wait_files(writers + [reader], [f"{d}/ready0", f"{d}/ready1", f"{d}/ready_r"])
    start = time.perf_counter()
    open(go, "w").close()
    for w in writers:
        assert w.wait(600) == 0, w.stderr.read().decode()[-3000:]
    wall = time.perf_counter() - start
    open(stop, "w").close()
    assert reader.wait(600) == 0, reader.stderr.read().decode()[-3000:]
    for p in writers + [reader]:
        p.stderr.close()
    outs = [json.load(open(f"{d}/out{n}")) for n in range(2)]
    read = json.load(open(f"{d}/out_r"))
    for out in outs:
        assert out["knn_missing"] == [] and out["knn_ghosts"] == [], out     # caught up with the other
        assert out["rows"] == 10 + 2 * WRITER_ROWS
    assert read["errors"] == [] and read["queries"] > 0, read
    con = tesseradb.connect(path)
    assert _knn_ids(con) == _row_ids(con)
    assert con.execute("CHECK TABLE t").fetchall()[-1][2:] == ("status", "OK")
    con.close()
    total, commits = 2 * WRITER_ROWS, 2 * WRITER_ROWS // 10
    span = max(o["ended"] for o in outs) - min(o["began"] for o in outs)
    print(f"\ntwo writer processes: {total} rows in {commits} commits of 10 in {span:.2f}s: "
          f"{total / span:.0f} rows/s, {commits / span:.0f} commits/s (each writer's loop: "
          f"{outs[0]['seconds']:.2f}s, {outs[1]['seconds']:.2f}s; {wall:.2f}s with start-up and checks); "
          f"a reader process ran {read['queries']} queries meanwhile, none failed")


def test_a_writer_waits_for_another_process(path, tmp_path):
    ready, release = str(tmp_path / "held"), str(tmp_path / "release")
    holder = _spawn("hold", "--db", path, "--ready", ready, "--release", release, "--id", "500")
    _wait_files([holder], [ready])
    impatient = tesseradb.connect(path, timeout=0.2)
    with pytest.raises(errors.Busy):
        impatient.execute("INSERT INTO t (id, title, n, v) VALUES (501, 'x', 501, ?)", (vec(501, 0),))
    patient = tesseradb.connect(path, timeout=120)

    def write():
        patient.execute("INSERT INTO t (id, title, n, v) VALUES (502, 'x', 502, ?)", (vec(502, 0),))
        patient.commit()

    thread, box = _in_thread(write)
    time.sleep(0.3)
    open(release, "w").close()
    thread.join(300)
    assert box == {"result": None}
    assert holder.wait(300) == 0, holder.stderr.read().decode()
    holder.stderr.close()
    assert {500, 502} <= _knn_ids(patient) and 501 not in _row_ids(patient)
    impatient.close()
    patient.close()


# -- statement timeout and interrupt() ------------------------------------------------------------
def _model_table(con) -> None:
    con.execute(f"CREATE TABLE IF NOT EXISTS big (body text, c float_vector_array knn_type='hnsw' "
                f"hnsw_similarity='cosine' model_name='{MODEL}' from='body' chunk_strategy='recursive' "
                "max_tokens='64')")
    con.commit()


# Every sentence differs: chunk reuse embeds each distinct chunk text once, so a repeated sentence
# would leave only a few chunks to embed and finish inside the time limit.
LONG_TEXT = " ".join(f"Certificate {i} rotates every {i % 97} days, and operator {i * 7} renews it in time."
                     for i in range(4000))


def test_statement_timeout_stops_queries_writes_and_embedding(path):
    con = tesseradb.connect(path, statement_timeout=0.5)
    _model_table(con)
    with pytest.raises(errors.Interrupted) as info:
        con.execute(INFINITE).fetchall()
    assert info.value.errno == 1317 and info.value.sqlstate == "70100"
    assert con.execute("SELECT COUNT(*) FROM t").fetchone() == (10,)          # usable afterwards
    with pytest.raises(errors.Interrupted):
        con.execute("INSERT INTO t (title, n) WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) "
                    "SELECT 'bulk', x FROM c")
    with pytest.raises(errors.Interrupted):                                 # ~4000 chunks to embed
        con.execute("INSERT INTO big (id, body) VALUES (1, ?)", (LONG_TEXT,))
    con.commit()
    assert con.execute("SELECT COUNT(*) FROM t").fetchone() == (10,)
    assert con.execute("SELECT COUNT(*) FROM big").fetchone() == (0,)
    con.execute("INSERT INTO big (id, body) VALUES (2, 'short text')")     # the limit is per statement
    con.commit()
    assert [r[0] for r in con.execute("SELECT id FROM big WHERE knn(c, 5, 'text')")] == [2]
    for table in ("t", "big"):
        assert con.execute(f"CHECK TABLE {table}").fetchall()[-1][2:] == ("status", "OK")
    con.close()


def _interrupt_until_done(con, thread) -> None:
    end = time.monotonic() + 300              # a hang guard, not a timing assertion
    while thread.is_alive() and time.monotonic() < end:
        con.interrupt()
        time.sleep(0.01)
    thread.join(1)
    assert not thread.is_alive(), "interrupt() did not stop the statement"


def test_connection_interrupt_from_another_thread(path):
    con = tesseradb.connect(path)
    _model_table(con)
    con.interrupt()                                  # nothing running: no effect on the next statement
    assert con.execute("SELECT COUNT(*) FROM t").fetchone() == (10,)
    thread, box = _in_thread(lambda: con.execute(INFINITE).fetchall())
    _interrupt_until_done(con, thread)
    assert isinstance(box.get("error"), errors.Interrupted), box
    thread, box = _in_thread(lambda: con.execute("INSERT INTO big (id, body) VALUES (1, ?)", (LONG_TEXT,)))
    _interrupt_until_done(con, thread)
    assert isinstance(box.get("error"), errors.Interrupted), box
    con.commit()
    assert con.execute("SELECT COUNT(*) FROM big").fetchone() == (0,)
    assert con.execute("SELECT COUNT(*) FROM t").fetchone() == (10,)
    con.close()
