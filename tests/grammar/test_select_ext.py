"""grammar.select_ext: Manticore's SELECT extensions lifted on sqlglot's tokens (OPTION, MATCH('q'),
side names) without touching strings, comments or other statements."""
from __future__ import annotations

import pytest

from tesseradb import grammar
from tesseradb.grammar.errors import GrammarError


def test_option_list_with_numbers_strings_names_and_lists():
    stmt = grammar.parse("SELECT id FROM t WHERE MATCH('a') LIMIT 3 OPTION fusion_method='rrf', rank_constant=10, "
                         "x=-1.5, mode=fast, fusion_weights=(text=0.7, dense=3)")
    assert stmt.options == (("fusion_method", "rrf"), ("rank_constant", 10), ("x", -1.5), ("mode", "fast"),
                            ("fusion_weights", (("text", 0.7), ("dense", 3))))
    assert stmt.expr.args["limit"] is not None


@pytest.mark.parametrize("sql", ["SELECT id FROM t OPTION", "SELECT id FROM t OPTION a", "SELECT id FROM t OPTION a=",
                                 "SELECT id FROM t OPTION a=1 b=2", "SELECT id FROM t OPTION a=(b=1",
                                 "SELECT id FROM t OPTION a=-x"])
def test_bad_option_lists_are_syntax_errors(sql):
    with pytest.raises(GrammarError):
        grammar.parse(sql)


def test_words_inside_strings_and_other_statements_are_left_alone():
    stmt = grammar.parse("SELECT 'MATCH(x) OPTION a=1', \"knn(v) AS b\" FROM t")
    assert stmt.options == ()
    assert [e.this for e in stmt.expr.expressions] == ["MATCH(x) OPTION a=1", "knn(v) AS b"]
    stmt = grammar.parse("INSERT INTO t (body) VALUES ('see MATCH(x) AGAINST(y) OPTION z=1')")
    assert stmt.expr.expression.expressions[0].expressions[0].this == "see MATCH(x) AGAINST(y) OPTION z=1"


def test_side_names_only_in_where_and_mysql_match_against_kept():
    stmt = grammar.parse("SELECT MATCH(b) AGAINST('x') AS score FROM t WHERE MATCH('q') AS text AND knn(v, 2, 'q') AS d")
    sql = stmt.expr.sql()
    assert "AS score" in sql
    assert "_TESSERA_AS(_TESSERA_MATCH('q'), 'text') AND _TESSERA_AS(KNN(v, 2, 'q'), 'd')" in sql
