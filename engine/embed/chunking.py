"""Split a document into embedding-sized chunks, on the model's own tokens.

Pure functions, no model inside: the caller tokenizes the text once (no special tokens) and
passes the character offsets of the content tokens; :func:`plan_chunks` returns character spans
of the source text. The engine then embeds ``text[chunk.start:chunk.end]`` for every chunk
(the model re-tokenizes and, past its window, truncates each chunk string; a chunk cut at word
boundaries brings its ids from the page's tokens instead: embed/token_ids.py).

The algorithm follows Manticore's ``embeddings/src/chunk.rs`` (see ``shared/MANTICORE_NOTES.md``
§4) with the differences written down in ``docs/chunking.md``:

* offsets and spans are Python ``str`` indices, not UTF-8 byte offsets;
* a ``recursive`` cut never lands inside a token, and sentence boundaries that fall inside a
  token are ignored, so every token lies wholly inside some chunk;
* ``sentence`` caps the overlap at ``M // 2`` like the other strategies, never re-seeds a chunk
  that would hold no new sentence, folds token-less "sentences" (blank lines) into their
  neighbour, and keeps the pieces of an over-long sentence on the sentence's own boundaries;
* ``max_chunks`` stretches the last kept chunk to the end of the text and reports it;
* no chunk starts or ends inside a word, nor does an overlap (:meth:`_Tokens.word_cut`,
  :meth:`_Tokens.overlap_start`), unless one word holds more tokens than a chunk.
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from icu4py.breakers import SentenceBreaker

STRATEGIES = ("truncate", "mean", "fixed", "recursive", "sentence")

#: Separators a ``recursive`` cut snaps back to, in order of preference.
SEPARATORS = ("\n\n", "\n", ". ", " ")

_CJK = re.compile("[\u2e80-\u2fdf\u3000-\u30ff\u3100-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                  "\uff00-\uffef\U00020000-\U0003ffff]")
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s+$")

#: ICU locale for sentence breaking: the plain UAX #29 rules, no abbreviation suppressions.
_SENTENCE_LOCALE = "root"


@dataclass(frozen=True)
class Chunk:
    """A chunk: ``text[start:end]`` (character offsets, Python ``str`` indices)."""

    start: int
    end: int


@dataclass(frozen=True)
class ChunkPlan:
    """The chunks of one document and what the model will make of them.

    ``merged_overflow``: ``max_chunks`` dropped chunks and stretched the last kept one to the
    end of the text (it may then hold more than M tokens). ``dropped_tokens``: tokens the model
    never sees because they lie beyond its ``window`` - the tail of a ``truncate`` text, or the
    tail of a stretched last chunk.
    """

    chunks: tuple[Chunk, ...]
    total_tokens: int
    merged_overflow: bool
    dropped_tokens: int
    #: per chunk, its token ids from the page's tokens when the model can take them (embed/token_ids.py)
    ids: tuple | None = field(default=None, compare=False, repr=False)


def effective_size(max_tokens: int, window: int) -> int:
    """The chunk size M in content tokens: ``0`` means the window; clamped to it; at least 1."""
    if max_tokens < 0:
        raise ValueError(f"max_tokens must be >= 0, got {max_tokens}")
    ceiling = max(window, 1)
    return ceiling if max_tokens == 0 else max(1, min(max_tokens, ceiling))


def plan_chunks(
    text: str,
    offsets: Sequence[tuple[int, int]],
    *,
    strategy: str,
    max_tokens: int = 0,
    overlap_tokens: int = 0,
    max_chunks: int = 0,
    window: int = 510,
) -> ChunkPlan:
    """Cut ``text`` into chunks according to ``strategy``.

    ``offsets`` are the ``(start, end)`` character spans of the model's content tokens over
    the whole text, in order (what a Hugging Face tokenizer returns with
    ``add_special_tokens=False``). ``window`` is the model's content-token window (its
    position limit less the two special tokens: 510 for MiniLM).
    """
    _check_arguments(text, offsets, strategy, max_tokens, overlap_tokens, max_chunks, window)
    n = len(offsets)
    if strategy == "truncate":
        return ChunkPlan((Chunk(0, len(text)),), n, False, max(0, n - window))
    size = effective_size(max_tokens, window)
    if n <= size:
        return ChunkPlan((Chunk(0, len(text)),), n, False, 0)
    tokens = _Tokens(text, offsets)
    if strategy == "fixed":
        spans = tokens.windows(0, n, size, overlap_tokens, snap=False)
    elif strategy == "sentence":
        spans = _sentence_chunks(tokens, size, overlap_tokens)
    else:  # recursive, mean
        spans = tokens.windows(0, n, size, overlap_tokens, snap=True)
    return _cap(tokens, spans, max_chunks, window)


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """UAX #29 sentence spans (ICU), tiling ``text``; trailing whitespace stays with its sentence."""
    if not text:
        return []
    # ICU takes UTF-8; a lone surrogate (legal in a Python str) cannot be encoded. U+FFFD has
    # the same length in str indices, so the spans still fit the original text.
    if _has_surrogate(text):
        text = "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in text)
    spans: list[tuple[int, int]] = []
    pos = 0
    for piece in SentenceBreaker(text, _SENTENCE_LOCALE):
        if piece:
            spans.append((pos, pos + len(piece)))
            pos += len(piece)
    if pos != len(text):  # ICU tiles the text; never hand back a gap or an overrun anyway
        spans = [(s, e) for s, e in spans if e < len(text)]
        spans.append((spans[-1][1] if spans else 0, len(text)))
    return spans


