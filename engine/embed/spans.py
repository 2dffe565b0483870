"""What the model saw of each chunk: its span (clipped where the model truncated it) and its tokens.

Shared by the statements that show chunks (``SHOW CHUNKS``, ``CALL CHUNKS``) and by the functions
that report the chunk a knn() search matched (``knn_chunk_text()`` ...), so that all of them print the
same spans. Offsets are Python ``str`` indices (code points).

A chunk is embedded as ``text[start:end]``, and the model reads at most ``window`` content tokens of
it. Only two kinds of chunk can be longer than that: the single chunk of ``truncate`` and the last
chunk that ``max_chunks`` stretched to the end of the text. Their span ends at the last token the
model kept. ``mean`` stores one vector for the whole text, so its one span is the whole text.
"""
from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from tesseradb.embed.chunk_context import cut_document, embedded_text


@dataclass(frozen=True)
class ChunkView:
    """One chunk as SHOW CHUNKS and CALL CHUNKS list it (``chunk`` is 1-based)."""
    chunk: int
    start: int | None
    end: int | None
    tokens: int | None
    text: str | None
    heading: str | None = None       # the chunk's heading path (embed.chunk_context)
    embedded: str | None = None      # what the model reads: the context line, a line break, the text


def may_be_cut(strategy: str, max_chunks: int, ordinal: int, count: int) -> bool:
    """Whether the model may have truncated chunk ``ordinal`` (0-based) of ``count``."""
    return strategy == "truncate" or (strategy != "mean" and max_chunks > 0 and ordinal == count - 1)


def kept_end(model: Any, text: str, start: int, end: int) -> int:
    """Where the model stopped reading ``text[start:end]``: the end of the last token within its
    window (``end`` itself when the span fits)."""
    if end - start <= model.window:           # every token covers at least one character
        return end
    offsets = model.token_offsets(text[start:end])
    if len(offsets) <= model.window:
        return end
    return start + offsets[model.window - 1][1]


def _token_count(starts: Sequence[int], start: int, end: int, window: int) -> int:
    """Tokens that start inside ``[start, end)``, at most the model's window."""
    return min(bisect.bisect_left(starts, end) - bisect.bisect_left(starts, start), window)


def views(model: Any, text: str, spans: Sequence[tuple[int | None, int | None]], *,
          strategy: str, max_chunks: int) -> list[ChunkView]:
    """The chunks of ``text`` (stored or planned spans, in order) as the model saw them; a span of
    NULLs (supplied vectors) stays NULL. (Heading and embedded text are the caller's to add.)"""
    starts = [s for s, _ in model.token_offsets(text)] if any(s is not None for s, _ in spans) else []
    out = []
    for n, (start, end) in enumerate(spans):
        if start is None or end is None:
            out.append(ChunkView(n + 1, None, None, None, None))
            continue
        end = min(end, len(text))
        if may_be_cut(strategy, max_chunks, n, len(spans)):
            end = kept_end(model, text, start, end)
        tokens = _token_count(starts, start, end, model.window) if start < end else 0
        out.append(ChunkView(n + 1, start, end, tokens, text[start:end]))
    return out


def preview(model: Any, text: str, *, strategy: str, max_tokens: int = 0, overlap_tokens: int = 0,
            max_chunks: int = 0, chunk_context: str = "none") -> list[ChunkView]:
    """How a column with these settings would cut ``text`` (nothing is embedded or stored), with each
    chunk's heading path and the text the model would read."""
    cut = cut_document(model, text, strategy=strategy, max_tokens=max_tokens, overlap_tokens=overlap_tokens,
                       max_chunks=max_chunks, chunk_context=chunk_context)
    located = cut.located(text)
    if strategy == "mean":
        whole = cut.locate(text, 0, len(text))
        pieces = cut.pieces(text, located)
        listed = views(model, text, [(0, len(text))], strategy=strategy, max_chunks=max_chunks)
        embedded = pieces[0] if len(pieces) == 1 else None          # several chunks: their average
        return [replace(listed[0], heading=whole.heading, embedded=embedded)]
    spans = [(c.start, c.end) for c in cut.plan.chunks]
    listed = views(model, text, spans, strategy=strategy, max_chunks=max_chunks)
    return [replace(v, heading=where.heading, embedded=embedded_text(where.context, v.text or ""))
            for v, where in zip(listed, located)]
