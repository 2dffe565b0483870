"""Compile a :mod:`grammar.match` tree into an SQLite FTS5 MATCH expression.

Every word becomes an FTS5 string literal (``"..."``, inner ``"`` doubled), so no user text is ever
read as FTS5 syntax; FTS5 itself tokenizes each string with the table's tokenizer. Distances:

* ``"a b c"~N`` (Manticore: all words inside a span of fewer than N+k words, k = word count) ->
  ``NEAR("a" "b" "c", N+k-3)`` (FTS5 counts the tokens between the first and the last phrase);
* ``a NEAR/N b`` (at most N-1 words between) -> ``NEAR("a" "b", N-1)``; a chain ``a NEAR/3 b NEAR/4 c``
  becomes ``NEAR(a b, 2) AND NEAR(b c, 3)`` (each neighbouring pair within its distance).
"""
from __future__ import annotations

from collections.abc import Sequence

from .match import And, Fields, MatchError, Near, Node, Not, Or, Phrase, Query, Term


def fts5_string(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


class Compiler:
    def __init__(self, columns: Sequence[str], relaxed: bool = False, stopwords: frozenset[str] = frozenset()):
        self.columns = list(columns)
        self.by_lower = {c.lower(): c for c in columns}
        self.relaxed = relaxed
        self.stopwords = stopwords          # words left out of the query (not inside phrases)

    def compile(self, node: Node | None) -> str | None:
        if node is None:
            return None
        kind = type(node).__name__.lower()
        return getattr(self, f"_{kind}")(node)

    # -- leaves ---------------------------------------------------------------------------------
    def _colspec(self, fields: Fields | None) -> str | None:
        """'' (all columns), a '{...} :' filter, or None when the limit leaves no column (relaxed)."""
        if fields is None:
            return ""
        names = []
        for name in fields.names:
            col = self.by_lower.get(name.lower())
            if col is None:
                if self.relaxed:
                    continue
                raise MatchError(f"no field '{name}' found in schema")
            names.append(col)
        if not names:
            return "" if fields.exclude else None
        spec = "{" + " ".join(fts5_string(n) for n in names) + "} : "
        return ("- " + spec) if fields.exclude else spec

    def _term(self, node: Term) -> str | None:
        if not node.prefix and node.word.lower() in self.stopwords:
            return None
        spec = self._colspec(node.fields)
        if spec is None:
            return None
        return spec + fts5_string(node.word) + (" *" if node.prefix else "")

    def _phrase(self, node: Phrase) -> str | None:
        spec = self._colspec(node.fields)
        if spec is None:
            return None
        if node.proximity is None:
            return spec + fts5_string(" ".join(node.words))
        distance = max(0, node.proximity + len(node.words) - 3)
        return spec + "NEAR(" + " ".join(fts5_string(w) for w in node.words) + f", {distance})"

    def _near(self, node: Near) -> str | None:
        spec = self._colspec(node.parts[0].fields)
        if spec is None:
            return None
        pairs = []
        for left, right, n in zip(node.parts, node.parts[1:], node.distances):
            pairs.append(f"{spec}NEAR({self._bare(left)} {self._bare(right)}, {max(0, n - 1)})")
        return pairs[0] if len(pairs) == 1 else "(" + " AND ".join(pairs) + ")"

    @staticmethod
    def _bare(node: Term | Phrase) -> str:
        if isinstance(node, Term):
            return fts5_string(node.word) + (" *" if node.prefix else "")
        return fts5_string(" ".join(node.words))

    # -- operators ------------------------------------------------------------------------------
    def _and(self, node: And) -> str | None:
        pos = [c for c in (self.compile(i) for i in node.items if not isinstance(i, Not)) if c]
        neg = [c for c in (self.compile(i.item) for i in node.items if isinstance(i, Not)) if c]
        if not pos:
            return None
        text = pos[0] if len(pos) == 1 else "(" + " AND ".join(pos) + ")"
        if neg:
            text = f"{text} NOT ({' OR '.join(neg)})"
        return text

    def _or(self, node: Or) -> str | None:
        parts = [c for c in (self.compile(i) for i in node.items) if c]
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"

    def _not(self, node: Not) -> str | None:
        raise MatchError("query is non-computable (single NOT operator)")


def to_fts5(query: Query, columns: Sequence[str], stopwords: frozenset[str] = frozenset()) -> str | None:
    """The FTS5 expression of ``query`` over ``columns``; None when it has no words (match all).
    A query whose every word was dropped (``@@relaxed`` unknown fields, stop words) matches nothing."""
    if query.root is None:
        return None
    return Compiler(columns, query.relaxed, stopwords).compile(query.root) or MATCH_NOTHING


MATCH_NOTHING = '""'            # an empty FTS5 phrase: matches no row
