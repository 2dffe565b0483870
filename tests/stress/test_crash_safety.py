"""Crash safety: SIGKILL while loading, a torn/stale/corrupt saved index, a full disk during COMMIT.

The crash-kill rounds run a child (stress_worker.py load) that writes the batches of stress_plan and
acknowledges each COMMIT; the test kills it with SIGKILL at a random moment, reopens the database and
checks it against the prediction: every acknowledged batch is there, the batch in flight is there
entirely or not at all, every vector and chunk row matches, CHECK TABLE says OK (full-text indexes
included), MATCH and hybrid_match find exactly the committed rows, and knn returns
exactly the rows (no ghost, no missing document). Each round continues on the same file.

TESSERA_CRASH_ROUNDS sets the number of rounds (default 40; every third child also embeds with the
real model). Every other round is killed only after its first 1-4 acknowledged commits, so the rounds
commit work however loaded the machine is.
"""
from __future__ import annotations

import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import tesseradb
from stress_plan import BATCH, DIMS, SCHEMA, WORKER, Expected, vec
from tesseradb.storage.vectors import VectorIndex

pytestmark = pytest.mark.stress

ROUNDS = int(os.environ.get("TESSERA_CRASH_ROUNDS", "40"))


def _spawn(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, WORKER, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _lines(path: str) -> list[str]:
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [line.strip() for line in f if line.endswith("\n")]


def _wait_line(proc: subprocess.Popen, path: str, line: str, limit: float = 300.0) -> None:
    end = time.monotonic() + limit
    while line not in _lines(path):
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"worker exited with {proc.returncode}: {err.decode()[-3000:]}")
        assert time.monotonic() < end, f"worker never wrote {line!r}"
        time.sleep(0.01)


def _wait_acks(proc: subprocess.Popen, path: str, count: int, limit: float = 300.0) -> None:
    """Wait until the worker has acknowledged ``count`` commits (however loaded the machine is)."""
    end = time.monotonic() + limit
    while sum(1 for x in _lines(path) if x != "ready") < count:
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"worker exited with {proc.returncode}: {err.decode()[-3000:]}")
        assert time.monotonic() < end, f"worker never acknowledged {count} commits"
        time.sleep(0.005)


def _normalized(vectors: list[list[float]]) -> np.ndarray:
    if not vectors:
        return np.zeros((0, 0))
    x = np.asarray(vectors, np.float64)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def _status(cur, table: str) -> list[tuple]:
    rows = cur.execute(f"CHECK TABLE {table}").fetchall()
    return [] if rows[-1][2:] == ("status", "OK") else rows


