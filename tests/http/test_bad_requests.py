"""Malformed and hostile requests get Manticore's error shapes, change nothing and leave the server
up; the HTTP side keeps the MySQL side's rules (read-only, authentication, TLS, loopback)."""
from __future__ import annotations

import json
import ssl
import subprocess

import httpx
import manticoresearch
import pytest

import tesseradb
from tests.http.support import Served

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    """A server whose requests may be at most 1 MiB (--max-allowed-packet), with one small table."""
    path = str(tmp_path_factory.mktemp("bad") / "bad.db")
    handle = tesseradb.serve(path, port=0, http_port=0, max_packet=1024 * 1024, background=True)
    served = Served(handle, path)
    served.sql("CREATE TABLE t (title text, tag string, n int)")
    served.sql("INSERT INTO t (id, title, tag, n) VALUES (1, 'first', 'a', 1), (2, 'second', 'b', 2)")
    yield served
    handle.stop()


def rows(served: Served) -> list:
    return served.sql("SELECT id, title, tag, n FROM t ORDER BY id")[0]["data"]


BEFORE = [{"id": 1, "title": "first", "tag": "a", "n": 1}, {"id": 2, "title": "second", "tag": "b", "n": 2}]


@pytest.mark.parametrize("path, body, status, shape", [
    ("/search", b'{"table": "t", "query": {', 400, "plain"),
    ("/search", b"[1, 2]", 400, "plain"),
    ("/search", b"\xff\xfe not utf-8", 400, "plain"),
    ("/insert", b'{"table": "t", "doc": {"title": ', 400, "typed"),
    ("/update", b"not json at all", 400, "typed"),
    ("/delete", b"", 400, "typed"),
])
def test_bad_json(small, path, body, status, shape):
    r = small.post(path, content=body)
    assert r.status_code == status
    error = r.json()["error"]
    if shape == "plain":
        assert isinstance(error, str) and error
    else:
        assert error["type"] == "parse_exception" and error["reason"] and r.json()["status"] == 400
    assert rows(small) == BEFORE


@pytest.mark.parametrize("request_body, message", [
    ({"table": "t", "limit": "ten"}, '"limit" property value should be an integer'),
    ({"table": 5}, '"table" property value should be a string'),
    ({"query": {"match_all": {}}}, '"table" property missing'),
    ({"table": "t", "query": "title"}, '"query" property value should be an object'),
    ({"table": "t", "query": {"wildcard": {"title": "f*"}}}, "unknown full-text node 'wildcard'"),
    ({"table": "t", "query": {"equals": {"n": [1, 2]}}}, '"equals" filter expects a number, string or boolean value'),
    ({"table": "t", "query": {"equals": {"nope": 1}}}, "unknown attribute 'nope' in table 't'"),
    ({"table": "t", "query": {"equals": {"n` = 1 OR 1=1 --": 1}}}, "unknown attribute 'n` = 1 OR 1=1 --' in table 't'"),
    ({"table": "t", "sort": [{"title; DROP TABLE t": "asc"}]}, "unknown sort field 'title; DROP TABLE t' in table 't'"),
    ({"table": "t", "knn": {"field": "n", "query_vector": [1]}}, "knn field 'n' is not a float_vector column"),
])
def test_wrong_types_and_names(small, request_body, message):
    r = small.post("/search", request_body)
    assert (r.status_code, r.json()) == (400, {"error": message})
    assert rows(small) == BEFORE


def test_missing_table_is_the_engines_error(small):
    r = small.post("/search", {"table": "t` WHERE 1; DROP TABLE t; --"})
    assert r.status_code == 500 and "does not exist" in r.json()["error"]
    assert rows(small) == BEFORE


def test_values_are_bound_never_pasted(small):
    hostile = "x'); DELETE FROM t; --"
    r = small.post("/search", {"table": "t", "query": {"equals": {"title": hostile}}})
    assert r.json()["hits"]["total"] == 0
    r = small.post("/update", {"table": "t", "id": 2, "doc": {"tag": hostile}})
    assert r.json()["updated"] == 1
    assert rows(small)[1]["tag"] == hostile
    small.post("/update", {"table": "t", "id": 2, "doc": {"tag": "b"}})
    assert rows(small) == BEFORE


def test_document_errors(small):
    r = small.post("/insert", {"table": "t", "id": "abc", "doc": {"title": "x"}})
    assert r.json() == {"error": {"type": "parse_exception", "reason": "Document ids should be integer", "table": "t"},
                        "status": 400}
    r = small.post("/insert", {"table": "t", "id": 1, "doc": {"title": "again"}})
    assert r.status_code == 409 and r.json()["error"]["type"] == "action_request_validation_exception"
    assert r.json()["error"]["reason"] == "duplicate id '1'"
    r = small.post("/insert", {"table": "t", "doc": {"nope": 1}})
    assert r.status_code == 409 and r.json()["error"]["reason"] == "Unknown column 'nope' in 'field list'"
    assert rows(small) == BEFORE


