"""Manticore's JSON query language → one MATCH() text and one SQL condition with bound values: the
table of cases of engine/clients/http/query_dsl.py, and /search's SELECT (search_plan.py)."""
from __future__ import annotations

import pytest

from tesseradb.clients.http import query_dsl, search_plan
from tesseradb.clients.http.fields import RequestError
from tesseradb.clients.http.tables import Column, Table

TABLE = Table("docs", [Column("id", "bigint"), Column("title", "text", full_text=True),
                       Column("body", "text", full_text=True), Column("team", "string"), Column("year", "int"),
                       Column("v", "float_vector_array", model_backed=True, is_vector=True),
                       Column("e", "float_vector", is_vector=True)])

CASES = [
    ({"match": {"title": "rotate logs"}}, "@(title) (rotate | logs)", "", []),
    ({"match": {"title,body": {"query": "rotate logs", "operator": "and"}}}, "@(title,body) (rotate logs)", "", []),
    ({"match": {"_all": "x-ray (v2)"}}, r"(x\-ray | \(v2\))", "", []),
    ({"match": {"*": "a"}}, "(a)", "", []),
    ({"match_phrase": {"body": "log files"}}, '@(body) "log files"', "", []),
    ({"match_phrase": {"body": 'say "hi"'}}, '@(body) "say \\"hi\\""', "", []),
    ({"query_string": "rotat* -lunch"}, "(rotat* -lunch)", "", []),
    ({"match_all": {}}, "", "", []),
    ({"equals": {"team": "ops"}}, "", "`team` = ?", ["ops"]),
    ({"equals": {"team": None}}, "", "`team` IS NULL", []),
    ({"in": {"year": [2023, 2024]}}, "", "`year` IN (?, ?)", [2023, 2024]),
    ({"in": {"year": []}}, "", "1 = 0", []),
    ({"range": {"year": {"gte": 2023, "lt": 2025}}}, "", "(`year` >= ?) AND (`year` < ?)", [2023, 2025]),
    ({"range": {"id": {"lte": 10}}}, "", "`id` <= ?", [10]),
    ({"bool": {"must": [{"equals": {"team": "ops"}}, {"match": {"body": "backup"}}]}},
     "@(body) (backup)", "`team` = ?", ["ops"]),
    ({"bool": {"filter": [{"equals": {"team": "ops"}}], "must_not": [{"range": {"year": {"lt": 2022}}}]}},
     "", "(`team` = ?) AND (NOT (`year` < ?))", ["ops", 2022]),
    ({"bool": {"must": [{"match": {"body": "a"}}], "must_not": [{"match": {"body": "b"}}]}},
     "@(body) (a) -(@(body) (b))", "", []),
    ({"bool": {"should": [{"match": {"body": "a"}}, {"match_phrase": {"title": "b c"}}]}},
     '((@(body) (a)) | (@(title) "b c"))', "", []),
    ({"bool": {"should": [{"equals": {"team": "ops"}}, {"equals": {"team": "web"}}]}},
     "", "((`team` = ?) OR (`team` = ?))", ["ops", "web"]),
    ({"bool": {"must": {"equals": {"year": 2024}}}}, "", "`year` = ?", [2024]),
    ({"equals": {"team": "ops"}, "range": {"year": {"gt": 1}}}, "", "(`team` = ?) AND (`year` > ?)", ["ops", 1]),
]


@pytest.mark.parametrize("node, text, sql, params", CASES, ids=[str(i) for i in range(len(CASES))])
def test_query_cases(node, text, sql, params):
    got = query_dsl.compile_query(node, TABLE)
    assert (got.text, got.sql, got.params) == (text, sql, params)


ERRORS = [
    ({"wildcard": {"title": "a*"}}, "unknown full-text node 'wildcard'"),
    ({"match": {"team": "ops"}}, "query error: no field 'team' found in schema"),
    ({"match": {"title": "a", "body": "b"}}, '"match" property value should be an object with one field'),
    ({"match": {"title": {"query": "a", "operator": "xor"}}}, 'Unknown "operator" value'),
    ({"equals": {"v": 1}}, "attribute 'v' is a vector: it can't be filtered"),
    ({"equals": {"team": {"a": 1}}}, '"equals" filter expects a number, string or boolean value'),
    ({"in": {"year": 2024}}, "\"in\" filter of 'year' should be an array"),
    ({"range": {"year": {"between": [1, 2]}}}, "unknown range operator 'between': expected gt, gte, lt or lte"),
    ({"bool": {"must_have": []}}, 'unknown bool query type: "must_have"'),
    ({"bool": {"should": [{"match": {"body": "a"}}, {"equals": {"team": "ops"}}]}},
     "should can't mix full-text and attribute conditions: put the full-text clauses and the filters in "
     "separate should lists (a nested bool in must)"),
    ("team = 'ops'", '"query" property value should be an object'),
]


