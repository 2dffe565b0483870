"""The full-text query language: Manticore's operators parse to a tree and compile to FTS5 that
SQLite accepts; any text gives an FTS5 expression or a clean MatchError, never anything else."""
from __future__ import annotations

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tesseradb.grammar.match import MatchError, parse
from tesseradb.grammar.match_fts5 import to_fts5

COLUMNS = ["title", "body"]
DOCS = [(1, "hello world", "cats and dogs"), (2, "world news", "hello there, my dear friend"),
        (3, "C++ primer", "send an e-mail to user@example.com"), (4, "nation", "national nations")]


@pytest.fixture(scope="module")
def fts():
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(title, body, tokenize=\"porter unicode61 tokenchars '_'\")")
    conn.executemany("INSERT INTO f (rowid, title, body) VALUES (?, ?, ?)", DOCS)
    return conn


def ids(conn, query: str) -> list[int]:
    expr = to_fts5(parse(query), COLUMNS)
    if expr is None:
        return [d[0] for d in DOCS]
    return sorted(r[0] for r in conn.execute("SELECT rowid FROM f WHERE f MATCH ?", (expr,)))


@pytest.mark.parametrize("query, expected", [
    ("hello", [1, 2]),                        # a word
    ("hello world", [1, 2]),                  # implicit AND
    ("hello dogs", [1]),
    ("cats | news", [1, 2]),                  # OR
    ("hello cats | news", [1, 2]),            # OR binds tighter than AND
    ("hello -cats", [2]),                     # NOT with -
    ("hello !cats", [2]),                     # NOT with !
    ('"hello world"', [1]),                   # phrase
    ('"world hello"', []),
    ('"hello friend"~4', [2]),                # proximity: hello there my dear friend (span 5 < 4+2)
    ('"hello friend"~2', []),
    ("@title hello", [1]),                    # field limit
    ("@body hello", [2]),
    ("@title world @body dogs", [1]),          # the limit lasts until the next one
    ("@(title,body) nation", [4]),             # several fields
    ("@!title hello", [2]),                    # all fields but
    ("@* dogs", [1]),                          # every field
    ("(@title hello) dogs", [1]),              # a limit ends with its group
    ("@title (hello) dogs", []),               # ... and is inherited by inner groups
    ("nation*", [4]),                          # prefix
    ("there NEAR/2 dear", [2]),                # NEAR/N: at most N-1 words between
    ("hello NEAR/2 dear", []),
    ("C++", [3]),                              # punctuation inside words is the tokenizer's business
    ("e-mail", [3]),
    ("user@example.com", [3]),
    ("\\-cats hello", [1]),                    # escaped operator is a word
    ("@@relaxed @nosuch hello", []),           # relaxed: an unknown field's words are dropped
    ("", [1, 2, 3, 4]),                        # no words: every row
])
def test_operators(fts, query, expected):
    assert ids(fts, query) == expected


@pytest.mark.parametrize("query, message", [
    ('"a b"/2', "quorum"), ("a MAYBE b", "MAYBE"), ("a << b", "strict order"), ("=runs", "exact form"),
    ("^hello", "field start"), ("hello$", "field end"), ("hello^2", "IDF boost"), ("*tion", "infix"),
    ("a NOTNEAR/3 b", "NOTNEAR"), ("a SENTENCE b", "SENTENCE"), ("a PARAGRAPH b", "PARAGRAPH"),
    ("ZONE:(h3) a", "ZONE"), ("REGEX(/t.e/)", "REGEX"), ("@title[50] a", "field position"),
    ('"( a | b ) c"', "inside a phrase"), ('"exact * phrase"', "inside a phrase"),
    ("-hello", "single NOT operator"), ("-a -b", "NOT operators only"), ("a | -b", "NOT is not allowed within OR"),
    ("@nosuch hello", "no field 'nosuch' found in schema"), ("|", "unexpected '|'"), ("a |", "'|'"),
    ("(a", "missing ')'"), ("a)", "unexpected ')'"), ('"a b"~0', "proximity threshold too low"),
    ("(a b) NEAR/3 c", "NEAR/N"), ("(" * 100 + "a" + ")" * 100, "nested deeper"),
])
def test_errors_name_the_operator(query, message):
    with pytest.raises(MatchError, match=message.replace("(", r"\(").replace(")", r"\)").replace("|", r"\|")
                       .replace("*", r"\*").replace("^", r"\^").replace("$", r"\$").replace("[", r"\[")):
        to_fts5(parse(query), COLUMNS)


def test_user_text_is_never_fts5_syntax(fts):
    # FTS5's own operators and quotes inside user words stay words
    for query in ['AND', 'OR hello', 'NOT', 'NEAR(hello world)', 'title:hello', '{title}:x', 'he"llo', "a'b", '^x']:
        try:
            expr = to_fts5(parse(query), COLUMNS)
        except MatchError:
            continue
        fts.execute("SELECT rowid FROM f WHERE f MATCH ?", (expr,)).fetchall()


def test_ten_thousand_words(fts):
    words = " ".join(f"w{i}" for i in range(10_000))
    assert ids(fts, words) == []
    assert ids(fts, " | ".join(f"w{i}" for i in range(10_000)) + " | hello") == [1, 2]


def test_nul_and_control_characters(fts):
    assert ids(fts, "hello\x00world") == [1, 2]
    assert ids(fts, "\x01\x02") == [1, 2, 3, 4]
    assert ids(fts, "hello\\\x00world") == [1, 2]          # escaped, a NUL still separates words
    assert ids(fts, '"hello\\\x00world"') == ids(fts, '"hello world"')


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(list('ab -!|"()@*~/\\^$=<>NEAR23tile,body\x00é+') + ["NEAR/2", "@title", "MAYBE"]),
                max_size=30).map("".join) | st.text(max_size=40))
def test_any_text_compiles_or_fails_cleanly(fts, text):
    try:
        expr = to_fts5(parse(text), COLUMNS)
    except MatchError:
        return
    if expr is not None:
        fts.execute("SELECT rowid FROM f WHERE f MATCH ?", (expr,)).fetchall()