# --------------------------------------------------------------------------- internals


def _check_arguments(text: str, offsets: Sequence[tuple[int, int]], strategy: str, max_tokens: int,
                     overlap_tokens: int, max_chunks: int, window: int) -> None:
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown chunk strategy {strategy!r}; expected one of {STRATEGIES}")
    if max_tokens < 0 or overlap_tokens < 0 or max_chunks < 0:
        raise ValueError("max_tokens, overlap_tokens and max_chunks must be >= 0")
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    previous = 0
    for start, end in offsets:
        if not 0 <= start <= end <= len(text) or start < previous:
            raise ValueError(f"token offsets must be sorted spans inside the text, got {(start, end)}")
        previous = start


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class _Tokens:
    """The text with its token offsets, and the token-window splitter over them."""

    def __init__(self, text: str, offsets: Sequence[tuple[int, int]]):
        self.text = text
        # a tokenizer's list of int pairs is used as it is (a copy of a long page's cost 0.1 s a manual)
        plain = isinstance(offsets, list) and (not offsets or type(offsets[0][0]) is int is type(offsets[0][1]))
        self.offsets = offsets if plain else [(int(s), int(e)) for s, e in offsets]
        self.starts = [s for s, _ in self.offsets]
        ends = [e for _, e in self.offsets]
        #: the tokens' ends when they never decrease (tokens do not nest): a window's end is its last
        #: token's, no scan of the window (None: scan)
        self.ends = ends if ends == sorted(ends) else None

    def first_at_or_after(self, pos: int, lo: int = 0, hi: int | None = None) -> int:
        """Index of the first token (in ``[lo, hi)``) that starts at or after ``pos``."""
        return bisect.bisect_left(self.starts, pos, lo, len(self.starts) if hi is None else hi)

    def inside_token(self, pos: int) -> bool:
        """Whether ``pos`` falls strictly inside some token's span."""
        i = bisect.bisect_left(self.starts, pos) - 1
        return i >= 0 and self.offsets[i][1] > pos

    def windows(self, lo: int, hi: int, size: int, overlap: int, *, snap: bool,
                adjust: "Callable[[int, int], int] | None" = None) -> list[tuple[int, int]]:
        """Token windows of ``size`` over tokens ``[lo, hi)``; ``snap`` makes them recursive.

        Each chunk runs from its first token's start to its last token's end (or to a snapped
        cut, which keeps the separator). ``adjust(start, cut)`` may pull a cut back further (the
        markdown strategy keeps fences whole). A cut that still lands inside a word moves back to
        the last whitespace of the window (:meth:`word_cut`). The next chunk starts at the first
        token at or after the cut, stepped back by the overlap (capped at ``size // 2``) to the
        start of a word (:meth:`overlap_start`), always moving forward.
        """
        overlap = min(overlap, size // 2)
        spans: list[tuple[int, int]] = []
        first = lo
        while True:
            last = min(first + size, hi)  # exclusive
            start = self.offsets[first][0]
            end = max(start, self.ends[last - 1] if self.ends is not None else max(e for _, e in self.offsets[first:last]))
            if last < hi:
                if snap:
                    end = self.snap_back(start, end)
                if adjust is not None:
                    end = adjust(start, end)
                end = self.word_cut(start, end)
            spans.append((self.widen_start(start), self.widen_end(end)))
            if last >= hi:
                return spans
            following = self.first_at_or_after(end, lo, hi)
            if following >= hi:
                return spans
            first = self.overlap_start(first, following, overlap)

    def at_boundary(self, pos: int) -> bool:
        """Whether ``pos`` lies between words: the text's edges, whitespace on either side, or a CJK
        character on either side (those scripts write no spaces; each character is a word)."""
        text = self.text
        if pos <= 0 or pos >= len(text):
            return True
        before, after = text[pos - 1], text[pos]
        return before.isspace() or after.isspace() or _CJK.match(before) is not None \
            or _CJK.match(after) is not None

    def covered(self, pos: int) -> bool:
        """Whether the character at ``pos`` belongs to a token."""
        i = bisect.bisect_right(self.starts, pos) - 1
        return i >= 0 and self.offsets[i][1] > pos

    def widen_start(self, start: int) -> int:
        """``start`` moved back over characters no token holds (control characters the tokenizer
        drops) until it lies between words: a chunk never starts inside a word."""
        while not self.at_boundary(start) and not self.covered(start - 1):
            start -= 1
        return start

    def widen_end(self, end: int) -> int:
        """``end`` moved forward over characters no token holds until it lies between words."""
        while not self.at_boundary(end) and not self.covered(end):
            end += 1
        return end

    def word_cut(self, start: int, end: int) -> int:
        """``end`` when it lies between words; else just after the last whitespace of
        ``text[start:end]`` (or CJK character) that is not inside a token (a word longer than the window keeps the
        hard cut: the token budget wins)."""
        if self.at_boundary(end):
            return end
        for pos in range(end - 1, start, -1):
            if self.at_boundary(pos) and not self.inside_token(pos):
                return pos
        return end

    def word_start(self, i: int) -> bool:
        return self.at_boundary(self.offsets[i][0])

    def overlap_start(self, first: int, following: int, overlap: int) -> int:
        """The first token of the chunk after one that began at token ``first`` and whose cut is
        followed by token ``following``: within the overlap, the earliest token that starts a
        sentence or a line before ``following``, else the earliest that starts a word; a cut
        inside a word (a word longer than the window) goes back to that word's start."""
        lowest = max(following - overlap, first + 1)
        starts = [i for i in range(lowest, following + 1) if self.word_start(i)]
        if not starts:
            back = [i for i in range(first + 1, following) if self.word_start(i)]
            return back[-1] if back else following
        strong = [i for i in starts if i < following and self.starts_sentence_or_line(i)]
        return strong[0] if strong else starts[0]

    def starts_sentence_or_line(self, i: int) -> bool:
        before = self.text[max(0, self.offsets[i][0] - 8):self.offsets[i][0]]
        return not before or before.endswith("\n") or _SENTENCE_END.search(before) is not None

    def snap_back(self, start: int, end: int) -> int:
        """Pull the cut ``end`` back to just after the last separator in ``text[start:end]``.

        Separators are tried in :data:`SEPARATORS` order; a cut counts only when it lands
        strictly after the window's midpoint, before ``end`` and not inside a token. Without
        one, the hard cut stays.
        """
        text = self.text
        for sep in SEPARATORS:
            limit = end
            while True:
                pos = text.rfind(sep, start, limit)
                if pos < 0:
                    break
                cut = pos + len(sep)
                if 2 * (cut - start) <= end - start:
                    break  # at or before the midpoint; earlier occurrences are earlier still
                if cut < end and not self.inside_token(cut):
                    return cut
                limit = cut - 1
        return end


@dataclass
class _Unit:
    """A sentence (or run of sentences) and its tokens ``[lo, hi)``."""

    start: int
    end: int
    lo: int
    hi: int

    @property
    def tokens(self) -> int:
        return self.hi - self.lo


def _sentence_units(tokens: _Tokens) -> list[_Unit]:
    """Sentence spans, merged so that no boundary cuts a token and no unit is token-less."""
    bounds = [0]
    for _, end in sentence_spans(tokens.text):
        if end < len(tokens.text) and (tokens.inside_token(end) or not tokens.at_boundary(end)):
            continue  # a sentence boundary inside a token or a word ("a?B"): keep the sentences together
        bounds.append(end)
    if bounds[-1] != len(tokens.text):
        bounds.append(len(tokens.text))
    units: list[_Unit] = []
    for start, end in zip(bounds, bounds[1:]):
        lo = tokens.first_at_or_after(start)
        hi = tokens.first_at_or_after(end) if end < len(tokens.text) else len(tokens.starts)
        if units and (hi == lo or units[-1].tokens == 0):
            units[-1] = _Unit(units[-1].start, end, units[-1].lo, hi)  # fold into the previous
        else:
            units.append(_Unit(start, end, lo, hi))
    return units


def _sentence_chunks(tokens: _Tokens, size: int, overlap: int) -> list[tuple[int, int]]:
    """Whole sentences packed greedily up to ``size`` tokens, re-seeded by the overlap."""
    units = _sentence_units(tokens)
    if len(units) <= 1:
        return tokens.windows(0, len(tokens.starts), size, overlap, snap=True)
    overlap = min(overlap, size // 2)
    spans: list[tuple[int, int]] = []
    i = 0
    while True:
        j, total = i, 0
        while j < len(units) and (j == i or total + units[j].tokens <= size):
            total += units[j].tokens
            j += 1
        if j == i + 1 and units[i].tokens > size:
            spans.extend(_split_long_sentence(tokens, units[i], size, overlap))
        else:
            spans.append((units[i].start, units[j - 1].end))
        if j >= len(units):
            return spans
        i = _reseed(units, i, j, size, overlap)


def _reseed(units: list[_Unit], i: int, j: int, size: int, overlap: int) -> int:
    """Where the chunk after ``units[i:j]`` starts: trailing whole sentences worth at most
    ``overlap`` tokens, never the chunk's first sentence, and only when the next chunk still
    gains the sentence ``j`` (else it would repeat part of this one and nothing more)."""
    k, carried = j, 0
    while k > i + 1 and carried + units[k - 1].tokens <= overlap:
        carried += units[k - 1].tokens
        k -= 1
    if k < j and carried + units[j].tokens > size:
        return j
    return k


def _split_long_sentence(tokens: _Tokens, unit: _Unit, size: int, overlap: int) -> list[tuple[int, int]]:
    """A sentence over ``size`` tokens goes through the recursive splitter; its first and
    last pieces keep the sentence's own boundaries, so chunks still meet between sentences."""
    pieces = tokens.windows(unit.lo, unit.hi, size, overlap, snap=True)
    pieces[0] = (unit.start, pieces[0][1])
    pieces[-1] = (pieces[-1][0], unit.end)
    return pieces


def _cap(tokens: _Tokens, spans: list[tuple[int, int]], max_chunks: int, window: int) -> ChunkPlan:
    """Apply ``max_chunks``: drop the extra chunks and stretch the last kept one to the end."""
    total = len(tokens.starts)
    if max_chunks == 0 or len(spans) <= max_chunks:
        return ChunkPlan(tuple(Chunk(s, e) for s, e in spans), total, False, 0)
    kept = spans[:max_chunks]
    kept[-1] = (kept[-1][0], len(tokens.text))
    in_last = total - tokens.first_at_or_after(kept[-1][0])
    return ChunkPlan(tuple(Chunk(s, e) for s, e in kept), total, True, max(0, in_last - window))


# The splitter's parts that the markdown strategy (``markdown_chunks``) cuts its sections with.
Tokens = _Tokens
check_arguments = _check_arguments
cap = _cap
