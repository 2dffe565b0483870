"""Manticore's own MCP server (``mcp-manticore``), driven by the official MCP SDK client over stdio,
works against ``tessera serve --http`` unchanged: it lists the tables, describes one and runs its
search queries (it sends everything to ``/sql`` in raw mode, as it does to Manticore)."""
from __future__ import annotations

import json
import os
import sys

import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.http.support import DDL, DOCS
from tests.mcp.support import Live

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def agent(served):
    with served.dbapi() as con:
        con.execute(DDL)
        con.executemany("INSERT INTO docs (id, title, body, team, year) VALUES (?, ?, ?, ?, ?)", DOCS)
    env = {**os.environ, "MANTICORE_HOST": "127.0.0.1", "MANTICORE_PORT": str(served.handle.http_port),
           "MANTICORE_MCP_SERVER_TRANSPORT": "stdio"}
    params = StdioServerParameters(command=sys.executable, args=["-m", "mcp_manticore.main"], env=env)
    live = Live(lambda: stdio_client(params))
    yield live
    live.close()


def text_of(result) -> str:
    assert not result.is_error, result.content[0].text
    return result.content[0].text


def test_lists_the_tables(agent):
    tables = json.loads(text_of(agent.call("list_tables")))
    assert tables[0]["data"] == [{"Table": "docs"}]


def test_describes_a_table(agent):
    described = json.loads(text_of(agent.call("describe_table", {"table_name": "docs"})))
    fields = {row["Field"]: row["Type"] for row in described["columns"][0]["data"]}
    assert fields["title"] == "text" and fields["v"] == "float_vector_array" and fields["year"] == "int"


def test_runs_a_full_text_search(agent, served):
    answer = json.loads(text_of(agent.call("run_query", {
        "query": "SELECT id, title FROM docs WHERE MATCH('certificate') ORDER BY id"})))
    result = answer["rows"][0]                 # mcp-manticore hands the raw answer's fields on as one row
    data = result[answer["columns"].index("data")]
    with served.dbapi() as con:
        expected = con.execute("SELECT id, title FROM docs WHERE MATCH('certificate') ORDER BY id").fetchall()
    assert [(d["id"], d["title"]) for d in data] == [tuple(r) for r in expected] and expected


def test_runs_a_text_knn_search(agent, served):
    sql = "SELECT id, knn_dist() FROM docs WHERE knn(v, 2, 'who reviews outages')"
    answer = json.loads(text_of(agent.call("run_query", {"query": sql})))
    data = answer["rows"][0][answer["columns"].index("data")]
    with served.dbapi() as con:
        expected = con.execute(sql).fetchall()
    assert [d["id"] for d in data] == [r[0] for r in expected]
    assert len(data) == 2 and data[0]["id"] == 6             # the incident review answers the question best


def test_writes_stay_refused_by_its_default(agent):
    result = agent.call("run_query", {"query": "DELETE FROM docs WHERE id = 1"})
    assert result.is_error and "MANTICORE_ALLOW_WRITE_ACCESS" in result.content[0].text
