"""Rules tried for bench_passages.py (not the engine's): the first document's best few chunks by the
engine's rule rescored at a finer grain with the column's model.

Each candidate chunk is cut into **units** (:func:`units`): a fenced code block, a list item, a table
row or a heading line is one unit; prose is cut into sentences (ICU, as the ``sentence`` chunk strategy
cuts); ``"win200"`` joins each unit with the following ones until about 200 characters. The units are
embedded in one model call (optionally after the chunk's context line, title > heading path, as the
column embeds its chunks), and a candidate's fine score is the best cosine of the query's vector to
its units. The chosen chunk is the candidate with the highest engine score + ``weight`` x fine score.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

FENCE = re.compile(r"^(```|~~~)")
UNIT_LINE = re.compile(r"^(?:[-*+]|\d+[.)])\s|^\||^#")
WINDOW_CHARS = 200
PATH_SEPARATOR = " > "


def units(text: str, mode: str = "sentence") -> list[str]:
    """``text`` as units (see the module docstring); ``mode``: ``"sentence"`` or ``"win200"``."""
    from tesseradb.embed.chunking import sentence_spans
    out: list[str] = []
    prose: list[str] = []

    def flush() -> None:
        if prose:
            block = "\n".join(prose)
            out.extend(t for t in (block[s:e].strip() for s, e in sentence_spans(block)) if t)
            prose.clear()

    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        if FENCE.match(line):
            flush()
            j = i + 1
            while j < len(lines) and not FENCE.match(lines[j].strip()):
                j += 1
            out.append("\n".join(lines[i:j + 1]))
            i = j + 1
            continue
        if not line:
            flush()
        elif UNIT_LINE.match(line):
            flush()
            out.append(line)
        else:
            prose.append(lines[i])
        i += 1
    flush()
    out = [u for u in out if len(u.strip()) > 1]
    if mode == "win200":
        joined = []
        for k in range(len(out)):
            t, m = out[k], k + 1
            while len(t) < WINDOW_CHARS and m < len(out):
                t, m = t + "\n" + out[m], m + 1
            joined.append(t)
        out = joined
    return out or [text]


def context_line(title: str | None, heading: str | None) -> str | None:
    """The chunk's context line as chunk_context='heading' writes it (title, then the heading path
    without a leading heading equal to the title; not capped here)."""
    path = heading.split(PATH_SEPARATOR) if heading else []
    if title and path and path[0].casefold() == title.casefold():
        path = path[1:]
    parts = ([title] if title else []) + path
    return PATH_SEPARATOR.join(parts) if parts else None


def choose(model, question: str, title: str | None, chunks: Sequence[dict], engine: dict[int, float],
           rule: tuple) -> dict:
    """The chunk (a ``knn_chunks`` row) the rule ``("fine", mode, with_context, candidates, weight)`` picks."""
    _, mode, with_context, candidates, weight = rule
    order = sorted(chunks, key=lambda c: (-engine[c["chunk"]], c["chunk"]))[:candidates]
    texts, owner = [], []
    for c in order:
        line = context_line(title, c.get("heading")) if with_context else None
        for u in units(c["text"], mode):
            texts.append(f"{line}\n{u}" if line else u)
            owner.append(c["chunk"])
    sims = model.embed(texts) @ model.embed_query(question)
    fine: dict[int, float] = {}
    for chunk, s in zip(owner, sims.tolist()):
        fine[chunk] = max(fine.get(chunk, -1.0), s)
    return max(order, key=lambda c: (engine[c["chunk"]] + weight * fine[c["chunk"]], -c["chunk"]))

