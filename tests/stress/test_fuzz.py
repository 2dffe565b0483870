"""Bad input: thousands of malformed statements, parameters and literals.

Only ``tesseradb.Error`` subclasses may escape, and never an ``InternalError`` (that is an unexpected
Python exception wrapped at the boundary: a bug); nothing may hang (every statement runs under a
watchdog, and the connection has a statement timeout); afterwards the database is consistent
(CHECK TABLE OK, knn agrees with the rows).

Two fuzzers: a mutation fuzzer over a corpus of valid statements (seeded, so a failure reproduces)
and hypothesis strategies that build statements from SQL pieces with arbitrary literals. Plus the
fixed extremes: NUL bytes, lone surrogates, invalid UTF-8 bytes, huge literals, deep nesting, a 2 MB
document with a model column, NaN/inf in vectors.

TESSERA_FUZZ_CASES sets the number of mutation cases (default 6000), TESSERA_FUZZ_EXAMPLES the
hypothesis examples per strategy (default 1000), TESSERA_FUZZ_SEED the mutation fuzzer's seed.
"""
from __future__ import annotations

import math
import os
import random
import resource
import signal
import time
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tesseradb
from tesseradb import errors
from stress_plan import MODEL

pytestmark = pytest.mark.stress

CASES = int(os.environ.get("TESSERA_FUZZ_CASES", "6000"))
EXAMPLES = int(os.environ.get("TESSERA_FUZZ_EXAMPLES", "1000"))
WATCHDOG = 180          # seconds one statement may take before the test calls it a hang

SCHEMA = [
    "CREATE TABLE docs (title text, body text, n int, f float, flag bool, meta json, ts timestamp, "
    "v float_vector knn_type='hnsw' knn_dims='4' hnsw_similarity='l2', "
    "a float_vector_array knn_type='hnsw' knn_dims='3' hnsw_similarity='cosine', "
    f"c float_vector_array knn_type='hnsw' hnsw_similarity='cosine' model_name='{MODEL}' from='title,body' "
    "chunk_strategy='recursive' max_tokens='32' max_chunks='4')",
    "CREATE TABLE plain (name string, qty bigint, price float)",
]

