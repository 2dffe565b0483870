"""The endpoints one by one, over real HTTP: how /sql reads its statement, the raw and search shapes,
/cli and /cli_json, the document endpoints, Elasticsearch's /_bulk and /<table>/_doc, pages, sorts,
totals, highlight options and aggregations."""
from __future__ import annotations

import json

import httpx
import pytest

from tests.http.support import DDL, DOCS

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def db(served):
    with served.dbapi() as con:
        con.execute(DDL)
        con.executemany("INSERT INTO docs (id, title, body, team, year) VALUES (?, ?, ?, ?, ?)", DOCS)
    return served


def titles(r: httpx.Response) -> list[str]:
    return [h["_source"]["title"] for h in r.json()["hits"]["hits"]]


@pytest.mark.parametrize("how", ["form", "mode-form", "raw-form", "raw-url", "get"])
def test_sql_reads_its_statement(db, how):
    statement = "SELECT id FROM docs WHERE title = 'Office' AND 1 = 1"
    if how == "form":
        r = httpx.post(db.url + "/sql", data={"query": statement})
        assert r.json()["hits"]["hits"] == [{"_id": 3, "_score": 1, "_source": {}}]
        return
    if how == "mode-form":
        r = httpx.post(db.url + "/sql", content=b"mode=raw&query=" + statement.replace(" ", "+").replace("=", "%3D").encode())
    elif how == "raw-form":
        r = httpx.post(db.url + "/sql", content=b"raw_response=true&query=" + statement.replace("=", "%3D").encode())
    elif how == "raw-url":
        r = httpx.post(db.url + "/sql?raw_response=true", content=statement.encode(), headers={"Content-Type": "text/plain"})
    else:
        r = httpx.get(db.url + "/sql", params={"query": statement, "mode": "raw"})
    assert r.json() == [{"columns": [{"id": {"type": "long long"}}], "data": [{"id": 3}], "total": 1, "error": "", "warning": ""}]


def test_mode_wins_over_raw_response(db):
    r = httpx.post(db.url + "/sql?raw_response=true&mode=json", content=b"SELECT 1 AS one")
    assert r.json()["hits"]["hits"] == [{"_score": 1, "_source": {"one": 1}}]


def test_raw_runs_several_statements(db):
    r = httpx.post(db.url + "/sql?mode=raw", content=b"SHOW TABLES; SELECT COUNT(*) AS n FROM docs")
    answer = r.json()
    assert [a["data"] for a in answer] == [[{"Table": "docs"}], [{"n": 6}]]


def test_raw_types_and_warnings(db):
    r = httpx.post(db.url + "/sql?mode=raw", content=b"SELECT id, title, year, 1.5 AS f, LENGTH(v) AS chunks FROM docs WHERE id = 1")
    answer = r.json()[0]
    assert answer["columns"] == [{"id": {"type": "long long"}}, {"title": {"type": "string"}}, {"year": {"type": "long long"}},
                                 {"f": {"type": "float"}}, {"chunks": {"type": "long long"}}]
    assert answer["data"][0]["chunks"] >= 2


def test_cli_and_cli_json(db):
    r = httpx.post(db.url + "/cli", content=b"SELECT id, team FROM docs WHERE id < 3 ORDER BY id")
    assert r.text.splitlines()[:5] == ["+----+------+", "| id | team |", "+----+------+", "|  1 | ops  |", "|  2 | web  |"]
    assert "2 rows in set" in r.text
    r = httpx.post(db.url + "/cli", content=b"SELEC 1")
    assert r.status_code == 500 and r.text.startswith("ERROR 1064 (42000): ")
    r = httpx.get(db.url + "/cli?SHOW%20TABLES")
    assert "| docs  |" in r.text and "1 row in set" in r.text
    r = httpx.post(db.url + "/cli_json", content=b"SELECT COUNT(*) AS n FROM docs")
    assert r.json()[0]["data"] == [{"n": 6}]


