"""tessera mcp over stdio, driven by the SDK's own client (it spawns the process): every read tool,
schemas, limits, and that the answers are the engine's own."""
from __future__ import annotations

import json

import jsonschema
import pytest

import tesseradb
from tests.mcp.support import DOCS

READ_TOOLS = {"search", "read", "similar", "context", "describe", "sql"}
QUESTION = "how do I rotate the replication certificate"


def test_tools_are_listed_with_valid_schemas_and_descriptions(live):
    tools = {t.name: t for t in live.list_tools().tools}
    assert set(tools) == READ_TOOLS                      # no write tool without --allow-writes
    for tool in tools.values():
        assert len(tool.description) > 40
        jsonschema.Draft202012Validator.check_schema(tool.input_schema)
        assert tool.output_schema is not None and tool.output_schema["type"] == "object"
        assert tool.annotations.read_only_hint is True
    search = tools["search"].input_schema
    assert search["required"] == ["query"]
    assert search["properties"]["limit"]["maximum"] == 50
    assert set(search["properties"]["mode"]["enum"]) == {"hybrid", "semantic", "keyword"}
    assert "filters" in search["properties"]


def in_process(db: str, sql: str, params: list) -> list[tuple]:
    con = tesseradb.connect(db, read_only=True)
    try:
        return con.execute(sql, params).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("mode,where", [("semantic", "knn(v, ?, ?)"), ("hybrid", "hybrid_match(?, v)")])
def test_search_best_passage_is_knn_chunk_text(live, db, mode, where):
    answer = live.ok("search", {"query": QUESTION, "mode": mode, "limit": 3, "chunks_per_doc": 2})
    params = [3, QUESTION] if mode == "semantic" else [QUESTION]
    order = "knn_dist()" if mode == "semantic" else "hybrid_score() DESC"
    expected = in_process(db, f"SELECT id, knn_chunk_text() FROM docs WHERE {where} ORDER BY {order}, id LIMIT 3",
                          params)
    assert [r["id"] for r in answer["results"]] == [i for i, _ in expected]
    assert [r["passages"][0]["text"] for r in answer["results"]] == [t for _, t in expected]
    assert answer["results"][0]["id"] == 1 and answer["results"][0]["title"] == "Database operations"
    assert "rotate the replication certificate" in answer["results"][0]["passages"][0]["text"]


def test_search_limits_order_and_passages(live):
    answer = live.ok("search", {"query": "office kitchen coffee", "limit": 2, "chunks_per_doc": 3})
    assert answer["count"] == len(answer["results"]) == 2            # limit counts documents
    scores = [r["score"] for r in answer["results"]]
    assert scores == sorted(scores, reverse=True)
    for result in answer["results"]:
        assert 1 <= len(result["passages"]) <= 3
        assert set(result["passages"][0]) == {"heading", "text", "chunk", "score"}
        passage_scores = [p["score"] for p in result["passages"]]
        assert passage_scores == sorted(passage_scores, reverse=True)
    semantic = live.ok("search", {"query": "office kitchen coffee", "mode": "semantic", "limit": 6})
    scores = [r["score"] for r in semantic["results"]]
    assert scores == sorted(scores, reverse=True) and len(scores) == 6


def test_keyword_search_finds_the_rare_word(live):
    answer = live.ok("search", {"query": "USR1", "mode": "keyword"})
    assert [r["id"] for r in answer["results"]] == [4]
    assert answer["results"][0]["passages"][0]["text"].startswith("Log rotation Send USR1")


def test_filters_are_applied(live):
    ops = live.ok("search", {"query": "reviews and backups", "filters": {"team": "ops"}, "limit": 10})
    assert {r["id"] for r in ops["results"]} == {1, 4, 6}
    recent = live.ok("search", {"query": "anything", "mode": "semantic",
                                "filters": {"year": {"gte": 2023}, "team": {"in": ["ops", "web"]}}})
    assert {r["id"] for r in recent["results"]} == {1, 2, 6}
    symbols = live.ok("search", {"query": "anything", "filters": {"year": {"<": 2023}, "team": {"$ne": "ops"}}})
    assert {r["id"] for r in symbols["results"]} == {3}


def test_sql_in_filter_values_is_a_value(live):
    for hostile in ["ops' OR '1'='1", "ops\" OR 1=1 --", "x'); DELETE FROM docs; --"]:
        answer = live.ok("search", {"query": "backups", "filters": {"team": hostile}})
        assert answer["results"] == []
    assert live.ok("sql", {"query": "SELECT COUNT(*) FROM docs"})["rows"] == [[len(DOCS)]]