CORPUS: list[tuple[str, object]] = [
    ("SELECT id, title, n FROM docs WHERE n > 2 ORDER BY id LIMIT 5", None),
    ("SELECT id, knn_dist() FROM docs WHERE knn(v, 3, (0.1, 0.2, 0.3, 0.4))", None),
    ("SELECT id FROM docs WHERE knn(a, 2, (1, 0, 0)) AND flag = 1", None),
    ("SELECT id, knn_dist() FROM docs WHERE knn(c, 5, 'rotating certificates')", None),
    ("SELECT id FROM docs WHERE knn(c, 2, 'query', {ef=50})", None),
    ("SELECT id FROM docs WHERE knn(v, 2, 3)", None),
    ("SELECT id FROM docs WHERE knn(v, ?, ?)", (2, [1.0, 2.0, 3.0, 4.0])),
    ("SELECT LENGTH(c), LENGTH(v) FROM docs WHERE id = ?", (1,)),
    ("SELECT COUNT(*), SUM(n), AVG(f), MAX(title) FROM docs GROUP BY flag HAVING COUNT(*) > 0", None),
    ("SELECT d.id, p.qty FROM docs d JOIN plain p ON p.qty = d.n WHERE d.title LIKE 'd%'", None),
    ("SELECT id FROM docs WHERE id IN (SELECT qty FROM plain) OR meta IS NOT NULL", None),
    ("SELECT JSON_EXTRACT(meta, '$.k'), CONCAT(title, '-', n), UPPER(body) FROM docs", None),
    ("SELECT CASE WHEN n > 1 THEN 'big' ELSE 'small' END, COALESCE(f, 0) FROM docs", None),
    ("SELECT id, weight(), HIGHLIGHT() FROM docs WHERE MATCH('body | title -zzz') AND n > 0", None),
    ("SELECT id FROM docs WHERE MATCH(?)", ("@title \"new doc\" | tex*",)),
    ("SELECT id, SNIPPET(body, ?) FROM docs WHERE MATCH(title, body) AGAINST(? IN BOOLEAN MODE)", ("text", "+body -x")),
    ("SELECT id, hybrid_score() FROM docs WHERE MATCH('text') AS t AND knn(v, 3, (0.1, 0.2, 0.3, 0.4)) AS d "
     "OPTION fusion_method='rrf', fusion_weights=(t=2)", None),
    ("SELECT id, hybrid_score(), weight(), knn_dist() FROM docs WHERE hybrid_match(?, c) LIMIT 3", ("certificates",)),
    ("DELETE FROM docs WHERE MATCH('replaced')", None),
    ("INSERT INTO docs (title, body, n, f, flag, meta, ts, v, a) VALUES "
     "('new doc', 'body text here', 7, 1.5, 1, '{\"k\": 2}', '2024-01-02 03:04:05', (1, 2, 3, 4), [[1, 2, 3], [3, 2, 1]])", None),
    ("INSERT INTO docs (title, body, n, v) VALUES (?, ?, ?, ?)", ("t", "b", 3, [0.5, 0.5, 0.5, 0.5])),
    ("INSERT INTO docs (title, body) VALUES ('only text', 'embedded by the model')", None),
    ("INSERT INTO docs (title, a) VALUES (?, ?)", ("arr", [[1.0, 0.0, 0.0]])),
    ("REPLACE INTO docs (id, title, body, v) VALUES (2, 'replaced', 'again', (4, 3, 2, 1))", None),
    ("UPDATE docs SET title = 'changed', n = n + 1 WHERE id = 3", None),
    ("UPDATE docs SET v = (9, 9, 9, 9) WHERE id = ?", (4,)),
    ("UPDATE docs SET body = ? WHERE n < ?", ("new body for the model", 3)),
    ("DELETE FROM docs WHERE id = ?", (5,)),
    ("DELETE FROM plain WHERE qty > 100", None),
    ("INSERT INTO plain (name, qty, price) VALUES ('a', 1, 2.5), ('b', 2, NULL)", None),
    ("INSERT INTO plain (name, qty) SELECT title, n FROM docs", None),
    ("UPDATE plain SET price = price * 2 WHERE name = :name", {"name": "a"}),
    ("SHOW TABLES", None),
    ("SHOW TABLES LIKE 'd%'", None),
    ("DESCRIBE docs", None),
    ("SHOW CREATE TABLE docs", None),
    ("SHOW WARNINGS", None),
    ("EXPLAIN SELECT id FROM docs WHERE knn(v, 2, (1, 1, 1, 1))", None),
    ("CHECK TABLE docs", None),
    ("OPTIMIZE TABLE docs", None),
    ("ALTER TABLE plain ADD COLUMN note text", None),
    ("CREATE TABLE IF NOT EXISTS extra (x int, w float_vector knn_type='hnsw' knn_dims='2' hnsw_similarity='ip')", None),
    ("CREATE TABLE IF NOT EXISTS chunky (t text, e float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
     f"model_name='{MODEL}' from='t' chunk_strategy='sentence' max_tokens='16' overlap_tokens='4')", None),
    ("DROP TABLE IF EXISTS extra", None),
    ("BEGIN", None),
    ("COMMIT", None),
    ("ROLLBACK", None),
]

