"""Where a text's headings are, and ``chunk_strategy='markdown'``: chunks that follow the sections.

One CommonMark parse (markdown-it-py, tables enabled, inline parsing off: only block structure is
read) gives the :class:`Outline` of a text: its top-level ATX and setext headings (a ``#`` line in a
code fence is code, a heading inside a block quote or list item does not start a section), the
blocks that are not split while they fit (code fences and tables), and where YAML front matter at
the very top of the text ends. Every strategy's chunks get their heading path from it
(:func:`Outline.path_at`); the ``markdown`` strategy also cuts along it (:func:`plan_markdown`):

* a section (its heading through the end of its sub-sections) that fits the budget is one chunk;
* a longer one is split at its sub-headings, level by level; a heading-only part (a heading with no
  text before its first sub-heading) joins its first child;
* a part still too long is cut like ``recursive``, over that part's tokens only, so the overlap never
  crosses a heading; a cut that would fall inside a code fence or table that fits a chunk moves back
  to the block's start;
* a text without headings is cut exactly like ``recursive``;
* a single line before the first heading (the title, when ``from='title,body'``) is never a chunk of
  its own: it joins the first section's first chunk (and, like a heading line, it is not "text" when
  a chunk's heading path is found).

Offsets are Python ``str`` indices into the text. Pure functions, no model inside.
"""
from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache


from tesseradb.embed import chunking
from tesseradb.embed.chunking import ChunkPlan

PATH_SEPARATOR = " > "
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_FRONT_OPEN = re.compile(r"---[ \t]*(?:\r\n|\r|\n)")
_FRONT_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*(?:\r\n|\r|\n|\Z)", re.MULTILINE)
_ATOMIC = ("fence", "code_block", "table_open")


@lru_cache(maxsize=1)
def _parser() -> "MarkdownIt":
    from markdown_it import MarkdownIt     # loads with the first markdown text, not at start-up
    md = MarkdownIt("commonmark").enable("table")
    md.core.ruler.disable(["inline", "text_join"])     # block structure is all we read
    return md


@dataclass(frozen=True)
class Heading:
    start: int          # the heading's first character (its line's start)
    end: int            # just after its last line's text (the line break excluded)
    level: int          # 1..6
    title: str
    path: tuple[str, ...]     # the titles of the headings enclosing it, itself last
    section_end: int    # where its section ends: the next heading of the same or a higher level


@dataclass(frozen=True)
class Outline:
    length: int
    body_start: int                     # after front matter (0 without)
    headings: tuple[Heading, ...]
    blocks: tuple[tuple[int, int], ...]  # code fences and tables: (start, end), in order
    starts: tuple[int, ...] = ()         # each heading's start (for bisect)
    lead: tuple[int, int] | None = None  # a lone line before the first heading (the title): no text

    def heading_index(self, pos: int) -> int:
        """The innermost heading enclosing ``pos`` (-1: none, the text before the first heading)."""
        return bisect.bisect_right(self.starts, pos) - 1

    def first_text(self, start: int, end: int, text: str) -> int:
        """The first character of ``text[start:end]`` that is neither whitespace nor a heading line
        (nor the :attr:`lead`); ``end`` when there is none."""
        starts = self.starts
        pos = start
        while pos < end:
            while pos < end and text[pos].isspace():
                pos += 1
            i = bisect.bisect_right(starts, pos) - 1
            if pos < end and i >= 0 and self.headings[i].start <= pos < self.headings[i].end:
                pos = self.headings[i].end
                continue
            if pos < end and self.lead is not None and self.lead[0] <= pos < self.lead[1]:
                pos = self.lead[1]
                continue
            return pos
        return end

    def chunk_heading(self, text: str, start: int, end: int) -> int:
        """The heading index of a chunk: the heading enclosing its first non-heading text (a chunk of
        headings only takes its last one's)."""
        pos = self.first_text(start, end, text)
        return self.heading_index(pos if pos < end else max(start, end - 1))

    def place(self, text: str, start: int, end: int) -> tuple[int, str | None, tuple[int, int]]:
        """A chunk's heading index, heading path and section, widened to hold the chunk."""
        index = self.chunk_heading(text, start, end)
        sec_start, sec_end = self.section(index)
        return index, self.path_text(index), (min(sec_start, start), max(sec_end, end))

    def path_text(self, index: int) -> str | None:
        return PATH_SEPARATOR.join(self.headings[index].path) if index >= 0 else None

    def section(self, index: int) -> tuple[int, int]:
        """The section of heading ``index``: its heading through the end of its sub-sections; for -1
        the text before the first heading (after front matter)."""
        if index < 0:
            return self.body_start, self.headings[0].start if self.headings else self.length
        return self.headings[index].start, self.headings[index].section_end