@pytest.mark.parametrize("filters,message", [
    ({"nosuch": 1}, "table 'docs' has no filterable column 'nosuch' (it has: id, title, body, team, year)"),
    ({"team = 'ops' OR 1": 1}, "has no filterable column"),
    ({"v": 1}, "has no filterable column 'v'"),
    ({"year": {"between": [1, 2]}}, "unknown filter operator 'between'"),
    ({"year": {"in": []}}, "'in' takes a non-empty list of values"),
    ({"year": {"gt": [1, 2]}}, "a filter value must be a string, number or boolean, not list"),
    ({"team": {"eq": {"nested": 1}}}, "not dict"),
])
def test_bad_filters_are_tool_errors(live, filters, message):
    assert message in live.error("search", {"query": "backups", "filters": filters})


def test_unknown_table_and_default_table(live):
    assert "unknown table 'nosuch' (tables: docs, labels)" in live.error("search", {"query": "x", "table": "nosuch"})
    assert "table 'labels' has no text or model-backed vector column" in live.error(
        "search", {"query": "x", "table": "labels"})
    assert live.ok("search", {"query": "backups", "table": "DOCS", "limit": 1})["table"] == "docs"


def test_read_document_and_window(live, db):
    doc = live.ok("read", {"table": "docs", "id": 2})
    assert doc["fields"] == {"id": 2, "title": DOCS[1][0], "body": DOCS[1][1], "team": "web", "year": 2023}
    assert doc["truncated"] == []
    chunks = in_process(db, "SHOW CHUNKS FROM docs.v WHERE id = ?", [1])
    window = live.ok("read", {"table": "docs", "id": 1, "chunk": 2, "window": 1})
    assert window["chunks"] == [1, 3]
    assert all(row[5].strip() in window["text"] for row in chunks[:3])     # SHOW CHUNKS: ..., text, heading
    assert chunks[3][5].strip() not in window["text"]
    only = live.ok("read", {"table": "docs", "id": 1, "chunk": 2, "window": 0})
    assert only["text"] == chunks[1][5]


@pytest.mark.parametrize("arguments,message", [
    ({"table": "docs", "id": 99}, "table 'docs' has no document with id 99"),
    ({"table": "docs", "id": 1, "chunk": 40}, "document 1 has chunks 1 to"),
    ({"table": "docs", "id": 1, "window": 2}, "give its chunk number too"),
    ({"table": "docs", "id": 1, "section": "Backups", "chunk": 1}, "not both"),
    ({"table": "docs", "id": 1, "section": "Backups"}, "has no section 'Backups'"),
    ({"table": "docs", "id": "one"}, "invalid arguments for read: 'id' must be a valid integer"),
])
def test_read_errors(live, arguments, message):
    assert message in live.error("read", arguments)


def test_similar_leaves_the_document_out(live, db):
    answer = live.ok("similar", {"table": "docs", "id": 3, "limit": 3})
    ids = [r["id"] for r in answer["results"]]
    assert 3 not in ids and len(ids) == 3
    expected = in_process(db, "SELECT id FROM docs WHERE knn(v, 3, 3) AND id <> 3 ORDER BY knn_dist(), id", [])
    assert ids == [i for (i,) in expected]
    assert ids[0] == 5                                   # Holidays: the other office page
    assert answer["results"][0]["passage"]["text"]


def test_context(live):
    answer = live.ok("context", {"table": "docs", "id": 1})
    assert answer["fields"]["title"] == "Database operations" and answer["fields"]["team"] == "ops"
    assert answer["chunks"] == 4
    assert answer["outline"] == []                     # these documents have no headings
    assert 1 not in [r["id"] for r in answer["similar"]] and len(answer["similar"]) == 5


def test_describe(live, db):
    answer = live.ok("describe")
    assert answer["read_only"] is True
    tables = {t["name"]: t for t in answer["tables"]}
    assert set(tables) == {"docs", "labels"}
    docs = tables["docs"]
    chunk_rows = in_process(db, "SHOW CHUNKS FROM docs.v", [])
    assert docs["rows"] == len(DOCS) and docs["chunks"] == {"v": len(chunk_rows)}
    assert docs["search_column"] == "v" and docs["title_column"] == "title"
    assert docs["full_text_columns"] == ["title", "body"]
    columns = {c["name"]: c for c in docs["columns"]}
    assert columns["v"]["searchable"] is True and columns["v"]["filterable"] is False
    assert columns["team"]["filterable"] is True
    assert answer["models"] == [{"name": "all-MiniLM-L6-v2", "dimensions": 384}]
    assert tables["labels"]["search_column"] is None


def test_resources_are_the_table_schemas(live):
    uris = sorted(str(r.uri) for r in live.list_resources().resources)
    assert uris == ["tessera://schema/docs", "tessera://schema/labels"]
    text = live.read_resource("tessera://schema/docs").contents[0].text
    assert text.startswith("CREATE TABLE `docs` (") and "model_name='Xenova/all-MiniLM-L6-v2'" in text


