"""Helpers for the wire-protocol tests: real sockets on loopback, ports picked free at run time.

:class:`Process` runs ``tessera serve`` as its own process (signals, crashes) and reads the port it
prints. Clients are the real ones: the mariadb CLI, PyMySQL, mysql-connector-python, SQLAlchemy.
"""
from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time

import pymysql

DOCS_DDL = ("CREATE TABLE docs (title text, body text, tag string, "
            "chunks float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
            "model_name='Xenova/all-MiniLM-L6-v2' from='title,body' chunk_strategy='sentence' max_tokens='32')")
DOCS = [
    ("Certificates", "Rotate TLS certificates every 90 days. Use the renew command to replace them.", "ops"),
    ("Cooking", "Boil the pasta in salted water for ten minutes.", "home"),
    ("Backups", "Nightly backups are copied to another region and kept for a month.", "ops"),
]
SERVE = [sys.executable, "-m", "tesseradb.clients.shell.main", "serve"]


def connect(port: int, **kwargs) -> pymysql.connections.Connection:
    options = dict(host="127.0.0.1", port=port, user="app", database="docs", autocommit=True)
    options.update(kwargs)
    return pymysql.connect(**options)


def load_docs(port: int) -> None:
    with connect(port) as c, c.cursor() as cur:
        cur.execute(DOCS_DDL)
        cur.executemany("INSERT INTO docs (title, body, tag) VALUES (%s, %s, %s)", DOCS)


class Process:
    """``tessera serve`` in its own process."""

    def __init__(self, db: str, *args: str):
        self.proc = subprocess.Popen(SERVE + [db, "--port", "0", *args], stderr=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stderr.readline()
        match = re.search(r" on [^ ]+:(\d+) ", line)
        if match is None:
            rest = self.proc.stderr.read() if self.proc.poll() is not None else ""
            self.stop(signal.SIGKILL)
            raise AssertionError(f"tessera serve did not start: {line}{rest}")
        self.port = int(match.group(1))

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 60) -> tuple[int, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            _, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return self.proc.returncode, err


def wait_for(predicate, timeout: float = 30.0, step: float = 0.05):
    """Poll until predicate() is truthy (a state to reach, not a speed to meet)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("condition not reached")


def mariadb(port: int, *args: str, sql: str = "", user: str = "app", database: str | None = "docs",
            check: bool = False) -> subprocess.CompletedProcess:
    cmd = ["mariadb", "--no-defaults", "-h", "127.0.0.1", "-P", str(port), "-u", user, *args]
    if database:
        cmd.append(database)
    result = subprocess.run(cmd, input=sql, capture_output=True, text=True, timeout=300)
    if check:
        assert result.returncode == 0, result.stderr
    return result


# a statement that runs until it is stopped (KILL QUERY, a time limit)
FOREVER = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"


def processlist(port: int) -> list[tuple]:
    """SHOW FULL PROCESSLIST, asked by a client of its own."""
    with connect(port) as c, c.cursor() as cur:
        cur.execute("SHOW FULL PROCESSLIST")
        return list(cur.fetchall())


def run_forever(client) -> tuple[threading.Thread, dict]:
    """``client`` runs FOREVER in a thread; the dict gets the errno it ends with (``"errno"``)."""
    outcome: dict = {}

    def run():
        with client.cursor() as cur:
            try:
                cur.execute(FOREVER)
            except pymysql.err.MySQLError as exc:
                outcome["errno"] = exc.args[0]
    worker = threading.Thread(target=run)
    worker.start()
    return worker, outcome