TOKENS = ["'", '"', "`", "(", ")", "[", "]", "{", "}", ",", ";", "?", ":a", ":name", "NULL", "0", "-1",
          "1e309", "-1e309", "9" * 30, "0x7fffffffffffffff", "nan", "inf", "-0.0", "1e-400", "\x00", "'\x00'",
          "\udc80", "\ud800", "é", "\U0001f600", "\\", "/*", "*/", "--", "#", "knn(", "knn(v,", "SELECT",
          "FROM", "WHERE", "AND", "OR", "NOT", "IN", "LIKE", "BETWEEN", "UNION", "ORDER BY", "LIMIT",
          "GROUP BY", "id", "docs", "plain", "c", "v", "a", "title", "knn_dist()", "LENGTH(c)", "*", "+", "-",
          "/", "%", "=", "<>", "!=", "<=", ">", "||", "&&", "CASE", "END", "(SELECT 1)", "{ef=0}",
          "{ef=-1}", "{foo=1}", "[[]]", "[]", "()", "((1,2),(3,4))", "model_name=", "knn_dims='0'",
          "chunk_strategy='paragraph'", " ", "\n", "\t", "TABLE", "INTO", "VALUES", "SET", "DEFAULT",
          "IF EXISTS", "PRIMARY KEY", "AUTO_INCREMENT", "@@version", "$1", "%s",
          "MATCH(", "MATCH('", "AGAINST(", "weight()", "hybrid_score()", "hybrid_match(", "HIGHLIGHT(", "SNIPPET(",
          "OPTION", "fusion_method='rrf'", "field_weights=(", "AS text", "@title", "NEAR/2", "\"a b\"~2"]

NUMBERS = ["0", "-1", "1", "2147483648", "9223372036854775807", "9223372036854775808", "-9223372036854775809",
           "1e308", "1e309", "-1e309", "3.4e38", "3.5e38", "1e-45", "0.0", "-0.0", "NaN", "Infinity",
           "99999999999999999999999999999999999999", "0.1e", "1..2", "0x", "1_000"]

STRINGS = ["", "\x00", "a\x00b", "'", "''", "\\'", "\udc80", "é\u0301", "\U0001f600" * 10, "x" * 100_000,
           "%", "_", "\r\n", "SELECT", "{\"k\": [1, 2, {}]}", "[1, 2, 3]", "2024-02-30 25:61:61"]

PARAMS = [None, True, False, 0, -1, 2 ** 63 - 1, 2 ** 63, -2 ** 63 - 1, 2 ** 200, 1e308, float("nan"),
          float("inf"), -float("inf"), "", "\x00", "a\udc80b", "\ud800", "é", "x" * 50_000, b"", b"\xff\xfe\x00",
          bytearray(b"\x80"), memoryview(b"abc"), [], [1, 2], [1.0, 2.0, 3.0, 4.0], [float("nan")] * 4,
          [float("inf"), 0, 0, 0], [[1, 2, 3]], [[]], [[1, 2], [3]], [1e39, 0, 0, 0], ["a", "b", "c", "d"],
          {"a": 1}, {}, (1, 2), object(), 1 + 2j, Ellipsis, set()]


class Hang(BaseException):
    """Raised by the watchdog: a statement ran longer than WATCHDOG seconds."""


def _alarm(signum, frame):
    raise Hang(f"statement still running after {WATCHDOG}s")


class Runner:
    """Runs statements, sorts what comes back, and fails on anything but a clean engine error."""

    def __init__(self, con):
        self.con = con
        self.outcomes: Counter[str] = Counter()
        self.failures: list[str] = []
        self.cases = 0
        self.slowest = (0.0, "")

    def run(self, sql: str, params=None, many: bool = False) -> None:
        self.cases += 1
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(WATCHDOG)
        start = time.perf_counter()
        try:
            if many:
                self.con.executemany(sql, params)
            else:
                cur = self.con.execute(sql, params)
                if cur.description is not None:
                    cur.fetchall()
            self.outcomes["ok"] += 1
        except errors.InternalError as exc:
            self.failures.append(f"InternalError for {sql[:300]!r} {_short(params)}: {exc}")
        except tesseradb.Error as exc:
            self.outcomes[type(exc).__name__] += 1
        except Hang as exc:
            self.failures.append(f"HANG for {sql[:300]!r} {_short(params)}: {exc}")
            self.con.interrupt()
        except BaseException as exc:  # noqa: BLE001 - the point of the test
            self.failures.append(f"{type(exc).__name__} escaped for {sql[:300]!r} {_short(params)}: {exc}")
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, old)
            took = time.perf_counter() - start
            if took > self.slowest[0]:
                self.slowest = (took, sql[:120])


