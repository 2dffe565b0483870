"""``tessera serve DB --http-port N`` as a process: it prints where the HTTP API listens, serves the
same database as the MySQL side, and stops cleanly on SIGTERM; a taken HTTP port is a clear error."""
from __future__ import annotations

import re
import signal
import socket
import subprocess

import httpx
import pymysql
import pytest

from tests.server.support import SERVE, Process

pytestmark = pytest.mark.slow


def test_both_protocols_one_database(tmp_path):
    proc = Process(str(tmp_path / "both.db"), "--http-port", "0")
    try:
        line = proc.proc.stderr.readline()
        url = re.search(r"HTTP JSON API on (http://\S+)", line).group(1)
        r = httpx.post(url + "/sql?mode=raw", content=b"CREATE TABLE t (title text)")
        assert r.json() == [{"total": 0, "error": "", "warning": ""}]
        assert httpx.post(url + "/insert", json={"table": "t", "id": 1, "doc": {"title": "over http"}}).status_code == 200
        with pymysql.connect(host="127.0.0.1", port=proc.port, user="root", database="both") as c, c.cursor() as cur:
            cur.execute("SELECT title FROM t")
            assert cur.fetchall() == (("over http",),)
            cur.execute("INSERT INTO t (id, title) VALUES (2, 'over mysql')")
            c.commit()
        r = httpx.post(url + "/search", json={"table": "t", "query": {"match": {"title": "over"}}})
        assert sorted(h["_id"] for h in r.json()["hits"]["hits"]) == [1, 2]
    finally:
        code, err = proc.stop(signal.SIGTERM)
    assert code == 0 and "stopped" in err


def test_a_taken_http_port_is_a_clear_error(tmp_path):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = subprocess.run(SERVE + [str(tmp_path / "x.db"), "--port", "0", "--http-port", str(port)],
                                capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert f"(the HTTP port, {port})" in result.stderr and "Traceback" not in result.stderr
