"""The official ``manticoresearch`` Python client drives ``tessera serve --http``: the table is made
through UtilsApi.sql, documents go in through IndexApi (insert and NDJSON bulk), SearchApi searches
(full text, bool filters, text knn, highlight), IndexApi updates and deletes; each answer equals
the same operation through the DB-API on the served file."""
from __future__ import annotations

import json

import manticoresearch
import pytest
from manticoresearch.models import (BoolFilter, DeleteDocumentRequest, Highlight, HighlightFields,
                                    InsertDocumentRequest, Knn,
                                    KnnQuery, QueryFilter, SearchQuery, SearchRequest, UpdateDocumentRequest)

from tests.http.support import DDL, DOCS, document

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def apis(served):
    client = manticoresearch.ApiClient(manticoresearch.Configuration(host=served.url)).__enter__()
    utils, index, search = (manticoresearch.UtilsApi(client), manticoresearch.IndexApi(client),
                            manticoresearch.SearchApi(client))
    utils.sql(DDL)
    first, *rest = DOCS
    created = index.insert(InsertDocumentRequest(table="docs", id=first[0], doc=document(first)))
    assert (created.id, created.created, created.result) == (1, True, "created")
    lines = "\n".join(json.dumps({"insert": {"table": "docs", "id": row[0], "doc": document(row)}}) for row in rest)
    bulk = index.bulk(lines + "\n")
    assert bulk.errors is False and bulk.items[0]["bulk"]["created"] == len(rest)
    yield utils, index, search
    client.__exit__(None, None, None)


def ids(response) -> list[int]:
    return [hit.id for hit in response.hits.hits]


def test_sql_raw_answers_like_the_dbapi(served, apis):
    utils, _, _ = apis
    answer = utils.sql("SELECT id, title, year FROM docs WHERE year >= 2023 ORDER BY id").actual_instance
    with served.dbapi() as con:
        expected = con.execute("SELECT id, title, year FROM docs WHERE year >= 2023 ORDER BY id").fetchall()
    assert [tuple(row.values()) for row in answer[0]["data"]] == [tuple(r) for r in expected]
    assert answer[0]["total"] == len(expected)
    assert answer[0]["columns"][0] == {"id": {"type": "long long"}}


def test_sql_select_in_the_search_shape(apis):
    utils, _, _ = apis
    answer = utils.sql("SELECT id, title FROM docs WHERE team = 'web'", raw_response=False).actual_instance
    assert answer.hits["hits"] == [{"_id": 2, "_score": 1, "_source": {"title": "Web site"}}]


def test_full_text_search_equals_match(served, apis):
    _, _, search = apis
    found = search.search(SearchRequest(table="docs", query=SearchQuery(match={"title,body": "certificate"})))
    with served.dbapi() as con:
        expected = [r[0] for r in con.execute(
            "SELECT id FROM docs WHERE MATCH('@(title,body) (certificate)') ORDER BY weight() DESC, id").fetchall()]
    assert ids(found) == expected and expected
    assert found.hits.total == len(expected)
    assert all(isinstance(h.score, int) for h in found.hits.hits)
    assert found.hits.hits[0].source["title"] in ("Database operations", "Web site")


def test_bool_filters_equal_where(served, apis):
    _, _, search = apis
    query = SearchQuery(bool=BoolFilter(
        must=[QueryFilter(equals={"team": "ops"})],
        must_not=[QueryFilter(range={"year": {"lt": 2022}})],
        should=[QueryFilter(match={"body": "review"}), QueryFilter(match={"body": "backups"})]))
    found = search.search(SearchRequest(table="docs", query=query))
    with served.dbapi() as con:
        expected = [r[0] for r in con.execute(
            "SELECT id FROM docs WHERE MATCH('((@(body) (review)) | (@(body) (backups)))') AND team = 'ops' "
            "AND NOT (year < 2022) ORDER BY weight() DESC, id").fetchall()]
    assert sorted(ids(found)) == sorted(expected) == [1, 6]


def test_text_knn_equals_knn_sql(served, apis):
    _, _, search = apis
    found = search.search(SearchRequest(table="docs", knn=Knn(field="v", query=KnnQuery("how do I renew a TLS certificate"), k=3)))
    with served.dbapi() as con:
        expected = con.execute("SELECT id, knn_dist() FROM docs WHERE knn(v, 3, 'how do I renew a TLS certificate')").fetchall()
    assert [(h.id, h.knn_dist) for h in found.hits.hits] == [(i, pytest.approx(d)) for i, d in expected]
    assert len(set(ids(found))) == 3                 # one hit per document, never per chunk


def test_knn_with_a_filter(served, apis):
    _, _, search = apis
    found = search.search(SearchRequest(table="docs", knn=Knn(
        field="v", query=KnnQuery("certificate"), k=5, filter=QueryFilter(equals={"team": "office"}))))
    with served.dbapi() as con:
        expected = [r[0] for r in con.execute("SELECT id FROM docs WHERE knn(v, 5, 'certificate') AND team = 'office'")]
    assert ids(found) == expected and set(expected) == {3, 5}


def test_highlight(apis):
    _, _, search = apis
    found = search.search(SearchRequest(table="docs", query=SearchQuery(match={"body": "kitchen"}),
                                        highlight=Highlight(fields=HighlightFields(["body"]))))
    assert ids(found) == [3]
    assert found.hits.hits[0].highlight == {
        "body": ["Coffee is served at eight. The <strong>kitchen</strong> closes at six; label your food in the fridge."]}


def test_update_and_delete_equal_the_dbapi(served, apis):
    _, index, search = apis
    updated = index.update(UpdateDocumentRequest(table="docs", id=4, doc={"year": 2025}))
    assert updated.updated == 1
    by_query = index.update(UpdateDocumentRequest(table="docs", doc={"team": "people"},
                                                  query=QueryFilter(equals={"team": "office"})))
    assert by_query.updated == 2
    gone = index.delete(DeleteDocumentRequest(table="docs", id=6))
    assert gone.found is True and gone.result == "deleted"
    with served.dbapi() as con:
        rows = con.execute("SELECT id, team, year FROM docs ORDER BY id").fetchall()
    assert [tuple(r) for r in rows] == [(1, "ops", 2024), (2, "web", 2023), (3, "people", 2022), (4, "ops", 2025),
                                        (5, "people", 2024)]
    found = search.search(SearchRequest(table="docs", query=SearchQuery(equals={"team": "people"})))
    assert ids(found) == [3, 5]