def _short(params) -> str:
    text = repr(params)
    return text if len(text) < 200 else text[:200] + "..."


def _open(path: str):
    con = tesseradb.connect(path, statement_timeout=60)
    for sql in SCHEMA:
        con.execute(sql)
    con.executemany("INSERT INTO docs (id, title, body, n, f, flag, meta, v, a) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [(i, f"document {i}", f"body of document {i} about topic {i % 3}", i, i / 2, i % 2,
                      f'{{"k": {i}}}', [i, 1.0, 2.0, 3.0], [[1.0, float(i), 0.0]] * (i % 3)) for i in range(1, 9)])
    con.executemany("INSERT INTO plain (name, qty, price) VALUES (?, ?, ?)", [(f"p{i}", i, i * 1.5) for i in range(1, 6)])
    con.commit()
    return con


def _consistent(con) -> None:
    """CHECK TABLE OK on every table, and knn returns exactly the rows that have vectors."""
    if con.in_transaction:
        con.rollback()
    for (table,) in con.execute("SHOW TABLES").fetchall():
        status = con.execute(f"CHECK TABLE `{table}`").fetchall()
        assert status[-1][2:] == ("status", "OK"), status
    if "docs" not in {t for (t,) in con.execute("SHOW TABLES").fetchall()}:
        return
    rows = {r[0]: r[1:] for r in con.execute("SELECT id, LENGTH(v), LENGTH(a), LENGTH(c) FROM docs")}
    k = len(rows) + 5
    for col, pos, query in (("v", 0, "(0, 0, 0, 0)"), ("a", 1, "(1, 1, 1)"), ("c", 2, "'anything'")):
        want = {i for i, lens in rows.items() if lens[pos]}
        found = {r[0] for r in con.execute(f"SELECT id FROM docs WHERE knn({col}, {k}, {query})")}
        assert found == want, (col, sorted(found ^ want))


# -- the mutation fuzzer ----------------------------------------------------------------------------
def _mutate(rng: random.Random, sql: str) -> str:
    ops = rng.randint(1, 3)
    for _ in range(ops):
        kind = rng.randrange(9)
        n = len(sql)
        i, j = sorted((rng.randint(0, n), rng.randint(0, n)))
        if kind == 0 and n:                                   # delete a span
            sql = sql[:i] + sql[min(j, i + 20):]
        elif kind == 1:                                       # insert a token
            sql = sql[:i] + rng.choice(TOKENS) + sql[i:]
        elif kind == 2:                                       # replace a number
            digits = [k for k, ch in enumerate(sql) if ch.isdigit()]
            if digits:
                k = rng.choice(digits)
                end = k
                while end < n and (sql[end].isdigit() or sql[end] == "."):
                    end += 1
                sql = sql[:k] + rng.choice(NUMBERS) + sql[end:]
        elif kind == 3:                                       # replace a string literal's content
            quotes = [k for k, ch in enumerate(sql) if ch == "'"]
            if len(quotes) >= 2:
                a = rng.randrange(len(quotes) - 1)
                s = rng.choice(STRINGS).replace("'", "''") if rng.random() < 0.7 else rng.choice(STRINGS)
                sql = sql[:quotes[a] + 1] + s + sql[quotes[a + 1]:]
        elif kind == 4 and n:                                 # duplicate a span
            sql = sql[:j] + sql[i:min(j, i + 40)] + sql[j:]
        elif kind == 5:                                       # swap two words
            words = sql.split(" ")
            if len(words) > 2:
                a, b = rng.randrange(len(words)), rng.randrange(len(words))
                words[a], words[b] = words[b], words[a]
                sql = " ".join(words)
        elif kind == 6:                                       # splice with another statement
            other = rng.choice(CORPUS)[0]
            sql = sql[:i] + other[rng.randint(0, len(other)):]
        elif kind == 7:                                       # truncate
            sql = sql[:i]
        else:                                                 # a random character
            sql = sql[:i] + chr(rng.choice([0, 1, 7, 0x7f, 0x85, 0xa0, 0x2028, 0xfeff, 0xd800, 0xdfff,
                                            rng.randint(0, 0x10ffff)])) + sql[i:]
    return sql


