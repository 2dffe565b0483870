"""`tessera serve` as a process: it starts, serves, and stops cleanly on SIGTERM / Ctrl-C."""
from __future__ import annotations

import re
import resource
import signal
import subprocess

import pymysql
import pytest

from tests.server.support import SERVE, connect, load_docs


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_signal_rolls_back_saves_indexes_and_exits_0(start_process, db_file, sig, saved_indexes):
    proc = start_process(db_file)
    load_docs(proc.port)
    with connect(proc.port) as c, c.cursor() as cur:
        cur.execute("SELECT id FROM docs WHERE knn(chunks, 1, 'pasta')")      # loads the index
        assert cur.fetchall() == ((2,),)
    open_txn = connect(proc.port, autocommit=False)
    open_txn.cursor().execute("INSERT INTO docs (title, body, tag) VALUES ('Uncommitted', 'never kept', 'x')")
    code, err = proc.stop(sig)
    assert code == 0, err
    assert "stopping: rolling back open transactions, saving indexes" in err and "stopped" in err
    assert saved_indexes(db_file).names(), "the vector index was not saved"
    restarted = start_process(db_file)
    with connect(restarted.port) as c, c.cursor() as cur:
        cur.execute("SELECT title FROM docs ORDER BY id")
        assert [r[0] for r in cur.fetchall()] == ["Certificates", "Cooking", "Backups"]
        cur.execute("SELECT id FROM docs WHERE knn(chunks, 1, 'how long are backups kept')")
        assert cur.fetchall() == ((3,),)


def test_stop_interrupts_a_running_statement(start_process, db_file):
    proc = start_process(db_file)
    with connect(proc.port) as c, c.cursor() as cur:
        cur.execute("CREATE TABLE t (n int)")
    busy = connect(proc.port, read_timeout=120)
    busy._execute_command(pymysql.constants.COMMAND.COM_QUERY,
                          "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT COUNT(*) FROM r")
    code, err = proc.stop(signal.SIGTERM)
    assert code == 0, err


def test_bad_database_path_is_reported(tmp_path):
    missing = str(tmp_path / "no" / "such" / "dir" / "x.db")
    result = subprocess.run(SERVE + [missing, "--port", "0"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert result.stderr.startswith("tessera serve: ERROR ")


def test_port_in_use_is_reported(start_process, db_file, tmp_path):
    proc = start_process(db_file)
    result = subprocess.run(SERVE + [str(tmp_path / "other.db"), "--port", str(proc.port)],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert f"cannot listen on 127.0.0.1:{proc.port}" in result.stderr


def test_help_lists_the_options():
    result = subprocess.run(SERVE + ["--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    for option in ("--host", "--port", "--user", "--password-file", "--ssl-cert", "--ssl-key",
                   "--max-connections", "--idle-timeout", "--read-only"):
        assert option in result.stdout


def test_many_clients_under_a_low_open_files_limit(db_file):
    """Each client has a thread and event loop of its own (a few descriptors each): the server raises
    its soft limit on open files to what max_connections needs, as mysqld does."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    low = lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (100, hard))    # noqa: E731
    proc = subprocess.Popen(SERVE + [db_file, "--port", "0"], stderr=subprocess.PIPE, text=True, preexec_fn=low)
    try:
        port = int(re.search(r" on [^ ]+:(\d+) ", proc.stderr.readline()).group(1))
        clients = [connect(port, database=None) for _ in range(40)]
        for n, c in enumerate(clients):
            with c.cursor() as cur:
                cur.execute("SELECT %s", (n,))
                assert cur.fetchall() == ((n,),)
        for c in clients:
            c.close()
    finally:
        proc.terminate()
        proc.wait(timeout=60)