def test_bulk_stops_at_the_first_error_and_keeps_what_was_committed(small):
    lines = [{"insert": {"table": "t", "id": 10, "doc": {"title": "ten"}}},
             {"insert": {"table": "t", "id": 1, "doc": {"title": "duplicate"}}}]
    body = "\n".join(json.dumps(line) for line in lines).encode()
    r = small.post("/bulk", content=body, headers={"Content-Type": "application/x-ndjson"})
    assert r.status_code == 500
    answer = r.json()
    assert answer["errors"] is True and answer["error"] and answer["current_line"] == 2 and answer["skipped_lines"] == 2
    assert rows(small) == BEFORE                  # one table, one transaction: both lines rolled back
    r = small.post("/bulk", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and r.json()["error"]["reason"] == "Content-Type must be application/x-ndjson"


def test_sql_errors(small):
    r = httpx.post(small.url + "/sql?mode=raw", content=b"SELEC 1")
    assert r.status_code == 500 and "syntax" in r.json()["error"].lower()
    r = httpx.post(small.url + "/sql", data={"query": "DELETE FROM t"})
    assert (r.status_code, r.json()) == (501, {"error": "only SELECT queries are supported"})
    r = httpx.post(small.url + "/sql", content=b"")
    assert (r.status_code, r.json()) == (400, {"error": "query missing"})
    assert rows(small) == BEFORE


def test_unknown_endpoints(small):
    for method, path in (("GET", "/nope"), ("POST", "/t/_search_not"), ("PUT", "/a/b/c/d")):
        r = httpx.request(method, small.url + path)
        assert (r.status_code, r.json()["error"].endswith("unsupported endpoint")) == (501, True)


def test_ten_megabyte_bodies(small):
    big = b'{"table": "t", "query": {"match": {"title": "' + b"x" * (10 * 1024 * 1024) + b'"}}}'
    r = small.post("/search", content=big)
    assert r.status_code == 413 and "larger than the limit" in r.json()["error"]
    r = small.post("/bulk", content=big, headers={"Content-Type": "application/x-ndjson"})
    assert r.status_code == 413
    assert rows(small) == BEFORE                  # and it still answers


def test_a_ten_megabyte_body_within_the_limit_is_read(fresh):
    fresh.sql("CREATE TABLE t (title text)")
    junk = b"[" + b"1," * (5 * 1024 * 1024) + b"x]"
    r = fresh.post("/search", content=junk)
    assert r.status_code == 400 and "JSON parse error" in r.json()["error"]
    big = "word " * (2 * 1024 * 1024)
    r = fresh.post("/insert", {"table": "t", "id": 1, "doc": {"title": big}})
    assert r.status_code == 200
    assert fresh.sql("SELECT LENGTH(title) AS n FROM t")[0]["data"] == [{"n": len(big)}]


def test_foreign_host_header_is_refused_on_loopback(small):
    r = httpx.post(small.url + "/sql?mode=raw", content=b"SHOW TABLES", headers={"Host": "attacker.example"})
    assert r.status_code == 400


# -- the MySQL side's rules -----------------------------------------------------------------------------
def test_read_only(tmp_path):
    path = str(tmp_path / "ro.db")
    with tesseradb.connect(path, autocommit=True) as con:
        con.execute("CREATE TABLE t (title text)")
        con.execute("INSERT INTO t (id, title) VALUES (1, 'kept')")
    handle = tesseradb.serve(path, port=0, http_port=0, read_only=True, background=True)
    try:
        served = Served(handle, path)
        r = served.post("/insert", {"table": "t", "doc": {"title": "new"}})
        assert r.status_code == 409 and "read-only" in r.json()["error"]["reason"]
        r = httpx.post(served.url + "/sql?mode=raw", content=b"DELETE FROM t")
        assert r.status_code == 500 and "read-only" in r.json()["error"]
        assert served.sql("SELECT title FROM t")[0]["data"] == [{"title": "kept"}]
    finally:
        handle.stop()


def test_password_protects_the_http_side_too(tmp_path):
    path = str(tmp_path / "pw.db")
    handle = tesseradb.serve(path, port=0, http_port=0, user="app", password="s3cret", background=True)
    try:
        url = f"http://127.0.0.1:{handle.http_port}"
        assert httpx.post(url + "/sql?mode=raw", content=b"SHOW TABLES").status_code == 401
        assert httpx.post(url + "/sql?mode=raw", content=b"SHOW TABLES", auth=("app", "wrong")).status_code == 401
        assert httpx.post(url + "/sql?mode=raw", content=b"SHOW TABLES", auth=("root", "s3cret")).status_code == 401
        assert httpx.post(url + "/sql?mode=raw", content=b"SHOW TABLES", auth=("app", "s3cret")).status_code == 200
        bearer = {"Authorization": "Bearer s3cret"}
        assert httpx.post(url + "/sql?mode=raw", content=b"SHOW TABLES", headers=bearer).status_code == 200
        config = manticoresearch.Configuration(host=url, username="app", password="s3cret")
        with manticoresearch.ApiClient(config) as client:
            assert manticoresearch.UtilsApi(client).sql("SHOW TABLES").actual_instance[0]["total"] == 0
    finally:
        handle.stop()


def test_tls(tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    handle = tesseradb.serve(str(tmp_path / "tls.db"), port=0, http_port=0, ssl_cert=str(cert), ssl_key=str(key),
                             user="app", password="pw", background=True)
    try:
        context = ssl.create_default_context(cafile=str(cert))
        r = httpx.post(f"https://127.0.0.1:{handle.http_port}/sql?mode=raw", content=b"SHOW TABLES",
                       auth=("app", "pw"), verify=context)
        assert r.status_code == 200 and r.json()[0]["total"] == 0
        with pytest.raises(httpx.HTTPError):
            httpx.post(f"http://127.0.0.1:{handle.http_port}/sql?mode=raw", content=b"SHOW TABLES", auth=("app", "pw"))
    finally:
        handle.stop()


def test_refuses_a_public_address_without_a_password(tmp_path):
    from tesseradb.clients.server.config import ConfigError
    with pytest.raises(ConfigError, match="without a password"):
        tesseradb.serve(str(tmp_path / "x.db"), host="0.0.0.0", port=0, http_port=0, background=True)


def test_time_limits_apply(tmp_path):
    """--max-execution-time stops a long SELECT over HTTP as over MySQL (error 3024), and the server
    answers the next request."""
    path = str(tmp_path / "slow.db")
    with tesseradb.connect(path, autocommit=True) as con:
        con.execute("CREATE TABLE t (n int)")
        con.executemany("INSERT INTO t (n) VALUES (?)", [(i,) for i in range(60)])
    handle = tesseradb.serve(path, port=0, http_port=0, max_execution_time=50, background=True)
    try:
        served = Served(handle, path)
        r = httpx.post(served.url + "/sql?mode=raw", timeout=120,
                       content=b"SELECT COUNT(*) FROM t a, t b, t c, t d, t e")
        assert r.status_code == 500 and "maximum statement execution time exceeded" in r.json()["error"].lower()
        assert served.sql("SELECT COUNT(*) AS n FROM t")[0]["data"] == [{"n": 60}]
    finally:
        handle.stop()


def test_file_statements_follow_secure_file_priv(small, tmp_path):
    """The server's --secure-file-priv (default: none) holds for /sql too."""
    outside = tmp_path / "rows.csv"
    outside.write_text("9,nine,z,9\n")
    r = httpx.post(small.url + "/sql?mode=raw", content=f"LOAD DATA INFILE '{outside}' INTO TABLE t".encode())
    assert r.status_code == 500 and "secure-file-priv" in r.json()["error"]
    r = httpx.post(small.url + "/sql?mode=raw", content=f"SELECT * FROM t INTO OUTFILE '{tmp_path / 'out.csv'}'".encode())
    assert r.status_code == 500 and not (tmp_path / "out.csv").exists()
    assert rows(small) == BEFORE


def test_concurrent_writers_share_the_engines_locks(fresh):
    """Sixteen clients insert at once through the pool of engine connections: every row arrives (writers
    wait for each other's lock as MySQL clients do), none twice."""
    import concurrent.futures
    fresh.sql("CREATE TABLE t (title text, n int)")

    def writer(k: int) -> list[int]:
        with httpx.Client(base_url=fresh.url, timeout=300) as client:
            return [client.post("/insert", json={"table": "t", "doc": {"title": f"w{k}", "n": i}}).status_code
                    for i in range(10)]
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        codes = [c for result in pool.map(writer, range(16)) for c in result]
    assert codes == [200] * 160
    assert fresh.sql("SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS ids FROM t")[0]["data"] == [{"n": 160, "ids": 160}]


def test_stopping_interrupts_a_running_request(tmp_path):
    import threading
    import time
    path = str(tmp_path / "stop.db")
    with tesseradb.connect(path, autocommit=True) as con:
        con.execute("CREATE TABLE t (n int)")
        con.executemany("INSERT INTO t (n) VALUES (?)", [(i,) for i in range(60)])
    handle = tesseradb.serve(path, port=0, http_port=0, max_execution_time=0, background=True)
    url = f"http://127.0.0.1:{handle.http_port}/sql?mode=raw"
    answers: list = []

    def slow() -> None:
        try:
            answers.append(httpx.post(url, content=b"SELECT COUNT(*) FROM t a, t b, t c, t d, t e, t f", timeout=300))
        except httpx.HTTPError as exc:
            answers.append(exc)
    worker = threading.Thread(target=slow)
    worker.start()
    time.sleep(1)                          # the statement is running
    handle.stop()                          # interrupts it, rolls back, closes
    worker.join(120)
    assert not worker.is_alive() and answers
    if isinstance(answers[0], httpx.Response):
        assert answers[0].status_code == 500 and "interrupted" in answers[0].json()["error"].lower()
    with tesseradb.connect(path) as con:      # the file is whole and free
        assert con.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 60