def _mutate_params(rng: random.Random, params):
    if params is None or rng.random() < 0.2:
        count = rng.randint(0, 4)
        return None if count == 0 and rng.random() < 0.5 else [rng.choice(PARAMS) for _ in range(count)]
    if isinstance(params, dict):
        return {k: rng.choice(PARAMS) for k in params} if rng.random() < 0.8 else {"zz": 1}
    out = list(params)
    if out:
        out[rng.randrange(len(out))] = rng.choice(PARAMS)
    return out


def test_mutation_fuzzer(tmp_path):
    con = _open(str(tmp_path / "fuzz.db"))
    runner = Runner(con)
    rng = random.Random(int(os.environ.get("TESSERA_FUZZ_SEED", "7")))
    start = time.perf_counter()
    for case in range(CASES):
        sql, params = rng.choice(CORPUS)
        roll = rng.random()
        if roll < 0.55:
            sql = _mutate(rng, sql)
        elif roll < 0.85:
            params = _mutate_params(rng, params)
        else:
            sql, params = _mutate(rng, sql), _mutate_params(rng, params)
        if rng.random() < 0.1:                     # executemany: several parameter sets, some bad
            runner.run(sql, [params] + [_mutate_params(rng, params) for _ in range(rng.randint(0, 3))], many=True)
            continue
        runner.run(sql, params)
        if case % 200 == 199:
            con.commit() if rng.random() < 0.7 else con.rollback()
    seconds = time.perf_counter() - start
    assert not runner.failures, "\n".join(runner.failures[:30])
    _consistent(con)
    con.close()
    print(f"\nmutation fuzzer: {runner.cases} cases in {seconds:.1f}s, outcomes {dict(runner.outcomes)}, "
          f"slowest {runner.slowest[0]:.2f}s ({runner.slowest[1]!r})")


# -- hypothesis ---------------------------------------------------------------------------------------
any_text = st.text(st.characters(codec=None, exclude_categories=()), max_size=40)
literal = st.one_of(
    st.integers().map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    any_text.map(lambda s: "'" + s.replace("'", "''") + "'"),
    any_text.map(lambda s: "'" + s + "'"),
    st.sampled_from(["NULL", "TRUE", "FALSE", "''", "'\x00'", "x'ff'", "X'00FF'"]),
)
column = st.sampled_from(["id", "title", "body", "n", "f", "flag", "meta", "ts", "v", "a", "c", "nope", "`id`",
                          "docs.id", "knn_dist()", "LENGTH(c)"])
expr = st.recursive(
    st.one_of(literal, column),
    lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from(["+", "-", "*", "/", "%", "=", "<>", "<", ">=", "AND", "OR", "||",
                                          "LIKE", "IS", "IS NOT"]), inner).map(" ".join),
        inner.map(lambda e: f"({e})"),
        inner.map(lambda e: f"NOT {e}"),
        st.tuples(st.sampled_from(["ABS", "LENGTH", "UPPER", "COALESCE", "CONCAT", "JSON_EXTRACT", "ROUND",
                                   "SUBSTR", "CAST", "knn", "MAX", "COUNT", "nosuchfn"]),
                  st.lists(inner, max_size=3)).map(lambda t: f"{t[0]}({', '.join(t[1])})"),
    ),
    max_leaves=12,
)
vector = st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True).map(repr), literal), max_size=6) \
    .map(lambda xs: "(" + ", ".join(xs) + ")")
