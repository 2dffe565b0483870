"""tessera mcp --http: the SDK's streamable HTTP client on loopback, the bearer token, and the write
tools of --allow-writes."""
from __future__ import annotations

import os
import shutil
import subprocess

import httpx2
import pytest

from tests.mcp.support import DOCS, TESSERA, HttpProcess, http, make_database

TOKEN = "s3cret-token-for-the-tests-0123456789"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mcp-http")
    db = make_database(str(folder / "docs.db"))
    token_file = folder / "token"
    token_file.write_text(TOKEN + "\n")
    sync_dir = folder / "vault"
    sync_dir.mkdir()
    (sync_dir / "note.md").write_text("# Note\n\nA note about backups.\n")
    process = HttpProcess(db, "--token-file", str(token_file), "--allow-writes", "--allow-sync", str(sync_dir))
    client = http(process.url, TOKEN)
    yield process, client, db, folder
    client.close()
    code, log = process.stop()
    assert code == 0, log
    assert "Traceback" not in log


def test_tools_over_http_with_the_token(served):
    process, client, _, _ = served
    names = {t.name for t in client.list_tools().tools}
    assert names == {"search", "read", "similar", "context", "describe", "sql", "add", "update", "delete", "sync"}
    answer = client.ok("search", {"query": "how do I rotate the replication certificate", "limit": 1})
    assert answer["results"][0]["id"] == 1
    assert process.url.startswith("http://127.0.0.1:")


def test_every_read_tool_and_the_resources_over_http(served):
    _, client, _, _ = served
    assert client.ok("describe")["read_only"] is False
    assert client.ok("similar", {"table": "docs", "id": 3, "limit": 1})["results"][0]["id"] == 5
    assert client.ok("context", {"table": "docs", "id": 2})["fields"]["title"] == "Web site"
    assert client.ok("read", {"table": "docs", "id": 1, "chunk": 1, "window": 0})["text"].startswith(
        "Database operations Backups")
    assert client.ok("sql", {"query": "SELECT title FROM docs WHERE id = 3"})["rows"] == [["Office"]]
    assert client.ok("search", {"query": "USR1", "mode": "keyword"})["results"][0]["id"] == 4
    schema = client.read_resource("tessera://schema/labels").contents[0].text
    assert schema.startswith("CREATE TABLE `labels` (")


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN}])
def test_requests_without_the_token_are_refused(served, headers):
    process, *_ = served
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    reply = httpx2.post(process.url, json=body, headers={**headers, "Accept": "application/json, text/event-stream"})
    assert reply.status_code == 401
    assert "Authorization: Bearer" in reply.text


def test_write_tools(served):
    _, client, db, _ = served
    added = client.ok("add", {"table": "docs", "documents": [
        {"title": "Certificates", "body": "Client certificates for the VPN are issued by the help desk.",
         "team": "it", "year": 2025}]})
    new_id = added["ids"][0]
    assert added["added"] == 1
    found = client.ok("search", {"query": "VPN client certificate help desk", "limit": 1})
    assert found["results"][0]["id"] == new_id
    client.ok("update", {"table": "docs", "id": new_id, "values": {"team": "security"}})
    assert client.ok("read", {"table": "docs", "id": new_id})["fields"]["team"] == "security"
    assert client.ok("delete", {"table": "docs", "ids": [new_id]})["deleted"] == 1
    assert client.ok("sql", {"query": "SELECT COUNT(*) FROM docs"})["rows"] == [[len(DOCS)]]


@pytest.mark.parametrize("tool,arguments,message", [
    ("add", {"table": "docs", "documents": [{"nosuch": 1}]}, "table 'docs' has no column 'nosuch' to write"),
    ("add", {"table": "docs", "documents": [{"v": "x"}]}, "column v is embedded by the database"),
    ("add", {"table": "nosuch", "documents": [{"title": "x"}]}, "unknown table 'nosuch'"),
    ("update", {"table": "docs", "id": 999, "values": {"team": "x"}}, "no document with id 999"),
    ("update", {"table": "docs", "id": 1, "values": {"id": 5}}, "has no column 'id' to write"),
    ("add", {"table": "docs", "documents": [{"title": "a"}, {"year": "not a number"}]}, "ERROR"),
])
def test_write_errors_change_nothing(served, tool, arguments, message):
    _, client, _, _ = served
    assert message in client.error(tool, arguments)
    assert client.ok("sql", {"query": "SELECT COUNT(*), SUM(year) FROM docs"})["rows"] == [
        [len(DOCS), sum(d[3] for d in DOCS)]]


