"""Manticore's full-text query language (``MATCH('...')``) -> a tree -> an SQLite FTS5 expression.

Supported, with Manticore's meaning: implicit AND (``a b``), ``|`` OR (binds tighter than AND),
``-word`` / ``!word`` NOT, ``"phrase"``, ``"a b"~N`` proximity, ``@field`` / ``@(f1,f2)`` /
``@!field`` / ``@*`` field limits (until the next limit or the closing parenthesis), ``word*``
prefix, ``a NEAR/N b``, ``\\`` escapes, ``@@relaxed``. Every user word becomes an FTS5 string
(``"..."`` with ``"`` doubled): user text is never pasted as FTS5 syntax.

Operators FTS5 cannot express (quorum ``"a b"/N``, ``MAYBE``, ``<<``, ``=exact``, ``^``/``$``
boundaries, ``*infix``, ``NOTNEAR``, ``SENTENCE``, ``PARAGRAPH``, ``ZONE``, ``REGEX``, field
position ``@f[N]``, ``|`` or ``*`` inside a phrase) raise :class:`MatchError` naming the operator.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from .errors import GrammarError

MAX_DEPTH = 64            # FTS5's own parser overflows near 500 nested parentheses


class MatchError(GrammarError):
    """A full-text query that is not valid, or uses an operator we do not support."""


def unsupported(op: str) -> MatchError:
    return MatchError(f"full-text operator {op} is not supported")


# -- the tree -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Fields:
    """A field limit: the named fields, or all fields but them (``exclude``)."""
    names: tuple[str, ...]
    exclude: bool = False


@dataclass(frozen=True)
class Term:
    word: str
    prefix: bool = False
    fields: Fields | None = None


@dataclass(frozen=True)
class Phrase:
    words: tuple[str, ...]
    proximity: int | None = None         # "a b"~N
    fields: Fields | None = None


@dataclass(frozen=True)
class Near:
    parts: tuple[Union[Term, Phrase], ...]
    distances: tuple[int, ...]           # NEAR/N between parts[i] and parts[i+1]


@dataclass(frozen=True)
class And:
    items: tuple["Node", ...]


@dataclass(frozen=True)
class Or:
    items: tuple["Node", ...]


@dataclass(frozen=True)
class Not:
    item: "Node"


Node = Union[Term, Phrase, Near, And, Or, Not]


@dataclass(frozen=True)
class Query:
    root: Node | None                    # None: the query has no words (matches every row)
    relaxed: bool = False


# -- tokens -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tok:
    kind: str            # word, phrase, lpar, rpar, or, not, near, field
    value: object = None


SPECIAL = set('()|"')        # '@' starts a field limit only at the start of a token (user@host is a word)
_KEYWORDS_UNSUPPORTED = {"MAYBE": "MAYBE", "SENTENCE": "SENTENCE", "PARAGRAPH": "PARAGRAPH"}
_PREFIX_UNSUPPORTED = [(re.compile(r"NOTNEAR/\d+$"), "NOTNEAR/N"), (re.compile(r"ZONE(SPAN)?:"), "ZONE"),
                       (re.compile(r"REGEX\("), "REGEX()")]
_NEAR = re.compile(r"NEAR/(\d+)$")
_BOOST = re.compile(r".\^\d+(\.\d*)?$")


def _blank(ch: str) -> bool:
    return ch.isspace() or ord(ch) < 32 or ch == "\x7f"


class _Scanner:
    def __init__(self, text: str):
        self.text = text
        self.i = 0
        self.tokens: list[Tok] = []

    def run(self) -> list[Tok]:
        text = self.text
        while self.i < len(text):
            ch = text[self.i]
            if _blank(ch):
                self.i += 1
            elif ch in "()|":
                self.tokens.append(Tok({"(": "lpar", ")": "rpar", "|": "or"}[ch]))
                self.i += 1
            elif ch == '"':
                self._phrase()
            elif ch == "@":
                self._field()
            elif ch in "-!" and self._starts_operand(self.i + 1):
                self.tokens.append(Tok("not"))
                self.i += 1
            elif text.startswith("<<", self.i):
                raise unsupported("<< (strict order)")
            else:
                self._word()
        return self.tokens

    def _starts_operand(self, at: int) -> bool:
        return at < len(self.text) and (self.text[at] in '("@' or not (_blank(self.text[at]) or self.text[at] in ")|"))

    def _read_word(self) -> tuple[str, bool]:
        """Characters up to a blank or a special; backslash escapes. (word, ends with an unescaped *)"""
        out, star = [], False
        text = self.text
        while self.i < len(text) and not _blank(text[self.i]) and text[self.i] not in SPECIAL:
            ch = text[self.i]
            if ch == "\\" and self.i + 1 < len(text):
                if _blank(text[self.i + 1]):    # an escaped blank or control character (NUL) still
                    self.i += 1                 # separates words: no index holds it inside one
                    break
                out.append(text[self.i + 1])
                self.i += 2
                star = False
                continue
            out.append(ch)
            star = ch == "*"
            self.i += 1
        return "".join(out), star

    def _word(self) -> None:
        start = self.i
        raw = self.text[start:]
        for pattern, op in _PREFIX_UNSUPPORTED:
            if pattern.match(raw.split(None, 1)[0] if raw.strip() else ""):
                raise unsupported(op)
        word, star = self._read_word()
        if not word:            # a lone backslash at the end
            self.i = max(self.i, start + 1)
            return
        near = _NEAR.match(word)
        if near:
            self.tokens.append(Tok("near", int(near.group(1))))
            return
        if word in _KEYWORDS_UNSUPPORTED:
            raise unsupported(_KEYWORDS_UNSUPPORTED[word])
        raw_word = self.text[start:self.i]
        _check_modifiers(raw_word)
        if star:
            word = word.rstrip("*")
        if not word.strip("*"):
            return              # a lone * or -: nothing to match
        self.tokens.append(Tok("word", (word, star)))

    def _phrase(self) -> None:
        text = self.text
        self.i += 1
        out = []
        while self.i < len(text) and text[self.i] != '"':
            ch = text[self.i]
            if ch == "\\" and self.i + 1 < len(text):
                out.append(" " if _blank(text[self.i + 1]) else text[self.i + 1])
                self.i += 2
                continue
            if ch in "|()":
                raise unsupported(f"'{ch}' inside a phrase")
            out.append(" " if _blank(ch) else ch)
            self.i += 1
        self.i += 1                              # the closing quote (an unclosed phrase ends the query)
        words = tuple(w for w in "".join(out).split() if w)
        if any(w == "*" for w in words):
            raise unsupported("* (any word) inside a phrase")
        for w in words:
            _check_modifiers(w)
        proximity = None
        m = re.compile(r"([~/])(\d+(?:\.\d+)?)").match(text, self.i)
        if m:
            if m.group(1) == "/":
                raise unsupported('"..."/N (quorum)')
            if "." in m.group(2):
                raise MatchError(f"proximity distance must be an integer, not {m.group(2)}")
            proximity = int(m.group(2))
            if proximity < 1:
                raise MatchError(f"proximity threshold too low ({proximity})")
            self.i = m.end()
        self.tokens.append(Tok("phrase", (words, proximity)))

    def _field(self) -> None:
        text = self.text
        if text.startswith("@@relaxed", self.i):
            self.tokens.append(Tok("relaxed"))
            self.i += len("@@relaxed")
            return
        self.i += 1
        exclude = self.i < len(text) and text[self.i] == "!"
        if exclude:
            self.i += 1
        if self.i < len(text) and text[self.i] == "*":
            self.i += 1
            self.tokens.append(Tok("field", None))
            return
        if self.i < len(text) and text[self.i] == "(":
            end = text.find(")", self.i)
            if end < 0:
                raise MatchError("unclosed field list after @(")
            names = tuple(n.strip() for n in text[self.i + 1:end].split(","))
            self.i = end + 1
        else:
            m = re.compile(r"[A-Za-z_][A-Za-z0-9_$]*").match(text, self.i)
            if m is None:
                raise MatchError("a field name must follow @")
            names = (m.group(0),)
            self.i = m.end()
        if any(not n for n in names):
            raise MatchError("empty field name in @(...)")
        if re.compile(r"\s*\[").match(text, self.i):
            raise unsupported("@field[N] (field position limit)")
        self.tokens.append(Tok("field", Fields(names, exclude)))


def _check_modifiers(word: str) -> None:
    if len(word) > 1 and word[0] == "=":
        raise unsupported("=word (exact form)")
    if len(word) > 1 and word[0] == "^":
        raise unsupported("^word (field start)")
    if len(word) > 1 and word[-1] == "$" and word[-2] != "\\":
        raise unsupported("word$ (field end)")
    if _BOOST.search(word):
        raise unsupported("word^N (IDF boost)")
    if len(word) > 1 and word[0] == "*" and word.strip("*"):
        raise unsupported("*word (infix or suffix wildcard)")


# -- parser -------------------------------------------------------------------------------------
class _Parser:
    """near := and (NEAR/N and)* ; and := or+ ; or := unary ('|' unary)* ; unary := [-!] unary | atom"""

    def __init__(self, tokens: list[Tok]):
        self.toks = tokens
        self.i = 0
        self.fields: Fields | None = None
        self.depth = 0

    def peek(self) -> Tok | None:
        return self.toks[self.i] if self.i < len(self.toks) else None

    def parse(self) -> Node | None:
        node = self.near()
        tok = self.peek()
        if tok is not None:
            raise MatchError(f"syntax error, unexpected {_describe(tok)}")
        return node

    def near(self) -> Node | None:
        first = self.conj()
        parts, distances = [first], []
        while (tok := self.peek()) is not None and tok.kind == "near":
            self.i += 1
            if tok.value < 1:
                raise MatchError(f"NEAR/{tok.value}: the distance must be at least 1")
            parts.append(self.conj())
            distances.append(tok.value)
        if not distances:
            return first
        for p in parts:
            if not isinstance(p, (Term, Phrase)):
                raise MatchError("NEAR/N: each side must be one word or one \"phrase\" "
                                 "(FTS5 cannot measure the distance of a group)")
        return Near(tuple(parts), tuple(distances))

    def conj(self) -> Node | None:
        items = []
        while (tok := self.peek()) is not None and tok.kind not in ("rpar", "near"):
            if tok.kind == "or":
                raise MatchError("syntax error, unexpected '|'")
            node = self.disj()
            if node is not None:
                items.append(node)
        if not items:
            return None
        return items[0] if len(items) == 1 else And(tuple(items))

    def disj(self) -> Node | None:
        items = [self.unary()]
        while (tok := self.peek()) is not None and tok.kind == "or":
            self.i += 1
            nxt = self.peek()
            if nxt is None or nxt.kind in ("rpar", "or", "near"):
                raise MatchError("syntax error, unexpected '|' at the end of an expression")
            items.append(self.unary())
        items = [n for n in items if n is not None]
        if not items:
            return None
        if len(items) > 1 and any(isinstance(n, Not) for n in items):
            raise MatchError("query is non-computable (NOT is not allowed within OR)")
        return items[0] if len(items) == 1 else Or(tuple(items))

    def unary(self) -> Node | None:
        tok = self.peek()
        if tok is not None and tok.kind == "not":
            self.i += 1
            inner = self.unary()
            return None if inner is None else (inner.item if isinstance(inner, Not) else Not(inner))
        return self.atom()

    def atom(self) -> Node | None:
        while (tok := self.peek()) is not None and tok.kind in ("field", "relaxed"):
            self.i += 1
            if tok.kind == "field":
                self.fields = tok.value
        tok = self.peek()
        if tok is None or tok.kind in ("rpar", "near", "or"):
            return None
        self.i += 1
        if tok.kind == "word":
            word, star = tok.value
            return Term(word, star, self.fields)
        if tok.kind == "phrase":
            words, proximity = tok.value
            if not words:
                return None
            if len(words) == 1 and proximity is None:
                return Term(words[0], False, self.fields)
            return Phrase(words, proximity, self.fields)
        if tok.kind == "lpar":
            return self.group()
        raise MatchError(f"syntax error, unexpected {_describe(tok)}")

    def group(self) -> Node | None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise MatchError(f"query nested deeper than {MAX_DEPTH} parentheses")
        saved = self.fields
        node = self.near()
        tok = self.peek()
        if tok is None or tok.kind != "rpar":
            raise MatchError("syntax error, missing ')'")
        self.i += 1
        self.fields = saved
        self.depth -= 1
        return node


def _describe(tok: Tok) -> str:
    return {"rpar": "')'", "lpar": "'('", "or": "'|'", "near": f"NEAR/{tok.value}", "not": "'-'"}.get(
        tok.kind, repr(tok.kind))


def parse(text: str) -> Query:
    """Parse a Manticore full-text query into a :class:`Query` tree."""
    tokens = _Scanner(text).run()
    relaxed = any(t.kind == "relaxed" for t in tokens)
    root = _Parser(tokens).parse()
    root = _fix_nots(root)
    return Query(root, relaxed)


def _fix_nots(node: Node | None) -> Node | None:
    """Manticore: a query (or group) made only of negations cannot be computed."""
    if isinstance(node, Not):
        raise MatchError("query is non-computable (single NOT operator)")
    if isinstance(node, And):
        if all(isinstance(i, Not) for i in node.items):
            raise MatchError("query is non-computable (node consists of NOT operators only)")
        return And(tuple(_fix_nots(i) if not isinstance(i, Not) else Not(_fix_inner(i.item)) for i in node.items))
    if isinstance(node, Or):
        return Or(tuple(_fix_nots(i) for i in node.items))
    return node


def _fix_inner(node: Node) -> Node:
    return node if isinstance(node, (Term, Phrase, Near)) else _fix_nots(node)


def words_of(node: Node | None) -> list[str]:
    """Every word of the positive part of a query (for highlighting), in order."""
    if node is None or isinstance(node, Not):
        return []
    if isinstance(node, Term):
        return [node.word]
    if isinstance(node, Phrase):
        return list(node.words)
    parts = node.parts if isinstance(node, Near) else node.items
    return [w for p in parts for w in words_of(p)]