statement = st.one_of(
    st.tuples(expr, expr).map(lambda t: f"SELECT {t[0]} FROM docs WHERE {t[1]}"),
    st.tuples(st.sampled_from(["v", "a", "c"]), literal, st.one_of(vector, literal))
      .map(lambda t: f"SELECT id, knn_dist() FROM docs WHERE knn({t[0]}, {t[1]}, {t[2]})"),
    st.tuples(literal, literal, vector)
      .map(lambda t: f"INSERT INTO docs (title, n, v) VALUES ({t[0]}, {t[1]}, {t[2]})"),
    st.tuples(st.lists(vector, max_size=3), literal)
      .map(lambda t: f"INSERT INTO docs (title, a) VALUES ({t[1]}, [{', '.join(x.strip('()').join('[]') for x in t[0])}])"),
    st.tuples(column, expr, expr).map(lambda t: f"UPDATE docs SET {t[0]} = {t[1]} WHERE {t[2]}"),
    expr.map(lambda e: f"DELETE FROM plain WHERE {e}"),
    st.tuples(literal, literal).map(lambda t: f"INSERT INTO plain (name, qty) VALUES ({t[0]}, {t[1]})"),
    st.tuples(any_text, st.sampled_from(["text", "int", "float_vector", "json", "varchar(10)", "blob"]),
              any_text, any_text)
      .map(lambda t: f"CREATE TABLE IF NOT EXISTS h_{abs(hash(t[0])) % 5} (x {t[1]} knn_type='{t[2]}' "
                     f"knn_dims='{t[3]}' hnsw_similarity='l2')"),
    any_text,
)
param_value = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True),
                        any_text, st.binary(max_size=20),
                        st.lists(st.floats(allow_nan=True, allow_infinity=True), max_size=5),
                        st.lists(st.lists(st.floats(), max_size=4), max_size=3))


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    con = _open(str(tmp_path_factory.mktemp("hyp") / "hyp.db"))
    runner = Runner(con)
    yield runner
    con.close()


@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(sql=statement)
def test_hypothesis_statements(shared, sql):
    shared.run(sql)
    assert not shared.failures, shared.failures[-1]


@settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(sql=st.sampled_from([s for s, _ in CORPUS]), params=st.one_of(
    st.none(), st.lists(param_value, max_size=5), st.dictionaries(st.sampled_from(["name", "a", "p1"]), param_value)))
def test_hypothesis_parameters(shared, sql, params):
    shared.run(sql, params)
    assert not shared.failures, shared.failures[-1]


def test_hypothesis_leaves_the_database_consistent(shared):
    _consistent(shared.con)
    print(f"\nhypothesis: {shared.cases} cases, outcomes {dict(shared.outcomes)}, "
          f"slowest {shared.slowest[0]:.2f}s ({shared.slowest[1]!r})")