def front_matter_end(text: str) -> int:
    """Where YAML front matter (``---`` on the first line, up to a ``---`` or ``...`` line) ends; 0
    when the text has none."""
    opening = _FRONT_OPEN.match(text)
    if opening is None:
        return 0
    closing = _FRONT_CLOSE.search(text, opening.end())
    return closing.end() if closing else 0


def parse_outline(text: str) -> Outline:
    """The outline of ``text`` (see the module docstring)."""
    body = front_matter_end(text)
    source = text[body:]
    lines = [0] + [m.end() for m in _LINE_BREAK.finditer(source)]
    ends = [m.start() for m in _LINE_BREAK.finditer(source)] + [len(source)]

    def at(line: int) -> int:
        return body + (lines[line] if line < len(lines) else len(source))

    raw: list[tuple[int, int, int, str]] = []
    blocks: list[tuple[int, int]] = []
    tokens = _parser().parse(source) if source.strip() else []
    for n, tok in enumerate(tokens):
        if tok.type == "heading_open" and tok.level == 0 and tok.map:
            first, last = tok.map
            title = " ".join(tokens[n + 1].content.split()) if n + 1 < len(tokens) else ""
            raw.append((at(first), body + ends[min(last, len(ends)) - 1], int(tok.tag[1]), title))
        elif tok.type in _ATOMIC and tok.map:
            blocks.append((at(tok.map[0]), body + ends[min(tok.map[1], len(ends)) - 1]))
    headings = _nest(raw, text)
    return Outline(len(text), body, headings, tuple(blocks), tuple(h.start for h in headings),
                   _lead(text, body, headings))


def _lead(text: str, body: int, headings: tuple[Heading, ...]) -> tuple[int, int] | None:
    """The text before the first heading when it is one line (what ``from='title,body'`` puts there:
    the title): it is no passage of its own and joins the first section (issue 32)."""
    if not headings:
        return None
    before = text[body:headings[0].start]
    stripped = before.strip()
    if not stripped or "\n" in stripped:
        return None
    start = body + before.index(stripped)
    return start, start + len(stripped)


def _nest(raw: list[tuple[int, int, int, str]], text: str) -> tuple[Heading, ...]:
    """Each heading's path and section end (trailing whitespace left out), from the (start, end, level,
    title) list."""
    length = len(text)
    paths: list[tuple[str, ...]] = []
    stack: list[tuple[int, str]] = []
    for _, _, level, title in raw:
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        paths.append(tuple(t for _, t in stack))
    section_ends = [length] * len(raw)
    open_: list[int] = []
    for i, (start, _, level, _) in enumerate(raw):
        while open_ and raw[open_[-1]][2] >= level:
            section_ends[open_.pop()] = start
        open_.append(i)
    return tuple(Heading(s, e, lv, t, p, _trimmed(text, s, se))
                 for (s, e, lv, t), p, se in zip(raw, paths, section_ends))


