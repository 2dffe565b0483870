"""A document's chunk plan for a model column, tokenizing only as much text as the kept chunks need.

:func:`tesseradb.embed.chunking.plan_chunks` wants the offsets of every token of the text. For a
long document whose column keeps few vectors (``max_chunks`` set, or ``truncate``) most of those
tokens are never embedded, and holding them costs far more than the text: a 20 MB page is about
five million tokens, several hundred MB as Python offsets. So for such a document only a prefix
of the text is tokenized, cut after whitespace (the tokenizer never joins characters across it, so
the prefix's tokens are the whole text's first tokens), doubled until the plan of the prefix shows
more chunks than are kept; the rest of the text is only counted, in pieces (``Model.count_tokens``),
for the warning that says how much the model saw.

Why the prefix's first ``max_chunks`` chunks are the whole text's: the token windows are made left
to right, each from its own tokens and the text between them, and the splitter went on past chunk
``max_chunks`` only because chunk ``max_chunks``'s window ended before the prefix's last token. For
``sentence`` one more chunk is required, so that the sentence boundary ICU finds at the end of the
prefix (which may depend on the next few characters) never decides a kept chunk.
"""
from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import replace

from tesseradb.embed import chunking
from tesseradb.embed.chunking import Chunk, ChunkPlan
from tesseradb.embed.markdown_chunks import parse_outline, plan_markdown
from tesseradb.embed.model import Model, whitespace_cut

#: Documents shorter than this are tokenized whole (the prefix search would save nothing).
WHOLE_CHARS = 1 << 16
#: The first prefix tried holds about this many characters per token it has to cover.
CHARS_PER_TOKEN = 6


def plan_document(model: Model, text: str, *, strategy: str, max_tokens: int = 0, overlap_tokens: int = 0,
                  max_chunks: int = 0) -> ChunkPlan:
    """The chunks of ``text`` for a column of ``model`` (what ``plan_chunks`` gives on all tokens)."""
    settings = {"strategy": strategy, "max_tokens": max_tokens, "overlap_tokens": overlap_tokens,
                "max_chunks": max_chunks, "window": model.window}
    if strategy == "markdown":          # sections need the whole outline: no prefix planning
        return plan_whole(model, text, lambda offsets: plan_markdown(
            text, offsets, parse_outline(text), max_tokens=max_tokens, overlap_tokens=overlap_tokens,
            max_chunks=max_chunks, window=model.window))
    bounded = strategy == "truncate" or max_chunks > 0
    if len(text) <= WHOLE_CHARS or not bounded or not model.splits_on_whitespace:
        return plan_whole(model, text, lambda offsets: chunking.plan_chunks(text, offsets, **settings))
    if strategy == "truncate":
        total = model.count_tokens(text)
        return ChunkPlan((Chunk(0, len(text)),), total, False, max(0, total - model.window))
    return _plan_prefix(model, text, settings)


def plan_whole(model: Model, text: str, plan_of: Callable[[list[tuple[int, int]]], ChunkPlan]) -> ChunkPlan:
    """``plan_of`` the whole text's token offsets, with each chunk's token ids when the model takes
    them from the page's tokens (embed/token_ids.py: the model does not tokenize those chunks again)."""
    if not getattr(model, "reads_ids", False):
        return plan_of(model.token_offsets(text))
    page = model.page_tokens(text)
    plan = plan_of(page.offsets)
    return replace(plan, ids=page.chunk_ids(plan.chunks, model.window))


def _plan_prefix(model: Model, text: str, settings: dict) -> ChunkPlan:
    max_chunks = settings["max_chunks"]
    wanted = max_chunks + (2 if settings["strategy"] == "sentence" else 1)
    size = chunking.effective_size(settings["max_tokens"], model.window)
    reach = (wanted + 1) * size * CHARS_PER_TOKEN
    while True:
        cut = whitespace_cut(text, reach)
        if cut >= len(text):
            return plan_whole(model, text, lambda offsets: chunking.plan_chunks(text, offsets, **settings))
        prefix = text[:cut]
        offsets = model.token_offsets(prefix)
        plan = chunking.plan_chunks(prefix, offsets, **{**settings, "max_chunks": 0})
        if len(plan.chunks) >= wanted:
            break
        reach = 2 * max(cut, reach)     # grows even when the cut stays at an early space
    kept = list(plan.chunks[:max_chunks])
    kept[-1] = Chunk(kept[-1].start, len(text))
    total = len(offsets) + model.count_tokens(text, cut)
    in_last = total - bisect.bisect_left([s for s, _ in offsets], kept[-1].start)
    return ChunkPlan(tuple(kept), total, True, max(0, in_last - model.window))