# -- the extremes -----------------------------------------------------------------------------------
EXTREMES: list[tuple[str, object]] = [
    ("SELECT " + "(" * depth + "1" + ")" * depth, None) for depth in (10, 100, 500, 1000, 5000, 50_000)
] + [
    ("SELECT " + "-" * 5000 + "1", None),
    ("SELECT " + " + ".join(["1"] * 20_000), None),
    ("SELECT " + "NOT " * 10_000 + "1", None),
    ("SELECT " + "ABS(" * 3000 + "1" + ")" * 3000, None),
    ("SELECT " + "(SELECT " * 500 + "1" + ")" * 500, None),
    ("SELECT id FROM docs WHERE " + " OR ".join(f"id = {i}" for i in range(5000)), None),
    ("SELECT id FROM docs WHERE id IN (" + ",".join(str(i) for i in range(20_000)) + ")", None),
    ("SELECT " + "9" * 1_000_000, None),
    ("SELECT '" + "x" * 10_000_000 + "'", None),
    ("SELECT x'" + "ab" * 1_000_000 + "'", None),
    ("SELECT '\x00\x00\x00'", None),
    ("SELECT 'a\x00b' = ?", ("a\x00b",)),
    ("\x00SELECT 1", None),
    ("SELECT 1\x00; DROP TABLE docs", None),
    ("SELECT 1; DROP TABLE docs", None),
    ("SELECT '\udc80'", None),
    ("SELECT ?", ("\udcff\udcfe",)),
    ("INSERT INTO docs (title, body) VALUES (?, 'x')", ("bad \ud800 surrogate",)),
    ("INSERT INTO docs (title, body) VALUES ('bad \ud800 literal', 'x')", None),
    ("INSERT INTO plain (name) VALUES (?)", (b"\xff\xfe invalid utf-8",)),
    ("INSERT INTO docs (title, body) VALUES (?, ?)", (b"\xc3\x28", b"\xa0\xa1")),
    ("SELECT id FROM docs WHERE knn(c, 3, ?)", (b"\xff",)),
    ("SELECT id FROM docs WHERE knn(c, 3, ?)", ("\x00" * 1000,)),
    ("SELECT id FROM docs WHERE knn(c, 3, ?)", ("question " * 50_000,)),
    ("INSERT INTO docs (title, v) VALUES ('nan', (NaN, 1, 2, 3))", None),
    ("INSERT INTO docs (title, v) VALUES ('nan', ?)", ([math.nan, 1, 2, 3],)),
    ("INSERT INTO docs (title, v) VALUES ('inf', ?)", ([math.inf, 1, 2, 3],)),
    ("INSERT INTO docs (title, v) VALUES ('-inf', ?)", ([1, -math.inf, 2, 3],)),
    ("INSERT INTO docs (title, v) VALUES ('big', (1e39, 1, 2, 3))", None),
    ("INSERT INTO docs (title, v) VALUES ('big', (1e308, 1e308, 1e308, 1e308))", None),
    ("INSERT INTO docs (title, a) VALUES ('nan', ?)", ([[1, 2, math.nan]],)),
    ("INSERT INTO docs (title, a) VALUES ('inf', [[1, 2, 3], [1e999, 0, 0]])", None),
    ("UPDATE docs SET v = ? WHERE id = 1", ([math.nan] * 4,)),
    ("SELECT id FROM docs WHERE knn(v, 3, ?)", ([math.nan, 0, 0, 0],)),
    ("SELECT id FROM docs WHERE knn(v, 3, (1e39, 0, 0, 0))", None),
    ("SELECT id FROM docs WHERE knn(a, 3, ?)", ([math.inf, 0, 0],)),
    ("INSERT INTO docs (title, v) VALUES ('wide', (" + ",".join(["1"] * 100_000) + "))", None),
    ("INSERT INTO docs (title, a) VALUES ('deep', " + "[" * 1000 + "1" + "]" * 1000 + ")", None),
    ("INSERT INTO docs (title, meta) VALUES ('deep json', ?)", ("[" * 100_000 + "]" * 100_000,)),
    ("INSERT INTO docs (title, meta) VALUES ('deep json', '" + "[" * 3000 + "]" * 3000 + "')", None),
    ("SELECT id FROM docs WHERE knn(v, 99999999999999999999999, (1, 2, 3, 4))", None),
    ("SELECT id FROM docs WHERE knn(v, 2, (1, 2, 3, 4), {ef=99999999999999999999})", None),
    ("SELECT id FROM docs WHERE knn(v, 2, (1, 2, 3, 4), {ef=1000000000})", None),
    ("SELECT id FROM docs WHERE knn(v, 2, -9223372036854775808)", None),
    ("INSERT INTO docs (title) VALUES " + ", ".join([f"('many {i}')" for i in range(1000)]), None),
    ("INSERT INTO docs (id, title) VALUES (9223372036854775807, 'max id')", None),
    ("INSERT INTO docs (title) VALUES ('after max id')", None),
    ("INSERT INTO docs (id, title) VALUES (-9223372036854775808, 'min id')", None),
    ("CREATE TABLE " + "t" * 100_000 + " (x int)", None),
    ("CREATE TABLE wide (" + ", ".join(f"c{i} int" for i in range(3000)) + ")", None),
    ("CREATE TABLE odd (v float_vector knn_type='hnsw' knn_dims='100000000' hnsw_similarity='l2')", None),
]


