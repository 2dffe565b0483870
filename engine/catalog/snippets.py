"""Snippets for HIGHLIGHT() and SNIPPET(): FTS5's ``highlight()`` marks the matched words of a field
(with the control characters OPEN/CLOSE, which stored text may not use for anything useful); this
module cuts the marked text into Manticore-style passages.

Options (Manticore's names and defaults): ``before_match`` ('<b>'), ``after_match`` ('</b>'),
``limit`` (256 characters per field; 0 = no limit), ``around`` (5 words around each match),
``limit_snippets`` (0 = no limit), ``limit_words`` (0 = no limit), ``chunk_separator`` (' ... '),
``field_separator`` (' | ', HIGHLIGHT over several fields), ``allow_empty`` (0: a field without a
match gives its beginning; HIGHLIGHT() leaves such fields out). A text that fits in ``limit`` is
returned whole, highlighted.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, fields

import apsw

OPEN, CLOSE = "\x01", "\x02"
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class SnippetOptions:
    before_match: str = "<b>"
    after_match: str = "</b>"
    limit: int = 256
    around: int = 5
    limit_snippets: int = 0
    limit_words: int = 0
    chunk_separator: str = " ... "
    field_separator: str = " | "
    allow_empty: int = 0

    @classmethod
    def names(cls) -> set[str]:
        return {f.name for f in fields(cls)}

    @classmethod
    def parse(cls, pairs: dict[str, object]) -> "SnippetOptions":
        """From option pairs (names lower-cased); raises ValueError naming a bad one."""
        values: dict[str, object] = {}
        for f in fields(cls):
            if f.name not in pairs:
                continue
            value = pairs[f.name]
            if f.type in ("int", int):
                try:
                    value = int(value)
                except (TypeError, ValueError):
                    raise ValueError(f"snippet option {f.name} needs an integer, not '{value}'") from None
                if value < 0:
                    raise ValueError(f"snippet option {f.name} must not be negative")
            values[f.name] = value if f.type not in ("str", str) else str(value)
        unknown = set(pairs) - cls.names()
        if unknown:
            raise ValueError(f"unknown snippet option '{sorted(unknown)[0]}'")
        return cls(**values)


def _words(marked: str) -> list[tuple[str, bool]]:
    """(word, matched) for each whitespace-separated word of the marked text."""
    return [(m.group(0), OPEN in m.group(0)) for m in _WORD.finditer(marked)]


def _render(word: str, opts: SnippetOptions) -> str:
    return word.replace(OPEN, opts.before_match).replace(CLOSE, opts.after_match)


def _plain(word: str) -> str:
    return word.replace(OPEN, "").replace(CLOSE, "")


def snippet(marked: str | None, text: str | None, opts: SnippetOptions, *, for_highlight: bool = False) -> str:
    """Passages of ``marked`` (``text`` with matches marked) around its matches, within the limits."""
    if text is None and marked is None:
        return ""
    marked = marked if marked is not None else str(text)
    words = _words(marked)
    hits = [i for i, (_, hit) in enumerate(words) if hit]
    if not hits and (opts.allow_empty or for_highlight):
        return ""
    plain_len = len(_plain(marked))
    if (opts.limit == 0 or plain_len <= opts.limit) and not opts.limit_words and not opts.limit_snippets:
        return _render(marked, opts)
    if not hits:
        return _fit(" ".join(_plain(w) for w, _ in words), opts.limit)
    return _passages(words, hits, opts)


def _windows(hits: list[int], around: int, count: int) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    for i in hits:
        lo, hi = max(0, i - around), min(count, i + around + 1)
        if spans and lo <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(spans[-1][1], hi))
        else:
            spans.append((lo, hi))
    return spans


def _passages(words: list[tuple[str, bool]], hits: list[int], opts: SnippetOptions) -> str:
    spans = _windows(hits, opts.around, len(words))
    out, used_chars, used_words, last_end = [], 0, 0, 0
    for lo, hi in spans:
        if opts.limit_snippets and len(out) >= opts.limit_snippets:
            break
        part = words[lo:hi]
        if opts.limit_words:
            part = part[:max(0, opts.limit_words - used_words)]
        size = sum(len(_plain(w)) + 1 for w, _ in part)
        if not part or (opts.limit and out and used_chars + size > opts.limit):
            break
        out.append(" ".join(_render(w, opts) for w, _ in part))
        used_chars, used_words, last_end = used_chars + size, used_words + len(part), lo + len(part)
    sep = opts.chunk_separator
    text = sep.join(out)
    if spans[0][0] > 0:
        text = sep.lstrip() + text
    if last_end < len(words):
        text += sep.rstrip()
    return text


def _fit(text: str, limit: int) -> str:
    if limit == 0 or len(text) <= limit:
        return text
    cut = text[:limit]
    return cut.rsplit(" ", 1)[0] if " " in cut else cut


# -- SQL functions ---------------------------------------------------------------------------------
def _options(options_json: str) -> SnippetOptions:
    return SnippetOptions(**json.loads(options_json))


def sql_snippet(marked, text, options_json):
    return snippet(marked, text, _options(options_json))


def sql_highlight(options_json, *marked_texts):
    opts = _options(options_json)
    parts = [snippet(m, None, opts, for_highlight=True) for m in marked_texts if m is not None]
    return opts.field_separator.join(p for p in parts if p)


def register(conn: apsw.Connection) -> None:
    conn.create_scalar_function("_tessera_snippet", sql_snippet, 3, deterministic=True)
    conn.create_scalar_function("_tessera_highlight", sql_highlight, -1, deterministic=True)