def test_pages_totals_and_sort(db):
    r = db.post("/search", {"table": "docs", "sort": [{"year": "desc"}, {"id": "asc"}], "limit": 2, "offset": 1,
                            "_source": ["title", "year"]})
    assert [h["_id"] for h in r.json()["hits"]["hits"]] == [5, 2]
    assert r.json()["hits"]["total"] == 6
    r = db.post("/search", {"table": "docs", "size": 2, "from": 5})
    assert [h["_id"] for h in r.json()["hits"]["hits"]] == [6] and r.json()["hits"]["total"] == 6
    r = db.post("/search", {"table": "docs", "from": 10})
    assert r.json()["hits"] == {"total": 6, "total_relation": "eq", "hits": []}


def test_unknown_top_level_keys_are_ignored(db):
    r = db.post("/search", {"table": "docs", "query": {"equals": {"id": 2}}, "track_total_hits": True, "profile": False})
    assert titles(r) == ["Web site"]


def test_highlight_options(db):
    r = db.post("/search", {"table": "docs", "query": {"match": {"body": "kitchen"}},
                            "highlight": {"fields": {"body": {}}, "pre_tags": "[", "post_tags": "]",
                                          "before_match": "<strong>", "after_match": "</strong>", "limit": 30}})
    snippets = r.json()["hits"]["hits"][0]["highlight"]["body"]
    body = "Coffee is served at eight. The kitchen closes at six; label your food in the fridge."
    assert snippets == ["is served at eight. The [kitchen] closes at six; label your"]      # a passage, not the body
    assert len(snippets[0]) < len(body)


def test_aggregations(db):
    r = db.post("/search", {"table": "docs", "query": {"range": {"year": {"gte": 2022}}}, "limit": 0,
                            "aggs": {"t": {"terms": {"field": "team", "size": 2}},
                                     "y": {"histogram": {"field": "year", "interval": 2, "keyed": True}}}})
    aggs = r.json()["aggregations"]
    assert aggs["t"]["buckets"] == [{"key": "office", "doc_count": 2}, {"key": "ops", "doc_count": 2}]
    assert aggs["y"]["buckets"] == {"2022": {"key": 2022, "doc_count": 3}, "2024": {"key": 2024, "doc_count": 2}}


def test_hybrid_with_filter_and_passages(db):
    r = db.post("/search", {"table": "docs", "hybrid": {"query": "renew the certificate"}, "limit": 3,
                            "query": {"equals": {"team": "ops"}}, "passage": True})
    hits = r.json()["hits"]["hits"]
    assert hits and all(h["_source"]["team"] == "ops" for h in hits)
    assert hits[0]["_id"] == 1 and isinstance(hits[0]["_score"], int) and isinstance(hits[0]["_hybrid_score"], float)
    assert "certificate" in hits[0]["_passage"]["text"]


def test_text_knn_one_hit_per_document_with_its_passage(db):
    r = db.post("/search", {"table": "docs", "knn": {"field": "v", "query": "how long are backups kept", "k": 6},
                            "passage": True, "_source": False})
    hits = r.json()["hits"]["hits"]
    assert len({h["_id"] for h in hits}) == len(hits) == 6
    assert hits[0]["_id"] == 1 and "seven days" in hits[0]["_passage"]["text"]
    assert [h["_knn_dist"] for h in hits] == sorted(h["_knn_dist"] for h in hits)


# -- writes -------------------------------------------------------------------------------------------------
def test_documents(fresh):
    fresh.sql("CREATE TABLE t (title text, n int, meta json, e float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='l2')")
    r = fresh.post("/insert", {"table": "t", "doc": {"title": "auto", "n": 1, "meta": {"a": [1, 2]}, "e": [0.5, 0.5]}})
    auto_id = r.json()["id"]
    assert r.json()["created"] is True and auto_id > 0
    r = fresh.post("/replace", {"table": "t", "id": 5, "doc": {"title": "five", "n": 5}})
    assert r.json()["result"] == "created"
    r = fresh.post("/replace", {"table": "t", "id": 5, "doc": {"title": "FIVE", "n": 55}})
    assert r.json()["result"] == "updated" and r.json()["created"] is False
    r = fresh.post("/update", {"table": "t", "query": {"match": {"title": "five"}}, "doc": {"n": 56}})
    assert r.json() == {"table": "t", "updated": 1}
    r = fresh.post("/delete", {"table": "t", "id": 999})
    assert r.json() == {"table": "t", "id": 999, "found": False, "result": "not found"}
    r = fresh.post("/delete", {"table": "t", "id": [auto_id, 5]})
    assert r.json() == {"table": "t", "deleted": 2}
    assert fresh.sql("SELECT COUNT(*) AS n FROM t")[0]["data"] == [{"n": 0}]


