"""Statements too complex to run, refused before anything tokenizes or parses them.

sqlglot's tokenizer and parser are Python: a 100,000-term ``OR`` chain took 27 s to reach SQLite's
own refusal (its expression depth is at most 1000), a 200,000-value ``IN`` list 14 s, and a client
could send one after another. :func:`too_complex` finds such a statement with one regular-expression
scan (strings, quoted names and comments skipped), in a fraction of a second even for megabytes:

- more than ``MAX_TERMS`` operators (``AND``, ``OR``, ``+``, ``=`` ...) in one expression, that is
  between two commas at one level of parentheses: a chain that long is a tree that deep, and
  SQLite refuses one of about 1000 anyway ("Expression tree is too large"); ``NOT NOT ...`` counts;
- parentheses nested deeper than ``MAX_DEPTH``;
- an ``IN (...)`` list of more than ``MAX_IN_LIST`` values (bind them as one JSON array instead:
  ``col IN (SELECT value FROM json_each(?))``).

Long ``INSERT ... VALUES`` lists (what mysqldump writes) are not limited here. A statement shorter
than ``SHORT`` characters cannot exceed any limit and is not scanned.
"""
from __future__ import annotations

import re

MAX_TERMS = 1000
MAX_DEPTH = 200
MAX_IN_LIST = 10_000
SHORT = 2 * MAX_DEPTH      # fewer characters cannot nest deeper, nor hold more operators or values

_SCAN = re.compile(
    r"""'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.|"")*"|`(?:[^`]|``)*`|--[^\n]*|\#[^\n]*|/\*.*?(?:\*/|\Z)"""
    r"""|(?P<open>\()|(?P<close>\))|(?P<comma>,)|(?P<semi>;)|(?P<op>\|\||&&|<=>|<<|>>|[-+*/%&|^=<>~!])"""
    r"""|(?P<word>[A-Za-z_][A-Za-z0-9_$]*)""",
    re.DOTALL)
_OPERATOR_WORDS = {"and", "or", "xor", "not", "div", "mod", "like", "between", "when", "case"}


def too_complex(text: str) -> str | None:
    """Why ``text`` is refused, or None."""
    if len(text) < SHORT:
        return None
    ops = [0]                              # operators of the current expression, per open parenthesis
    lists: list[int | None] = [None]       # per open parenthesis: values of an IN list, or None
    after_in = False
    for match in _SCAN.finditer(text):
        kind = match.lastgroup
        if kind is None:
            continue
        if kind == "word":
            word = match.group(kind).lower()
            ops[-1] += word in _OPERATOR_WORDS
            after_in = word == "in"
        elif kind == "op":
            ops[-1] += 1
            after_in = False
        elif kind == "open":
            if len(ops) > MAX_DEPTH:
                return f"parentheses nested more than {MAX_DEPTH} deep"
            ops.append(0)
            lists.append(1 if after_in else None)
            after_in = False
        elif kind == "close":
            if len(ops) > 1:
                ops.pop()
                lists.pop()
        elif kind == "comma":
            ops[-1] = 0
            if lists[-1] is not None:
                lists[-1] += 1
                if lists[-1] > MAX_IN_LIST:
                    return (f"an IN list of more than {MAX_IN_LIST} values; bind them as one JSON array: "
                            "col IN (SELECT value FROM json_each(?))")
        elif kind == "semi":
            ops, lists = [0], [None]
        if ops[-1] > MAX_TERMS:
            return f"more than {MAX_TERMS} operators in one expression"
    return None