def _trimmed(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


# --------------------------------------------------------------------------- the strategy


ContextCost = Callable[[int], int]     # heading index -> tokens its context line takes from the budget


def plan_markdown(text: str, offsets: Sequence[tuple[int, int]], outline: Outline, *, max_tokens: int = 0,
                  overlap_tokens: int = 0, max_chunks: int = 0, window: int = 510,
                  context_cost: ContextCost | None = None) -> ChunkPlan:
    """Cut ``text`` along its sections (see the module docstring). ``context_cost(i)`` is what the
    context line of a chunk under heading ``i`` takes from the budget (0 without context)."""
    chunking.check_arguments(text, offsets, "recursive", max_tokens, overlap_tokens, max_chunks, window)
    size = chunking.effective_size(max_tokens, window)
    cost = context_cost or (lambda _: 0)
    tokens = chunking.Tokens(text, offsets)
    cutter = _Cutter(text, tokens, outline, size, min(overlap_tokens, size // 2), cost)
    if not outline.headings and outline.body_start == 0:
        budget = max(1, size - cost(-1))
        return chunking.plan_chunks(text, offsets, strategy="recursive", max_tokens=budget,
                                    overlap_tokens=min(overlap_tokens, budget // 2), max_chunks=max_chunks,
                                    window=window)
    if cutter.count(outline.body_start, len(text)) + cost(outline.chunk_heading(text, 0, len(text))) <= size:
        spans = [(outline.body_start, len(text))]
    else:
        spans = cutter.document()
    return chunking.cap(tokens, spans or [(outline.body_start, len(text))], max_chunks, window)


@dataclass
class _Node:
    index: int                      # heading index, -1 for the text before the first heading
    start: int
    end: int
    children: list["_Node"]


def _tree(outline: Outline) -> list[_Node]:
    """The top-level sections (the text before the first heading first, as a node of its own)."""
    roots: list[_Node] = []
    stack: list[tuple[int, _Node]] = []
    for i, h in enumerate(outline.headings):
        node = _Node(i, h.start, h.section_end, [])
        while stack and stack[-1][0] >= h.level:
            stack.pop()
        (stack[-1][1].children if stack else roots).append(node)
        stack.append((h.level, node))
    start, end = outline.section(-1)
    return ([_Node(-1, start, end, [])] if start < end else []) + roots


class _Cutter:
    def __init__(self, text: str, tokens: "chunking.Tokens", outline: Outline, size: int, overlap: int,
                 cost: ContextCost):
        self.text, self.tokens, self.outline = text, tokens, outline
        self.size, self.overlap, self.cost = size, overlap, cost
        self.block_starts = [s for s, _ in outline.blocks]

    def token_range(self, start: int, end: int) -> tuple[int, int]:
        return self.tokens.first_at_or_after(start), self.tokens.first_at_or_after(end)

    def count(self, start: int, end: int) -> int:
        lo, hi = self.token_range(start, end)
        return hi - lo

    def document(self) -> list[tuple[int, int]]:
        spans: list[tuple[int, int]] = []
        nodes = _tree(self.outline)
        lead = None
        if nodes and nodes[0].index == -1 and self.outline.first_text(nodes[0].start, nodes[0].end, self.text) \
                >= nodes[0].end:
            lead = nodes.pop(0)          # only whitespace, or only the title, before the first heading
        for n, node in enumerate(nodes):
            self.section(node, lead.start if lead is not None and n == 0 else node.start, spans)
        return spans

    def section(self, node: _Node, start: int, spans: list[tuple[int, int]]) -> None:
        """Chunks of ``node``'s section from ``start`` (earlier than its heading when a heading-only
        parent joins it)."""
        budget = self.size - self.cost(node.index)
        if self.count(start, node.end) <= budget or not node.children:
            self.part(start, node.end, budget, spans)
            return
        first = node.children[0]
        if self.outline.first_text(start, first.start, self.text) >= first.start:
            self.section(first, start, spans)          # heading-only: it joins its first child
        else:
            self.part(start, first.start, budget, spans)
            self.section(first, first.start, spans)
        for child in node.children[1:]:
            self.section(child, child.start, spans)

    def part(self, start: int, end: int, budget: int, spans: list[tuple[int, int]]) -> None:
        """One stretch of text between headings' boundaries: one chunk, or recursive windows of it."""
        lo, hi = self.token_range(start, end)
        if hi <= lo:
            return
        budget = max(1, budget)
        if hi - lo <= budget:
            spans.append((self.tokens.offsets[lo][0], max(e for _, e in self.tokens.offsets[lo:hi])))
            return
        spans.extend(self.windows(lo, hi, budget))

    def windows(self, lo: int, hi: int, size: int) -> list[tuple[int, int]]:
        """``recursive`` windows over tokens ``[lo, hi)``, keeping whole fences and tables that fit."""
        return self.tokens.windows(lo, hi, size, self.overlap, snap=True,
                                   adjust=lambda start, end: self.keep_blocks(start, end, size))

    def keep_blocks(self, start: int, end: int, size: int) -> int:
        """A cut inside a fence or table that fits in ``size`` tokens moves back to the block's start
        (when that leaves the chunk some text)."""
        i = bisect.bisect_right(self.block_starts, end - 1) - 1
        if i < 0:
            return end
        block_start, block_end = self.outline.blocks[i]
        if not block_start < end < block_end or block_start <= start or self.count(block_start, block_end) > size:
            return end
        pulled = self.text[start:block_start].rstrip()
        return start + len(pulled) if pulled else end
