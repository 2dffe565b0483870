"""Bounded agent answers (issue 33): sql() bounds bytes as well as rows, transaction statements are
refused, section reads are bounded, a slow call does not block the others, --timeout stops
statements. Driven with the official MCP SDK client over stdio."""
from __future__ import annotations

import asyncio
import json

import pytest

import tesseradb
from tests.mcp.support import make_database, stdio

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def big_db(tmp_path_factory):
    path = make_database(str(tmp_path_factory.mktemp("mcp-bounds") / "docs.db"))
    con = tesseradb.connect(path, autocommit=True)
    con.execute("CREATE TABLE notes (title text, body text)")
    line = "The quick brown fox jumps over the lazy dog; backups run nightly at two.\n"
    body = "# Start\n\n" + "".join(f"## Part {n}\n\n" + line * 40 for n in range(50 * 1024 * 1024 // (len(line) * 40)))
    con.execute("INSERT INTO notes (id, title, body) VALUES (1, 'Huge', ?)", (body,))
    con.close()
    return path


@pytest.fixture(scope="module")
def live(big_db):
    client = stdio(big_db, "--timeout", "2")
    yield client
    client.close()


def test_a_wide_row_is_cut_with_a_marker(live):
    columns = ", ".join(f"REPEAT('x', 2000) AS c{n}" for n in range(1500))
    result = live.call("sql", {"query": f"SELECT {columns}"})
    assert not result.is_error, result.content[0].text
    text = result.content[0].text
    assert len(text) < 300_000                               # 3 MB of cells were selected
    answer = json.loads(text)
    assert len(answer["columns"]) == 1500
    assert 0 < len(answer["rows"][0]) < 1500
    assert "cut" in answer["truncated"] and "columns" in answer["truncated"]


def test_many_wide_rows_are_cut_too(live):
    result = live.ok("sql", {"query": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 150) "
                                      "SELECT x, REPEAT('y', 1999) AS a, REPEAT('z', 1999) AS b FROM c"})
    assert 0 < result["row_count"] < 150 and "cut" in result["truncated"]
    assert len(json.dumps(result)) < 300_000


@pytest.mark.parametrize("statement", ["START TRANSACTION", "begin", "BEGIN WORK", "COMMIT", "ROLLBACK",
                                       "SAVEPOINT sp", "ROLLBACK TO SAVEPOINT sp", "RELEASE SAVEPOINT sp",
                                       "/* c */ start transaction read only", "SET autocommit = 0"])
def test_transaction_statements_are_refused(live, statement):
    message = live.error("sql", {"query": statement})
    assert "transaction" in message.lower() and "sql()" in message
    assert live.ok("sql", {"query": "SELECT COUNT(*) FROM docs"})["rows"] == [[6]]


def test_a_section_of_a_50_mb_document_is_read_within_bounds(live):
    answer = live.ok("read", {"table": "notes", "id": 1, "section": "Part 3"})
    assert answer["section"] == "Start > Part 3" and answer["text"].startswith("## Part 3")
    missing = live.error("read", {"table": "notes", "id": 1, "section": "Part 99999"})
    assert "no section" in missing and "first" in missing        # says how much was looked through
    context = live.ok("context", {"table": "notes", "id": 1})
    assert context["fields"]["title"] == "Huge"


@pytest.fixture(scope="module")
def patient(big_db):
    client = stdio(big_db, "--timeout", "15")      # long enough for describe on a busy machine
    yield client
    client.close()


def test_a_slow_call_does_not_block_the_others_and_stops_at_the_timeout(patient):
    live = patient
    slow_sql = ("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 1000000000) "
                "SELECT COUNT(*) FROM c")

    async def both():
        slow = asyncio.ensure_future(live.client.call_tool("sql", {"query": slow_sql}))
        await asyncio.sleep(0.2)
        quick = await live.client.call_tool("describe", {})
        return quick, slow.done(), await slow

    quick, slow_done_first, slow = asyncio.run_coroutine_threadsafe(both(), live.loop).result(300)
    assert not quick.is_error
    assert not slow_done_first                                 # describe answered while the slow call ran
    assert slow.is_error and "interrupted" in slow.content[0].text, slow.content[0].text
    assert live.ok("sql", {"query": "SELECT 1"})["rows"] == [[1]]
