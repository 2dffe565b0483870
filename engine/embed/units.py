"""Passage units: each chunk's small pieces, embedded when the row is (``passage_units='windows'``).

A chunk of 256 tokens often holds several answers; its one vector says what the chunk is about, not
which of its sentences answers a question. With ``passage_units='windows'`` each chunk is also cut
into **units** and each unit embedded, after the chunk's context line (title > heading path, as the
chunk itself is embedded): a fenced code block, a list item, a table row or a heading line is one
piece, prose is cut into sentences (ICU, as ``chunk_strategy='sentence'`` cuts); each piece joined
with the ones after it up to :data:`WINDOW_CHARS` characters is a unit (``windows``: overlapping, one
per piece). The vectors go to the column's units table (``storage.unit_table``, float16) beside the
chunk rows; a text query then scores them with the vector it already has (vectors/passage_units.py).

Reuse: a chunk whose exact embedded text (its ``text_key``, embed/reuse.py) already has units in a
column with the same model and unit kind takes them; the units of other chunks go to the model
through ``reuse.embed_pieces``, so the pass before the write lock (embed/prepared.py) runs them too.
"""
from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from tesseradb.storage import unit_table

from tesseradb.context import Context
from tesseradb.embed import reuse
from tesseradb.embed.chunk_context import embedded_text

WINDOW_CHARS = 200
FENCE = re.compile(r"^(```|~~~)")
UNIT_LINE = re.compile(r"^(?:[-*+]|\d+[.)])\s|^\||^#")


def pieces(text: str) -> list[str]:
    """``text`` cut into pieces: fenced code blocks, list items, table rows and heading lines whole,
    prose by sentences (blank lines end a paragraph). Pieces of one character or none are dropped."""
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
    return [u for u in out if len(u.strip()) > 1]


def windows(text: str, chars: int = WINDOW_CHARS) -> list[str]:
    """One unit per piece: the piece joined with the pieces after it until ``chars`` characters."""
    parts = pieces(text)
    out = []
    for k in range(len(parts)):
        unit, m = parts[k], k + 1
        while len(unit) < chars and m < len(parts):
            unit, m = unit + "\n" + parts[m], m + 1
        out.append(unit)
    return out or [text]


KINDS = {"windows": windows}


def unit_texts(kind: str, chunk: str, context: str | None) -> list[str]:
    """What the model reads for each unit of ``chunk``: the context line, then the unit."""
    return [embedded_text(context, u) for u in KINDS[kind](chunk)]


def _stored(db: Context, fingerprint: str, kind: str, keys: Sequence[str]) -> dict[str, bytes]:
    """text_key -> stored units, from the columns with this model and unit kind."""
    wanted = [k for k in dict.fromkeys(keys) if k]
    found: dict[str, bytes] = {}
    for table in db.tables.values():
        for spec in table.vectors.values():
            if wanted and spec.model_fingerprint == fingerprint and spec.passage_units == kind:
                found.update(unit_table.find(db.store, table.layout(spec.column), wanted))
                wanted = [k for k in wanted if k not in found]
    return found


def embed_units(db: Context, model, kind: str, chunks: Sequence[tuple[str, str | None]],
                keys: Sequence[str | None]) -> list[bytes]:
    """Each chunk's units blob (``storage.unit_table.pack``); ``chunks``: (chunk text, context line),
    ``keys``: each chunk's text key. Stored units are taken by key; the rest are embedded."""
    stored = _stored(db, model.fingerprint, kind, [k for k in keys if k])
    texts: list[str] = []
    owners: list[int] = []
    for i, ((chunk, context), key) in enumerate(zip(chunks, keys)):
        if key is None or key not in stored:
            for t in unit_texts(kind, chunk, context):
                texts.append(t)
                owners.append(i)
    made: dict[int, list[np.ndarray]] = {}
    if texts:
        # progress: a second pass after the chunks' (the shell's line adds it to theirs)
        vectors = reuse.embed_pieces(db, model, texts, on_progress=db.on_progress,
                                     should_stop=db.check_cancelled).vectors
        for i, v in zip(owners, vectors):
            made.setdefault(i, []).append(v)
    out = []
    for i, key in enumerate(keys):
        if i in made:
            out.append(unit_table.pack(np.stack(made[i])))
        else:
            out.append(stored[key])       # type: ignore[index]
    return out