def test_bulk_statements_and_tables(fresh):
    fresh.sql("CREATE TABLE a (title text, n int)")
    fresh.sql("CREATE TABLE b (title text)")
    lines = [{"insert": {"table": "a", "id": 1, "doc": {"title": "one", "n": 1}}},
             {"index": {"table": "a", "id": 2, "doc": {"title": "two", "n": 2}}},
             {"update": {"table": "a", "id": 1, "doc": {"n": 10}}},
             {"create": {"table": "b", "doc": {"title": "in b"}}},
             {"delete": {"table": "b", "query": {"match": {"title": "b"}}}},
             {"replace": {"index": "a", "id": 2, "doc": {"title": "TWO", "n": 20}}}]
    r = fresh.post("/bulk", content="\n".join(json.dumps(line) for line in lines).encode(),
                   headers={"Content-Type": "application/x-ndjson; charset=utf-8"})
    answer = r.json()
    assert answer["errors"] is False and answer["current_line"] == 6 and answer["skipped_lines"] == 0
    assert [(i["bulk"]["table"], i["bulk"]["created"], i["bulk"]["updated"], i["bulk"]["deleted"])
            for i in answer["items"]] == [("a", 2, 1, 0), ("b", 1, 0, 1), ("a", 1, 0, 0)]
    assert fresh.sql("SELECT id, title, n FROM a ORDER BY id")[0]["data"] == [
        {"id": 1, "title": "one", "n": 10}, {"id": 2, "title": "TWO", "n": 20}]
    assert fresh.sql("SELECT COUNT(*) AS n FROM b")[0]["data"] == [{"n": 0}]


def test_elasticsearch_bulk_and_doc(fresh):
    fresh.sql("CREATE TABLE t (title text, n int)")
    body = "\n".join(json.dumps(x) for x in [
        {"index": {"_index": "t", "_id": "1"}}, {"title": "one", "n": 1},
        {"create": {"_id": 2}}, {"title": "two", "n": 2},
        {"update": {"_index": "t", "_id": "1"}}, {"doc": {"n": 11}},
        {"create": {"_index": "t", "_id": "2"}}, {"title": "again"},
        {"delete": {"_index": "t", "_id": "2"}}]) + "\n"
    r = httpx.post(fresh.url + "/t/_bulk", content=body.encode(), headers={"Content-Type": "application/x-ndjson"})
    answer = r.json()
    assert answer["errors"] is True
    kinds = [next(iter(item)) for item in answer["items"]]
    assert kinds == ["index", "create", "update", "create", "delete"]
    assert answer["items"][3]["create"]["status"] == 409 and answer["items"][4]["delete"]["found"] is True
    r = httpx.put(fresh.url + "/t/_doc/7", json={"title": "seven", "n": 7})
    assert r.status_code == 201 and r.json()["_id"] == 7
    r = httpx.post(fresh.url + "/t/_doc", json={"title": "auto", "n": 8})
    assert r.status_code == 201 and r.json()["_id"] > 7
    r = httpx.post(fresh.url + "/t/_update/7", json={"doc": {"n": 70}})
    assert r.json()["updated"] == 1
    r = httpx.post(fresh.url + "/t/_create/7", json={"title": "dup"})
    assert r.status_code == 409
    r = httpx.delete(fresh.url + "/t/_doc/7")
    assert r.json()["found"] is True
    r = httpx.delete(fresh.url + "/t/_doc/7")
    assert r.status_code == 404 and r.json()["found"] is False
    assert fresh.sql("SELECT id, n FROM t ORDER BY id")[0]["data"][0] == {"id": 1, "n": 11}