def test_extreme_inputs(tmp_path):
    con = _open(str(tmp_path / "extreme.db"))
    runner = Runner(con)
    for sql, params in EXTREMES:
        runner.run(sql, params)
        con.commit() if con.in_transaction else None
    assert not runner.failures, "\n".join(runner.failures)
    _consistent(con)
    con.close()
    print(f"\nextremes: {runner.cases} cases, outcomes {dict(runner.outcomes)}, "
          f"slowest {runner.slowest[0]:.2f}s ({runner.slowest[1][:60]!r})")


# -- a 2 MB document in a model column -----------------------------------------------------------
def _two_megabytes() -> str:
    words = ("certificate rotation policy requires renewal before expiry while the database keeps "
             "every committed row durable across crashes and restarts").split()
    rng = random.Random(11)
    parts, size = [], 0
    while size < 2_000_000:
        sentence = " ".join(rng.choice(words) for _ in range(rng.randint(5, 25))).capitalize() + ". "
        if rng.random() < 0.05:
            sentence += "\n\n"
        parts.append(sentence)
        size += len(sentence)
    return "".join(parts)[:2_000_000]


def test_two_megabyte_document(tmp_path):
    """With max_chunks the overflow is merged (a warning says so); without it, 'truncate' embeds the
    first window only. Recursive chunking with no cap would embed ~2,400 chunks of 254 tokens (minutes
    on 2 cores): that case is shown stopped cleanly by the statement timeout instead."""
    text = _two_megabytes()
    con = tesseradb.connect(str(tmp_path / "big.db"))
    con.execute(f"CREATE TABLE capped (body text, c float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
                f"model_name='{MODEL}' from='body' chunk_strategy='recursive' max_chunks='8')")
    con.execute(f"CREATE TABLE whole (body text, c float_vector knn_type='hnsw' hnsw_similarity='cosine' "
                f"model_name='{MODEL}' from='body')")                         # truncate: no max_chunks
    con.execute(f"CREATE TABLE uncapped (body text, c float_vector_array knn_type='hnsw' hnsw_similarity='cosine' "
                f"model_name='{MODEL}' from='body' chunk_strategy='recursive')")
    con.commit()
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    timings = {}
    for table in ("capped", "whole"):
        start = time.perf_counter()
        con.execute(f"INSERT INTO {table} (id, body) VALUES (1, ?), (2, 'a short one')", (text,))
        con.commit()
        timings[table] = time.perf_counter() - start
        assert con.execute(f"SELECT LENGTH(body) FROM {table} WHERE id = 1").fetchone() == (2_000_000,)
        assert [r[0] for r in con.execute(f"SELECT id FROM {table} WHERE knn(c, 1, 'certificate renewal')")] == [1]
        assert con.execute(f"CHECK TABLE {table}").fetchall()[-1][2:] == ("status", "OK")
    assert con.execute("SELECT LENGTH(c) FROM capped WHERE id = 1").fetchone() == (8,)
    warned = con.execute("INSERT INTO capped (id, body) VALUES (3, ?)", (text,)).connection.warnings
    assert any("max_chunks=8 merged the overflow" in w[2] for w in warned), warned
    con.rollback()
    slow = tesseradb.connect(str(tmp_path / "big.db"), statement_timeout=5)
    start = time.perf_counter()
    with pytest.raises(errors.Interrupted):
        slow.execute("INSERT INTO uncapped (id, body) VALUES (1, ?)", (text,))
    timings["uncapped (stopped)"] = time.perf_counter() - start
    slow.commit()
    assert slow.execute("SELECT COUNT(*) FROM uncapped").fetchone() == (0,)
    slow.close()
    con.close()
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(f"\n2 MB document: {', '.join(f'{k} {v:.1f}s' for k, v in timings.items())}; "
          f"peak RSS {rss0 / 1024:.0f} -> {rss1 / 1024:.0f} MiB")
