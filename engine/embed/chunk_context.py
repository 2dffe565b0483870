"""A document cut into chunks that know where they are: heading path, section, and context line.

:func:`cut_document` parses the text's outline once (``markdown_chunks``), plans the chunks (the
``markdown`` strategy along that outline, the others as before) and gives every chunk

* its **heading path** (``Section > Subsection``): the headings enclosing the chunk's first
  non-heading text, ``None`` before the first heading or in a text without headings;
* its **section**: that heading's section (heading through the end of its sub-sections; the text
  before the first heading for ``None``), widened to hold the chunk;
* with ``chunk_context='heading'``, its **context line**: the title (the first ``from`` column, when
  ``from`` names more than one) and the heading path, a leading heading equal to the title dropped,
  at most a quarter of the chunk budget M in tokens (cut from the left: whole leading
  parts first, then the last part's first tokens). The model reads
  ``context + "\\n" + chunk``; the context's tokens count against M (``markdown`` plans each section
  with the budget its own context leaves; the other strategies reserve the longest context's).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from tesseradb.embed import chunking
from tesseradb.embed.chunking import ChunkPlan
from tesseradb.embed.markdown_chunks import PATH_SEPARATOR, Outline, parse_outline, plan_markdown
from tesseradb.embed.model import Model
from tesseradb.embed.planning import plan_document, plan_whole

CONTEXT_SHARE = 4          # the context line takes at most M // 4 tokens


@dataclass(frozen=True)
class Located:
    """Where one chunk sits: its heading path, its section (start, end), its context line."""
    heading: str | None
    section: tuple[int, int]
    context: str | None


@dataclass(frozen=True)
class Cut:
    plan: ChunkPlan
    outline: Outline
    contexts: "_Contexts | None"

    def locate(self, text: str, start: int, end: int) -> Located:
        index, heading, section = self.outline.place(text, start, end)
        return Located(heading, section, self.contexts.line(index) if self.contexts is not None else None)

    def located(self, text: str) -> list[Located]:
        return [self.locate(text, c.start, c.end) for c in self.plan.chunks]

    def pieces(self, text: str, located: Sequence[Located], model: Model | None = None) -> list[str]:
        """What the model reads of each chunk; given the ``model`` the plan was made for, a chunk it
        reads as it is brings its token ids from the page's tokens (``Model.chunk_text``)."""
        ids = self.plan.ids if model is not None and self.plan.ids is not None else (None,) * len(self.plan.chunks)
        return [model.chunk_text(text[c.start:c.end], chunk_ids) if chunk_ids is not None and not where.context
                else embedded_text(where.context, text[c.start:c.end])
                for c, where, chunk_ids in zip(self.plan.chunks, located, ids)]


def embedded_text(context: str | None, chunk: str) -> str:
    return f"{context}\n{chunk}" if context else chunk


def context_parts(title: str | None, path: Sequence[str]) -> list[str]:
    """Title, then the heading path; a leading heading that repeats the title is dropped."""
    parts = [p for p in path if p]
    if title and parts and parts[0].casefold() == title.casefold():
        parts = parts[1:]
    return ([title] if title else []) + parts


class _Contexts:
    """The capped context line of each heading of one document, and its tokens (computed once)."""

    def __init__(self, model: Model, outline: Outline, title: str | None, cap: int):
        self.model, self.outline, self.title, self.cap = model, outline, title, cap
        self.cache: dict[int, tuple[str | None, int]] = {}

    def _get(self, index: int) -> tuple[str | None, int]:
        if index not in self.cache:
            path = self.outline.headings[index].path if index >= 0 else ()
            self.cache[index] = self._capped(context_parts(self.title, path))
        return self.cache[index]

    def _capped(self, parts: list[str]) -> tuple[str | None, int]:
        """The line of ``parts`` within the cap: whole leading parts dropped first, then the last
        part's leading tokens."""
        while parts and self.cap >= 1:
            line = PATH_SEPARATOR.join(parts)
            offsets = self.model.token_offsets(line)
            if not offsets:
                return None, 0
            if len(offsets) <= self.cap:
                return line, len(offsets)
            if len(parts) == 1:
                return line[offsets[-self.cap][0]:], self.cap
            parts = parts[1:]
        return None, 0

    def line(self, index: int) -> str | None:
        return self._get(index)[0]

    def cost(self, index: int) -> int:
        return self._get(index)[1]

    def most(self) -> int:
        return max(self.cost(i) for i in range(-1, len(self.outline.headings)))


def cut_document(model: Model, text: str, *, strategy: str, max_tokens: int = 0, overlap_tokens: int = 0,
                 max_chunks: int = 0, chunk_context: str = "none", title: str | None = None) -> Cut:
    """The chunks of ``text`` for a column with these settings, with what :class:`Cut` tells of each."""
    outline = parse_outline(text)
    size = chunking.effective_size(max_tokens, model.window)
    contexts = _Contexts(model, outline, (title or "").strip() or None, size // CONTEXT_SHARE) \
        if chunk_context == "heading" else None
    settings = {"overlap_tokens": overlap_tokens, "max_chunks": max_chunks}
    if strategy == "markdown":
        plan = plan_whole(model, text, lambda offsets: plan_markdown(
            text, offsets, outline, max_tokens=max_tokens, window=model.window,
            context_cost=contexts.cost if contexts else None, **settings))
    else:
        reserve = contexts.most() if contexts is not None and strategy != "truncate" else 0
        plan = plan_document(model, text, strategy=strategy, max_tokens=size - reserve if reserve else max_tokens,
                             **settings)
    return Cut(plan, outline, contexts)


def locate_spans(model: Model, text: str, spans: Sequence[tuple[int, int]], *, max_tokens: int = 0,
                 chunk_context: str = "none", title: str | None = None) -> list[Located]:
    """Heading path, section and context line of chunks cut elsewhere (a shard's stored spans): what
    :func:`cut_document` gives for the same spans."""
    outline = parse_outline(text)
    size = chunking.effective_size(max_tokens, model.window)
    contexts = _Contexts(model, outline, (title or "").strip() or None, size // CONTEXT_SHARE) \
        if chunk_context == "heading" else None
    return [Cut(ChunkPlan((), 0, False, 0), outline, contexts).locate(text, s, e) for s, e in spans]
