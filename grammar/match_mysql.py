"""MySQL's ``MATCH(col, ...) AGAINST('text' [IN NATURAL LANGUAGE MODE | IN BOOLEAN MODE])`` as a
:mod:`grammar.match` tree, limited to the named columns.

* natural language mode (the default): every word is optional; a row matches when it has any of
  them and ranks by BM25 (MySQL's relevance);
* boolean mode: ``+word`` must be present, ``-word`` must be absent, a plain word is optional (when
  there is no ``+word``, at least one optional word must match), ``"phrase"``, ``word*`` prefix and
  ``( ... )`` groups. MySQL's ranking modifiers ``>``, ``<`` and ``~`` raise an error naming them.
"""
from __future__ import annotations

import re

from .match import And, Fields, MatchError, Node, Not, Or, Phrase, Query, Term, unsupported

_TOKEN = re.compile(r'\s*(?:(?P<op>[+\-])?(?:"(?P<phrase>[^"]*)"?|\((?P<group>)|(?P<word>[^\s()"]+))|(?P<close>\)))')
_MODIFIERS = {">": "> (raise relevance)", "<": "< (lower relevance)", "~": "~ (negative relevance)",
              "@": "@distance (proximity)"}


def parse_against(text: str, columns: list[str], boolean: bool) -> Query:
    fields = Fields(tuple(columns)) if columns else None
    if not boolean:
        words = [w for w in re.split(r"[\s\x00-\x1f]+", text) if w.strip('"()+-*<>~@')]
        terms = [Term(w.strip('"()+-<>~@'), False, fields) for w in words]
        terms = [t for t in terms if t.word]
        return Query(None if not terms else terms[0] if len(terms) == 1 else Or(tuple(terms)))
    node, rest = _boolean(text.replace("\x00", " "), fields, 0)
    if rest.strip():
        raise MatchError(f"syntax error in boolean mode near '{rest.strip()[:20]}'")
    return Query(node)


def _boolean(text: str, fields: Fields | None, depth: int) -> tuple[Node | None, str]:
    if depth > 32:
        raise MatchError("boolean query nested too deeply")
    must, may, never = [], [], []
    while text.strip():
        stripped = text.lstrip()
        if stripped[0] in _MODIFIERS:
            raise unsupported(f"{_MODIFIERS[stripped[0]]} in boolean mode")
        m = _TOKEN.match(text)
        if m is None:
            raise MatchError(f"syntax error in boolean mode near '{stripped[:20]}'")
        if m.group("close") is not None:
            return _combine(must, may, never), text[m.end():]
        text = text[m.end():]
        if m.group("group") is not None:
            node, text = _boolean(text, fields, depth + 1)
        elif m.group("phrase") is not None:
            words = tuple(m.group("phrase").split())
            node = None if not words else Phrase(words, None, fields) if len(words) > 1 else Term(words[0], False, fields)
        else:
            word = m.group("word")
            node = Term(word.rstrip("*"), word.endswith("*"), fields) if word.rstrip("*") else None
        if node is not None:
            {"+": must, "-": never}.get(m.group("op"), may).append(node)
    return _combine(must, may, never), ""


def _combine(must: list[Node], may: list[Node], never: list[Node]) -> Node | None:
    positive = must if must else ([may[0]] if len(may) == 1 else [Or(tuple(may))] if may else [])
    if not positive:
        if never:
            raise MatchError("query is non-computable (single NOT operator)")
        return None
    items = positive + [Not(n) for n in never]
    return items[0] if len(items) == 1 else And(tuple(items))