def test_sql_reads_and_caps_rows(live):
    answer = live.ok("sql", {"query": "SELECT id, title FROM docs ORDER BY id LIMIT 2"})
    assert answer["columns"] == ["id", "title"] and answer["rows"] == [[1, DOCS[0][0]], [2, DOCS[1][0]]]
    many = live.ok("sql", {"query": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 500) "
                                    "SELECT x FROM c"})
    assert many["row_count"] == 200 and many["rows"][-1] == [200]
    assert "only the first 200 rows" in many["truncated"]
    big = live.ok("sql", {"query": "SELECT REPEAT('a', 5000) AS a"})
    assert len(big["rows"][0][0]) == 2000 and "cut" in big["values_truncated"]
    vectors = live.ok("sql", {"query": "SELECT v FROM docs WHERE id = 1"})
    assert vectors["rows"][0][0].startswith("<4 vectors of 384 dimensions>")
    fused = live.ok("sql", {"query": "SELECT id FROM docs WHERE knn(v, 1, 'fridge') "})
    assert fused["rows"] == [[3]]


def test_sql_errors_are_mysql_texts(live):
    assert "ERROR 1064 (42000)" in live.error("sql", {"query": "SELEC 1"})
    assert "ERROR 1064 (42000): expected exactly one statement" in live.error(
        "sql", {"query": "SELECT 1; DELETE FROM docs"})
    assert live.error("sql", {"query": "SELECT * FROM nosuch"}).endswith(
        "ERROR 1146 (42S02): table 'nosuch' does not exist")


WRITES = [
    "DELETE FROM docs",
    "INSERT INTO docs (title) VALUES ('x')",
    "UPDATE docs SET team = 'x'",
    "DROP TABLE docs",
    "CREATE TABLE z (a int)",
    "OPTIMIZE TABLE docs",
    "ALTER TABLE docs REBUILD KNN",
    "SELECT * FROM docs INTO OUTFILE '{dir}/out.csv'",
    "LOAD DATA INFILE '{dir}/docs.db' INTO TABLE labels",
]


def test_sql_cannot_write_the_database_or_files(live, db):
    import os
    from tests.mcp.support import files_of
    folder = os.path.dirname(db)
    live.ok("search", {"query": "warm the index"})
    before = files_of(folder)
    for statement in WRITES:
        message = live.error("sql", {"query": statement.format(dir=folder)})
        assert "ERROR 1290 (HY000): The database is open read-only" in message, message
    assert files_of(folder) == before
    assert live.ok("sql", {"query": "SELECT COUNT(*) FROM docs"})["rows"] == [[len(DOCS)]]


def test_hostile_input_leaves_the_server_answering(live):
    huge = "a" * (10 * 1024 * 1024)
    assert "at most 10000 characters" in live.error("search", {"query": huge})
    assert "at most 100000 characters" in live.error("sql", {"query": huge})
    # argument errors in plain words: the argument and what it must be, no pydantic report or URL (issue 36)
    assert live.error("search", {"query": "x", "limit": "ten"}).startswith(
        "invalid arguments for search: 'limit' must be a valid integer")
    assert live.error("search", {"query": "x", "limit": 10_000}) == \
        "invalid arguments for search: 'limit' must be less than or equal to 50"
    assert live.error("search", {"query": "x", "filters": [1, 2]}) == \
        "invalid arguments for search: 'filters' must be a valid dictionary"
    assert live.error("search", {"query": "x", "mode": "DROP TABLE docs"}) == \
        "invalid arguments for search: 'mode' must be 'hybrid', 'semantic' or 'keyword'"
    assert live.error("similar", {"table": "docs", "id": 1, "limit": -1}).startswith(
        "invalid arguments for similar: 'limit' must be greater than")
    assert live.error("search", {}) == "invalid arguments for search: 'query' is required"
    assert not any(word in live.error("search", {"query": "x", "limit": "ten"}) for word in ("pydantic", "http"))
    assert live.ok("describe")["tables"][0]["rows"] == len(DOCS)


def test_write_tools_without_allow_writes(live):
    for name in ("add", "update", "delete", "sync"):
        message = live.error(name, {"table": "docs", "documents": [{"title": "x"}]})
        assert f"tool '{name}' changes the database and this server is read-only" in message
        assert "--allow-writes" in message
    assert live.ok("sql", {"query": "SELECT COUNT(*) FROM docs"})["rows"] == [[len(DOCS)]]


@pytest.mark.parametrize("how", ["eof", "sigint", "sigterm"])
def test_eof_and_signals_end_the_process_cleanly(db, how):
    import signal
    import subprocess
    from tests.mcp.support import TESSERA
    proc = subprocess.Popen([TESSERA, "mcp", db], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    proc.stdin.write(json.dumps(hello) + "\n")
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["result"]["serverInfo"]["name"] == "tesseradb"
    if how == "eof":
        proc.stdin.close()
    else:
        proc.send_signal(signal.SIGINT if how == "sigint" else signal.SIGTERM)
    try:
        code = proc.wait(120)
    finally:
        proc.kill()
    err = proc.stderr.read()
    assert code == 0, err
    assert "Traceback" not in err