@pytest.mark.parametrize("node, message", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_query_errors(node, message):
    with pytest.raises(RequestError) as caught:
        query_dsl.compile_query(node, TABLE)
    assert caught.value.message == message


def test_search_select_binds_every_value():
    p = search_plan.plan({"table": "docs", "query": {"bool": {"must": [{"match": {"body": "o'brien; DROP"}},
                                                                       {"equals": {"team": "x' OR '1'='1"}}]}},
                          "knn": {"field": "v", "query": "renew TLS", "k": 3, "ef": 64},
                          "_source": ["title"], "limit": 5, "offset": 2}, TABLE)
    assert p.sql == ("SELECT `id`, `title`, knn_dist() AS `_knn_dist` FROM `docs` WHERE knn(`v`, ?, ?, {ef=?}) "
                     "AND MATCH(?) AND (`team` = ?) LIMIT ? OFFSET ?")
    assert p.params == [3, "renew TLS", 64, r"@(body) (o'brien; | DROP)", "x' OR '1'='1", 5, 2]


def test_search_defaults():
    p = search_plan.plan({"index": "docs", "query": {"match": {"title": "a"}}}, TABLE)
    assert p.sql == ("SELECT `id`, `title`, `body`, `team`, `year`, `e`, weight() AS `_weight` FROM `docs` "
                     "WHERE MATCH(?) ORDER BY `_weight` DESC, `id` ASC LIMIT ? OFFSET ?")
    assert p.params == ["@(title) (a)", 20, 0]


@pytest.mark.parametrize("source, names", [
    (False, []), ("title", ["title"]), (["t*", "year"], ["title", "team", "year"]), ({"excludes": ["body", "e"]}, ["title", "team", "year"]),
    ({"includes": ["*"], "excludes": ["title"]}, ["body", "team", "year", "v", "e"]),
])
def test_source(source, names):
    p = search_plan.plan({"table": "docs", "_source": source}, TABLE)
    assert [c.name for c in p.source] == names


def test_sort_and_hybrid():
    p = search_plan.plan({"table": "docs", "hybrid": {"query": "renew"}, "sort": ["_score", {"year": {"order": "asc"}}],
                          "query": {"equals": {"team": "ops"}}}, TABLE)
    assert "hybrid_match(?, `v`) AND (`team` = ?)" in p.sql
    assert p.sql.endswith("ORDER BY `_hybrid_score` DESC, `year` ASC LIMIT ? OFFSET ?")


@pytest.mark.parametrize("request_body, message", [
    ({"table": "docs", "knn": {"field": "e", "query": "text"}}, "knn field 'e' has no model_name: search it with query_vector"),
    ({"table": "docs", "knn": {"field": "v"}}, 'knn needs one of "query", "query_vector" or "doc_id"'),
    ({"table": "docs", "knn": {"field": "v", "query_vector": [1, "a"]}}, '"query_vector" property value should be an array of numbers'),
    ({"table": "docs", "knn": {"field": "v", "query": "a"}, "hybrid": {"query": "a"}}, '"hybrid" and "knn" cannot be used together'),
    ({"table": "docs", "sort": [{"v": "asc"}]}, "can't sort by the vector column 'v'"),
    ({"table": "docs", "sort": [{"year": "up"}]}, "sort order of 'year' should be asc or desc"),
    ({"table": "docs", "offset": -1}, '"offset" should not be negative'),
    ({"table": "docs", "passage": True}, '"passage" needs a "knn" or "hybrid" search on a model-backed column'),
    ({"table": "docs", "query": {"match": {"body": "a"}}, "highlight": {"fields": ["team"]}},
     "highlight: no full-text field 'team' in table 'docs'"),
])
def test_plan_errors(request_body, message):
    with pytest.raises(RequestError) as caught:
        search_plan.plan(request_body, TABLE)
    assert caught.value.message == message