def test_sql_stays_read_only_with_allow_writes(served):
    _, client, _, folder = served
    assert "ERROR 1290 (HY000)" in client.error("sql", {"query": "DELETE FROM docs"})
    assert "ERROR 1290 (HY000)" in client.error(
        "sql", {"query": f"SELECT * FROM docs INTO OUTFILE '{folder}/leak.csv'"})
    assert not os.path.exists(folder / "leak.csv")


@pytest.mark.parametrize("path", ["..", "../docs.db", "/etc", "vault/../../x"])
def test_sync_stays_inside_its_folder(served, path):
    _, client, _, _ = served
    message = client.error("sync", {"table": "docs", "path": path})
    assert "sync works only inside" in message or "does not exist" in message


def test_sync_refuses_a_symlink_out(served):
    _, client, _, folder = served
    link = folder / "vault" / "escape"
    if not link.exists():
        os.symlink(folder, link)
    assert "sync works only inside" in client.error("sync", {"table": "docs", "path": "escape"})


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([TESSERA, "mcp", *args], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


def test_refuses_a_public_address_without_a_token(tmp_path):
    db = str(tmp_path / "x.db")
    result = run_cli(db, "--http", "--host", "0.0.0.0")
    assert result.returncode == 2
    assert "refusing to listen on 0.0.0.0 without a token" in result.stderr


@pytest.mark.parametrize("args,message", [
    (["--host", "127.0.0.1"], "need --http"),
    (["--allow-sync", "."], "--allow-sync needs --allow-writes"),
    (["--allow-writes", "--allow-sync", "/nonexistent-dir"], "not a directory"),
    (["--http", "--token-file", "/nonexistent-token"], "cannot read the token file"),
    ([":memory:"], "needs a database file"),
])
def test_refused_options(tmp_path, args, message):
    database = [] if args[:1] == [":memory:"] else [str(tmp_path / "x.db")]
    result = run_cli(*database, *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_a_missing_database_is_not_created(tmp_path):
    db = tmp_path / "missing.db"
    result = run_cli(str(db))
    assert result.returncode == 1
    assert "cannot open" in result.stderr and "no such database file" in result.stderr
    assert not db.exists()


def test_unknown_table_option(tmp_path):
    db = make_database(str(tmp_path / "docs.db"))
    result = run_cli(db, "--table", "nosuch")
    assert result.returncode == 1 and "no such table: nosuch" in result.stderr


def test_short_token_refused(tmp_path):
    token = tmp_path / "t"
    token.write_text("short\n")
    result = run_cli(str(tmp_path / "x.db"), "--http", "--token-file", str(token))
    assert result.returncode == 2 and "shorter than 16 characters" in result.stderr
    shutil.rmtree(tmp_path, ignore_errors=True)


def test_a_wildcard_address_with_a_token(tmp_path):
    db = make_database(str(tmp_path / "docs.db"))
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    process = HttpProcess(db, "--host", "0.0.0.0", "--token-file", str(token_file))
    try:
        assert process.url.startswith("http://0.0.0.0:")
        url = process.url.replace("0.0.0.0", "127.0.0.1")
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        accept = {"Accept": "application/json, text/event-stream"}
        assert httpx2.post(url, json=body, headers=accept).status_code == 401
        client = http(url, TOKEN)
        try:
            assert {t.name for t in client.list_tools().tools} == {
                "search", "read", "similar", "context", "describe", "sql"}
        finally:
            client.close()
    finally:
        code, log = process.stop()
    assert code == 0, log