def verify(path: str, exp: Expected) -> list[str]:
    """Everything that differs between the database at ``path`` and ``exp``."""
    problems: list[str] = []
    con = tesseradb.connect(path)
    try:
        cur = con.cursor()
        rows = {r[0]: (r[1], r[2]) for r in cur.execute("SELECT id, v, a FROM t")}
        if set(rows) != set(exp.t):
            problems.append(f"t: missing {sorted(set(exp.t) - set(rows))[:10]}, "
                            f"unexpected {sorted(set(rows) - set(exp.t))[:10]}")
        for doc_id, (v, a) in exp.t.items():
            if doc_id not in rows:
                continue
            got_v, got_a = rows[doc_id]
            if got_v != v:
                problems.append(f"t.v of {doc_id}: {got_v} != {v}")
            if len(got_a) != len(a) or not np.allclose(_normalized(got_a), _normalized(a), atol=1e-6):
                problems.append(f"t.a of {doc_id}: {got_a} != {a} (normalized)")
        m_rows = {r[0] for r in cur.execute("SELECT id FROM m")}
        if m_rows != exp.m:
            problems.append(f"m: missing {sorted(exp.m - m_rows)}, unexpected {sorted(m_rows - exp.m)}")
        for table in ("t", "m"):
            bad = _status(cur, table)
            if bad:
                problems.append(f"CHECK TABLE {table}: {bad}")
        k = len(rows) + 5
        found = {r[0] for r in cur.execute(f"SELECT id FROM t WHERE knn(v, {k}, ?)", ([0.0] * DIMS,))}
        if found != set(rows):
            problems.append(f"knn(v): ghosts {sorted(found - set(rows))[:10]}, missing {sorted(set(rows) - found)[:10]}")
        with_a = {i for i, (_, a) in rows.items() if a}
        found = {r[0] for r in cur.execute(f"SELECT id FROM t WHERE knn(a, {k}, (1, 1, 1, 1))")}
        if found != with_a:
            problems.append(f"knn(a): ghosts {sorted(found - with_a)[:10]}, missing {sorted(with_a - found)[:10]}")
        found = {r[0] for r in cur.execute(f"SELECT id FROM m WHERE knn(c, {len(m_rows) + 5}, 'certificates')")}
        if found != m_rows:
            problems.append(f"knn(c): ghosts {sorted(found - m_rows)}, missing {sorted(m_rows - found)}")
        found = {r[0] for r in cur.execute("SELECT id FROM m WHERE MATCH('document')")}     # every m text has it
        if found != m_rows:
            problems.append(f"MATCH: ghosts {sorted(found - m_rows)}, missing {sorted(m_rows - found)}")
        hits = cur.execute(f"SELECT id, weight() FROM m WHERE hybrid_match('document', c) LIMIT {len(m_rows) + 5}")
        found = {doc for doc, weight in hits if weight is not None}       # found by the chunk-level text side
        if found != m_rows:
            problems.append(f"hybrid_match: ghosts {sorted(found - m_rows)}, missing {sorted(m_rows - found)}")
        ids = sorted(rows)
        for doc_id in ids[:: max(1, len(ids) // 5)][:5]:
            top = cur.execute("SELECT id, knn_dist() FROM t WHERE knn(v, 1, ?)", (rows[doc_id][0],)).fetchall()
            if top != [(doc_id, 0.0)]:
                problems.append(f"knn(v) with the vector of {doc_id} gave {top}")
    finally:
        con.close()
    return problems


def _create(path: str) -> None:
    con = tesseradb.connect(path)
    for sql in SCHEMA:
        con.execute(sql)
    con.commit()
    con.close()


def test_sigkill_rounds_lose_nothing_committed(tmp_path):
    path = str(tmp_path / "crash.db")
    _create(path)
    exp = Expected()
    rng = random.Random(20240607)
    g = 0
    stats = {"rounds": 0, "acked": 0, "in_flight_committed": 0, "in_flight_lost": 0, "model_rounds": 0}
    for round_no in range(ROUNDS):
        model = round_no % 3 == 0
        ack = str(tmp_path / f"ack{round_no}")
        proc = _spawn("load", "--db", path, "--start", str(g), "--model", str(int(model)), "--ack", ack)
        try:
            _wait_line(proc, ack, "ready")
            if round_no % 2:     # every other round is killed mid-stream, after its first commits
                _wait_acks(proc, ack, rng.randint(1, 4))
            delay = rng.choice([0.0, 0.02, rng.uniform(0.05, 0.4), rng.uniform(0.3, 1.5)])
            time.sleep(delay)
            assert proc.poll() is None, proc.communicate()[1].decode()[-3000:]
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            proc.stdout.close()
            proc.stderr.close()
        acked = [int(x) for x in _lines(ack) if x != "ready"]
        assert acked == list(range(g, g + len(acked)))
        for b in acked:
            exp.apply(b, model)
        in_flight = g + len(acked)
        # The batch in flight committed entirely or not at all.
        con = tesseradb.connect(path)
        present = {r[0] for r in con.execute(
            f"SELECT id FROM t WHERE id BETWEEN {in_flight * BATCH + 1} AND {in_flight * BATCH + BATCH}")}
        con.close()
        want = set(exp.batch_rows(in_flight))
        assert present in (set(), want), f"round {round_no}: batch {in_flight} is torn: {sorted(present)}"
        if present:
            exp.apply(in_flight, model)
            stats["in_flight_committed"] += 1
        else:
            stats["in_flight_lost"] += 1
        problems = verify(path, exp)
        assert not problems, f"round {round_no} (killed after {delay:.2f}s, {len(acked)} commits): {problems}"
        g = in_flight + 1
        stats["rounds"] += 1
        stats["acked"] += len(acked)
        stats["model_rounds"] += model
    stats["rows"] = len(exp.t)
    stats["model_rows"] = len(exp.m)
    stats["leftover_unfinished_index_parts"] = _unfinished_parts(path)
    print("\ncrash-kill rounds:", json.dumps(stats))
    assert stats["acked"] > ROUNDS    # the rounds did commit work before being killed


# -- the saved index: a cache inside the database, checked and rebuilt ------------------------------
def _build(path: str, n: int = 300, version: int = 0) -> None:
    con = tesseradb.connect(path)
    for sql in SCHEMA[:1]:
        con.execute(sql)
    con.executemany("INSERT INTO t (id, title, n, v, a) VALUES (?, ?, ?, ?, ?)",
                    [(i, f"doc {i}", i, vec(i, version), [[1.0, i % 7 + 1.0, 2.0, 3.0]]) for i in range(1, n + 1)])
    con.commit()
    con.execute("SELECT id FROM t WHERE knn(v, 1, ?)", ([0.0] * DIMS,)).fetchall()   # load the index
    con.execute("SELECT id FROM t WHERE knn(a, 1, (1, 1, 1, 1))").fetchall()
    con.close()                                                                      # saves them inside


def _index_name(path: str, column: str) -> str:
    con = tesseradb.connect(path)
    chunks = con.db.tables["t"].layout(column).chunks
    con.close()
    return chunks


def _saved_len(path: str, column: str = "v") -> int | None:
    con = tesseradb.connect(path)
    try:
        loaded = con.db.column_index(con.db.table("t"), column).read_saved()
        return None if loaded is None else len(loaded[0])
    finally:
        con.close()


def _unfinished_parts(path: str) -> int:
    from tesseradb.storage import index_cache
    con = tesseradb.connect(path)
    try:
        if not index_cache.exists(con.db.store):
            return 0
        return con.db.store.one(f"SELECT COUNT(*) FROM {index_cache.TABLE} c WHERE NOT EXISTS "
                                f"(SELECT 1 FROM {index_cache.HEAD} h WHERE h.name = c.name AND h.gen = c.gen)")[0]
    finally:
        con.close()


def _knn_matches_rows(path: str) -> None:
    con = tesseradb.connect(path)
    rows = {r[0]: r[1] for r in con.execute("SELECT id, v FROM t")}
    found = [r[0] for r in con.execute(f"SELECT id FROM t WHERE knn(v, {len(rows) + 5}, ?)", ([0.0] * DIMS,))]
    assert sorted(found) == sorted(rows)
    for doc_id in list(rows)[::37]:
        assert con.execute("SELECT id, knn_dist() FROM t WHERE knn(v, 1, ?)", (rows[doc_id],)).fetchall() == \
            [(doc_id, 0.0)]
    assert con.execute("CHECK TABLE t").fetchall()[-1][2:] == ("status", "OK")
    con.close()


def _damage(data: bytes, how: str) -> bytes:
    data = bytearray(data)
    if how == "truncated":
        data = data[: len(data) // 2]
    elif how == "torn":                   # a block that never reached the disk
        mid = len(data) // 2 & ~4095
        data[mid:mid + 4096] = bytes(min(4096, len(data) - mid))
    elif how == "bitflip":
        data[len(data) * 2 // 3] ^= 0x10
    elif how == "garbage":
        data = bytearray(random.Random(5).randbytes(len(data)))
    elif how == "empty":
        data = bytearray()
    elif how == "header":
        data[:8] = b"NOTMAGIC"
    return bytes(data)


@pytest.mark.parametrize("how", ["truncated", "torn", "bitflip", "garbage", "empty", "header"])
def test_a_corrupt_saved_index_is_detected_and_rebuilt(tmp_path, caplog, how, saved_indexes):
    path = str(tmp_path / "idx.db")
    _build(path)
    name, saved = _index_name(path, "v"), saved_indexes(path)
    assert _saved_len(path) == 300
    saved.write(name, _damage(saved.read(name), how))
    with caplog.at_level(logging.INFO, logger="tesseradb.storage"):
        con = tesseradb.connect(path)
        check = con.execute("CHECK TABLE t").fetchall()
        con.close()
        _knn_matches_rows(path)
    assert any("unusable" in r.getMessage() and "rebuilding" in r.getMessage() for r in caplog.records), \
        [r.getMessage() for r in caplog.records]
    assert any("saved index" in row[3] and "unusable" in row[3] for row in check), check
    assert _saved_len(path) == 300          # saved again on close: whole and current again


def test_a_stale_saved_index_is_caught_up_with_a_note(tmp_path, caplog, saved_indexes):
    path = str(tmp_path / "stale.db")
    _build(path)
    name, saved = _index_name(path, "v"), saved_indexes(path)
    old = saved.read(name)
    con = tesseradb.connect(path)
    con.executemany("INSERT INTO t (id, title, n, v) VALUES (?, ?, ?, ?)",
                    [(i, f"doc {i}", i, vec(i, 0)) for i in range(301, 351)])
    con.execute("DELETE FROM t WHERE id % 10 = 0")
    con.execute("UPDATE t SET v = ? WHERE id = 7", (vec(7, 9),))
    con.commit()
    con.execute("SELECT id FROM t WHERE knn(v, 1, ?)", ([0.0] * DIMS,)).fetchall()
    con.close()
    saved.write(name, old)                      # the saved index from before those commits
    with caplog.at_level(logging.INFO, logger="tesseradb.storage"):
        _knn_matches_rows(path)
    assert any("behind the database" in r.getMessage() for r in caplog.records), \
        [r.getMessage() for r in caplog.records]


def test_a_saved_index_of_another_database_is_refused_and_rebuilt(tmp_path, saved_indexes):
    """Every chunk table has its own name and the saved index's watermark carries it: another
    database's index copied in is refused on load (a note in CHECK TABLE) and rebuilt from the rows."""
    ours, theirs = str(tmp_path / "ours.db"), str(tmp_path / "theirs.db")
    _build(ours, version=0)
    _build(theirs, version=1)
    name = _index_name(ours, "v")
    saved_indexes(ours).write(name, saved_indexes(theirs).read(_index_name(theirs, "v")))
    con = tesseradb.connect(ours)
    check = con.execute("CHECK TABLE t").fetchall()
    assert check[-1][2:] == ("status", "OK")
    assert any("another column" in row[3] for row in check), check
    con.close()
    _knn_matches_rows(ours)


def test_parts_of_a_killed_save_are_ignored_then_removed(tmp_path, saved_indexes):
    from tesseradb.storage import index_cache
    path = str(tmp_path / "unfinished.db")
    _build(path)
    name = _index_name(path, "v")
    con = tesseradb.connect(path)
    gen = index_cache.current(con.db.store, name)
    con.db.store.execute(f"INSERT INTO {index_cache.TABLE} (name, gen, part, data) VALUES (?, ?, 1, ?)",
                         (name, gen + 1, b"half of a save that was killed"))     # what a killed save leaves
    con.close()
    assert _unfinished_parts(path) == 1
    _knn_matches_rows(path)                          # the current generation is used
    con = tesseradb.connect(path)
    con.executemany("INSERT INTO t (id, title, n, v) VALUES (?, ?, ?, ?)",
                    [(i, f"doc {i}", i, vec(i, 0)) for i in range(301, 311)])
    con.commit()
    con.execute("SELECT id FROM t WHERE knn(v, 1, ?)", ([0.0] * DIMS,)).fetchall()
    con.close()                                      # the next save removes them
    assert _unfinished_parts(path) == 0
    assert _saved_len(path) == 310


def test_a_release_0_2_index_folder_in_any_state_opens(tmp_path, caplog):
    """The 0.2 side folder is only read to migrate it: whatever is there, the database opens."""
    path = str(tmp_path / "legacy.db")
    _build(path)
    for state in ("file", "fifo", "garbage", "empty-folder"):
        folder = path + ".tessera"
        shutil.rmtree(folder, ignore_errors=True)
        if os.path.isfile(folder):
            os.remove(folder)
        if state == "file":
            open(folder, "w").write("not a folder")
        else:
            os.mkdir(folder)
            target = os.path.join(folder, _index_name(path, "v") + ".faiss")
            if state == "fifo":
                os.mkfifo(target)
            elif state == "garbage":
                open(target, "wb").write(b"garbage" * 100)
        _knn_matches_rows(path)


# -- a full disk ----------------------------------------------------------------------------------
def test_disk_full_during_commit_is_an_error_and_loses_nothing(tmp_path):
    path = str(tmp_path / "full.db")
    _create(path)
    con = tesseradb.connect(path)
    con.executemany("INSERT INTO t (id, title, n, v) VALUES (?, ?, ?, ?)", [(i, "seed", i, vec(i, 0)) for i in range(1, 6)])
    con.commit()
    con.execute("SELECT id FROM t WHERE knn(v, 1, ?)", ([0.0] * DIMS,)).fetchall()
    con.close()
    limit = max(os.path.getsize(path), 1) + 300_000
    ack = str(tmp_path / "ack")
    proc = _spawn("diskfull", "--db", path, "--start", "100", "--limit", str(limit), "--ack", ack)
    out, err = proc.communicate(timeout=300)
    lines = [json.loads(x) for x in _lines(ack) if x != "ready"]
    assert proc.returncode == 0, err.decode()[-3000:]
    assert not [x for x in lines if "escaped" in x], lines
    report = lines[-1]["report"]
    committed = [i for x in lines if "committed" in x for i in x["committed"]]
    assert report["is_engine_error"] and report["error"] == "OperationalError", report
    assert report["rollback"] == "ok" and report["close"] == "ok", report
    assert report["count_after"] == 5 + len(committed), report          # readable after the failure
    assert committed, "the limit left no room for a single commit"
    con = tesseradb.connect(path)
    ids = sorted(r[0] for r in con.execute("SELECT id FROM t"))
    assert ids == list(range(1, 6)) + committed
    assert con.execute("CHECK TABLE t").fetchall()[-1][2:] == ("status", "OK")
    found = {r[0] for r in con.execute(f"SELECT id FROM t WHERE knn(v, {len(ids) + 5}, ?)", ([0.0] * DIMS,))}
    assert found == set(ids)
    con.close()
    print(f"\ndisk full: {len(committed)} rows committed before '{report['msg']}'")


def test_an_index_that_cannot_be_saved_is_only_a_warning(tmp_path, monkeypatch, caplog):
    path = str(tmp_path / "nosave.db")
    _build(path)
    con = tesseradb.connect(path)
    con.executemany("INSERT INTO t (id, title, n, v) VALUES (?, ?, ?, ?)",
                    [(i, f"doc {i}", i, vec(i, 0)) for i in range(301, 351)])
    con.commit()
    con.execute("SELECT id FROM t WHERE knn(v, 1, ?)", ([0.0] * DIMS,)).fetchall()

    def full(self, target, watermark):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(VectorIndex, "save", full)
    with caplog.at_level(logging.WARNING, logger="tesseradb.storage"):
        con.close()                                   # no error: the saved index is a cache
    assert any("could not save the index" in r.getMessage() for r in caplog.records)
    monkeypatch.undo()
    _knn_matches_rows(path)
