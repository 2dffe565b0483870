"""Long numeric vector literals are lifted out of SQL text into parameters (grammar/literals.py):
the statement means exactly what it meant; strings, comments, rows and IN lists are never touched."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tesseradb
from tesseradb.grammar import literals
from tesseradb.grammar.literals import MIN_VALUES, lift, scanned

DIMS = 24
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

floats = st.floats(min_value=-1e3, max_value=1e3, allow_nan=False, allow_infinity=False, width=32)
vectors = st.lists(floats, min_size=DIMS, max_size=DIMS)
spacing = st.sampled_from(["", " ", "  ", "\n", "\t "])
styles = st.sampled_from(["repr", "exp", "fixed", "int"])


def spell(v: float, style: str) -> str:
    """One number as a user might write it."""
    if style == "exp":
        return f"{v:.8e}"
    if style == "fixed":
        return f"{v:+.9f}"
    if style == "int" and float(v).is_integer():
        return str(int(v))
    return repr(float(v))


def literal(vec, style, space) -> str:
    return "(" + ("," + space).join(spell(v, style) for v in vec) + space + ")"


@pytest.fixture(scope="module")
def con():
    c = tesseradb.connect(":memory:")
    c.execute(f"CREATE TABLE t (tag int, v float_vector knn_type='hnsw' knn_dims='{DIMS}' hnsw_similarity='l2', "
              f"a float_vector_array knn_type='hnsw' knn_dims='{DIMS}' hnsw_similarity='cosine')")
    rng = np.random.default_rng(0)
    rows = [(i, i % 4, rng.standard_normal(DIMS).tolist(), rng.standard_normal((2, DIMS)).tolist()) for i in range(1, 200)]
    c.executemany("INSERT INTO t (id, tag, v, a) VALUES (?, ?, ?, ?)", rows)
    c.commit()
    yield c
    c.close()


# ---- equivalence with parameters, through the engine ----------------------------------------------

@FAST
@given(vec=vectors, style=styles, space=spacing, k=st.integers(1, 8))
def test_a_knn_literal_finds_what_the_parameter_finds(con, vec, style, space, k):
    text = literal(vec, style, space)
    values = [float(n) for n in text.strip("() \n\t").split(",")]
    got = con.execute(f"SELECT id, knn_dist() FROM t WHERE knn(v, {k}, {text}) AND tag < ?", (3,)).fetchall()
    want = con.execute("SELECT id, knn_dist() FROM t WHERE knn(v, ?, ?) AND tag < ?", (k, values, 3)).fetchall()
    assert got == want


@FAST
@given(vecs=st.lists(vectors, min_size=1, max_size=3), style=styles, space=spacing)
def test_inserted_literals_store_what_parameters_store(con, vecs, style, space):
    single = literal(vecs[0], style, space)
    array = "[" + ",".join("[" + ",".join(spell(v, style) for v in vec) + "]" for vec in vecs) + "]"
    con.execute("BEGIN")
    try:
        con.execute(f"INSERT INTO t (id, tag, v, a) VALUES (10001, 1, {single}, {array}), (10002, 2, {single}, [])")
        con.execute("INSERT INTO t (id, tag, v, a) VALUES (?, ?, ?, ?)",
                    (10003, 1, [float(n) for n in single.strip("() \n\t").split(",")],
                     [[float(spell(v, style)) for v in vec] for vec in vecs]))
        stored = con.execute("SELECT id, TO_STRING(v), TO_STRING(a) FROM t WHERE id IN (10001, 10003) ORDER BY id").fetchall()
        assert stored[0][1:] == stored[1][1:]
        assert con.execute("SELECT LENGTH(a) FROM t WHERE id = 10002").fetchone() == (0,)
    finally:
        con.rollback()


# ---- what the scanner leaves alone --------------------------------------------------------------

@FAST
@given(vec=vectors, style=styles, space=spacing, wrap=st.sampled_from(["'{}'", '"{}"', "`{}`", "/* {} */", "-- {}\n", "# {}\n"]))
def test_strings_identifiers_and_comments_are_untouched(vec, style, space, wrap):
    text = literal(vec, style, space)
    sql = f"SELECT id FROM t WHERE knn(v, 3, {literal(vec, style, space)}) AND x = {wrap.format('x, ' + text)}"
    lifted, params = lift(sql)
    assert lifted.startswith("SELECT id FROM t WHERE knn(v, 3, ?) AND x = ") and lifted.endswith(wrap.format("x, " + text))
    assert len(params) == 1 and len(params[0]) == DIMS


@pytest.mark.parametrize("sql", [
    "INSERT INTO t VALUES {v}",                       # a row of VALUES
    "INSERT INTO t VALUES (1, 2), {v}",               # a later row
    "SELECT * FROM t WHERE id IN {v}",                # an IN list
    "SELECT GREATEST{v}",                             # a function's own argument list
    "SELECT * FROM t WHERE knn(v, 3, (1, 2, 3))",     # too short to matter
    "SELECT * FROM t WHERE knn(v, 3, (1, 2, x{rest}))",   # not all numbers
    "SELECT * FROM t WHERE knn(v, 3, (1, 2, 0x1F{rest}))",
    "SELECT * FROM t WHERE knn(v, 3, (1, 2, 1e{rest}))",
    "SELECT * FROM t WHERE knn(v, 3, (1, , 2{rest}))",
])
def test_rows_in_lists_and_non_numbers_stay(sql):
    v = "(" + ", ".join(str(i) for i in range(MIN_VALUES + 4)) + ")"
    rest = ", 0" * MIN_VALUES
    text = sql.format(v=v, rest=rest)
    assert lift(text, None) == (text, None)


def test_positional_parameters_keep_their_order():
    v = "(" + ", ".join(["0.5"] * MIN_VALUES) + ")"
    sql, params = lift(f"SELECT ? FROM t WHERE knn(v, ?, {v}) AND tag = ? AND knn_dist() < ?", ["a", 3, 1, 9.0])
    assert sql == "SELECT ? FROM t WHERE knn(v, ?, ?) AND tag = ? AND knn_dist() < ?"
    assert params == ["a", 3, [0.5] * MIN_VALUES, 1, 9.0]


def test_named_parameters_get_named_placeholders():
    v = "(" + ", ".join(["1"] * MIN_VALUES) + ")"
    sql, params = lift(f"SELECT id FROM t WHERE knn(v, :k, {v})", {"k": 2})
    assert sql == "SELECT id FROM t WHERE knn(v, :k, :_tessera_lit0)"
    assert params == {"k": 2, "_tessera_lit0": [1.0] * MIN_VALUES}


def test_mixed_parameter_styles_are_left_to_the_parser(con):
    v = "(" + ", ".join(["1"] * DIMS) + ")"
    sql = f"SELECT id FROM t WHERE knn(v, :k, {v}) AND tag = ?"
    assert lift(sql, [1]) == (sql, [1])
    with pytest.raises(tesseradb.ProgrammingError, match="mix"):
        con.execute(sql, [1])


def test_a_bad_literal_gets_the_same_error_as_before(con):
    short = "(" + ", ".join(["0.1"] * (DIMS - 1)) + ")"
    with pytest.raises(tesseradb.Error, match=f"{DIMS}"):
        con.execute(f"SELECT id FROM t WHERE knn(v, 3, {short})")


@settings(max_examples=300, deadline=None)
@given(text=st.text(st.sampled_from(list("(),[]'\"`-#/*?:;.eE+0123456789 \nabIN")), max_size=300),
       params=st.sampled_from([None, [1, 2], {"a": 1}]))
def test_any_text_is_scanned_without_error(text, params):
    sql, bound = lift(text, params)
    assert sql == text or "?" in sql or ":_tessera_lit" in sql


# -- knn() query texts (issue 28): lifted, so a driver's interpolated texts reuse one plan ----------
@pytest.mark.parametrize("sql, lifted, value", [
    ("SELECT id FROM d WHERE knn(v, 5, 'rotate the certificate')", "SELECT id FROM d WHERE knn(v, 5, ?)",
     "rotate the certificate"),
    ("SELECT id FROM d WHERE KNN ( v , 'it''s \\'quoted\\'' )", "SELECT id FROM d WHERE KNN ( v , ? )",
     "it's 'quoted'"),
    ("SELECT id FROM d WHERE knn(v, 5, 'a\\nb') AND tag = 'x'", "SELECT id FROM d WHERE knn(v, 5, ?) AND tag = 'x'",
     "a\nb"),
])
def test_a_knn_text_is_lifted_into_a_parameter(sql, lifted, value):
    assert lift(sql) == (lifted, [value])


@pytest.mark.parametrize("sql", [
    "SELECT 'knn(v, 5, ''x'')' AS a",                             # inside a string
    "SELECT id FROM d WHERE MATCH('knn(v, 5, x)')",
    "SELECT id FROM d WHERE knn(v, 5, 'a' 'b')",                  # not the whole argument
    "SELECT id FROM d WHERE knn(v, 5, CONCAT('a', 'b'))",         # an expression
    "SELECT id FROM d WHERE other(v, 5, 'text')",
    "SELECT id FROM d /* knn(v, 5, 'x') */ WHERE tag = 'x'",
    "SELECT id, knn_dist() FROM d WHERE knn(v, 5, :q) AND tag = 'x'",
])
def test_other_strings_stay_in_the_text(sql):
    assert lift(sql)[0] == sql


def test_a_lifted_text_merges_with_the_callers_parameters():
    assert lift("SELECT id FROM d WHERE tag = ? AND knn(v, ?, 'q') AND n > ?", [1, 2, 3]) == (
        "SELECT id FROM d WHERE tag = ? AND knn(v, ?, ?) AND n > ?", [1, 2, "q", 3])


def test_texts_interpolated_by_a_driver_share_one_cached_plan():
    c = tesseradb.connect(":memory:")
    c.execute("CREATE TABLE d (body text, v float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
              "model_name='Xenova/all-MiniLM-L6-v2' from='body' chunk_strategy='recursive' max_tokens='64')")
    c.executemany("INSERT INTO d (id, body) VALUES (?, ?)",
                  [(1, "rotate the replication certificate"), (2, "flush the binary logs"), (3, "it's a trap")])
    cache = c.db.statements
    answers = {}
    from pymysql.converters import escape_string      # what a driver interpolating parameters sends
    for text in ["certificate rotation", "binary log flushing", "it's a trap", "a \\ 'quoted' \"text\"\n"]:
        cur = c.execute(f"SELECT id, knn_dist() AS d FROM d WHERE knn(v, 1, '{escape_string(text)}')")
        answers[text] = cur.fetchall()
        assert [d[0] for d in cur.description] == ["id", "d"]
    assert list(cache._parsed) == ["SELECT id, knn_dist() AS d FROM d WHERE knn(v, 1, ?)"]   # one statement
    assert answers["certificate rotation"][0][0] == 1 and answers["binary log flushing"][0][0] == 2
    assert answers["it's a trap"][0][0] == 3
    same = c.execute("SELECT id, knn_dist() AS d FROM d WHERE knn(v, 1, ?)", ("it's a trap",)).fetchall()
    assert same == answers["it's a trap"]
    c.close()


@FAST
@given(st.text(max_size=40))
def test_a_lifted_text_is_exactly_what_the_driver_escaped(text):
    from pymysql.converters import escape_string
    sql = f"SELECT id FROM d WHERE knn(v, 3, '{escape_string(text)}')"
    lifted, params = lift(sql)
    assert (lifted, params) == ("SELECT id FROM d WHERE knn(v, 3, ?)", [text])


# The shortcut for what a text-protocol client sends (one plain knn() text) must lift exactly what the
# scanner lifts, or leave the text to it.
AROUND = ["SELECT id FROM d WHERE", "SELECT id, knn_dist() FROM d WHERE", "AND tag = 1", "AND tag = 'x'", "LIMIT 5",
          "OR", "x.knn(v, 3, 'q')", "myknn(v, 3, 'q')", "1knn(v, 3, 'q')", "f([1, 2])", "(1, 2)", "?", ":name",
          "-- c\n", "# c\n", "/* c */", '"dq"', "`bq`", "\\", "[", ",", "(", ")", "knn(", "'", "ORDER BY id"]
CALLS = ["knn(v, 10, {t})", "KNN ( v , 3 , {t} )", "knn(v,{t})", "knn(v, {t}, 5)", "knn(t.v, 3, {t})",
         "knn(v, -1, {t})", "knn(v, 10, {t} || 'x')", "knn(v, 10, ({t}))", "knn(`v`, 10, {t})", "knn(v, ?, {t})"]
TEXTS = (st.text(st.sampled_from(list("abc ?:;,()[]#-/*\né")), max_size=12)         # plain: the shortcut's
         | st.text(st.sampled_from(list("abc ?:;,()[]#-/*\"`'\\\né")), max_size=12))


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.sampled_from(AROUND), max_size=3), st.sampled_from(CALLS), TEXTS,
       st.lists(st.sampled_from(AROUND), max_size=3), st.sampled_from([None, (), [], [1], {}, {"a": 1}]))
def test_the_knn_text_shortcut_lifts_what_the_scanner_lifts(before, call, text, after, params):
    sql = " ".join(before + [call.format(t="'" + text + "'")] + after)
    assert lift(sql, params) == scanned(sql, params)


def test_a_plain_knn_text_takes_the_shortcut():
    sql = "SELECT id FROM manual WHERE knn(v, 10, 'How do I set up replication? (and: why)') LIMIT 3"
    assert literals._one_knn_text(sql, None) == ("SELECT id FROM manual WHERE knn(v, 10, ?) LIMIT 3",
                                                 ["How do I set up replication? (and: why)"])
