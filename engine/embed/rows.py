"""Embedding on write: text -> chunks -> vectors, batched across all rows and chunks of a statement."""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from tesseradb import embed
from tesseradb.embed import chunking
from tesseradb.embed import reuse, units
from tesseradb.embed.chunk_context import Cut, Located, cut_document
from tesseradb.embed.model import Model
from tesseradb.embed.planning import plan_document
from tesseradb.embed.prepared import cut_key
from tesseradb.catalog.vector_columns import VectorSpec

from tesseradb.context import Context
from tesseradb.errors import DataError, Place, UserError, at

SINGLE_VECTOR = {"truncate", "mean"}
CUT_THREADS = 2                 # texts cut at once (_cut_all)
CUT_POOL_CHARS = 1 << 16        # a statement with less text than this cuts it on its own thread


@dataclass(frozen=True)
class Embedded:
    vectors: np.ndarray                          # (n, dims) float32
    spans: list[tuple[int | None, int | None]]   # one character span per vector
    keys: list[str | None] | None = None         # per vector: the key of the text it embeds (embed.reuse)
    located: list[Located] | None = None         # per vector: heading path, section, context line
    units: list[bytes] | None = None             # per vector: its passage units (embed/units.py), packed


def location_row(emb: Embedded, ordinal: int) -> tuple:
    """The chunk row's location columns (``storage.chunk_table.LOCATION_COLUMNS``) for vector ``ordinal``."""
    if not emb.located or ordinal >= len(emb.located):
        return (None, None, None, None)
    where = emb.located[ordinal]
    return (where.heading, where.section[0], where.section[1], where.context)


def separator(spec: VectorSpec) -> str:
    """How the ``from`` columns are joined: one space; a blank line for ``markdown`` (a body's first
    heading stays a heading)."""
    return "\n\n" if spec.chunk_strategy == "markdown" else " "


def source_title(spec: VectorSpec, values: dict[str, object]) -> str | None:
    """The title of the context line: the first ``from`` column, when ``from`` names more than one."""
    if len(spec.from_columns) < 2:
        return None
    value = values.get(spec.from_columns[0].lower())
    return None if value is None else str(value)


def source_text(spec: VectorSpec, values: dict[str, object]) -> str:
    """The text a model column embeds: its ``from`` columns joined (:func:`separator`), in order."""
    return separator(spec).join("" if values.get(c.lower()) is None else str(values[c.lower()]) for c in spec.from_columns)


def check_text(text: str, label: Place | str) -> None:
    """Text for a model must be encodable as UTF-8 (a Python str may hold lone surrogates). ``label``:
    the row (``errors.Place``) or the call ("knn() query") the text belongs to."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise at(label, f"Incorrect string value: not valid UTF-8 ({exc.reason} at position {exc.start})",
                 DataError) from None


def embed_texts(db: Context, spec: VectorSpec, texts: list[str], labels: list[Place],
                titles: list[str | None] | None = None, on_cut: Callable[[], None] | None = None) -> list[Embedded]:
    """Cut, locate and embed every text (``titles``: :func:`source_title` of each, for the context).
    ``on_cut()`` is called once the texts are cut, before the model runs (a first pass starts its
    read-ahead then: sql/statements/embed_first_load.py)."""
    model = embed.spec_model(spec, db.remote_access)
    for text, label in zip(texts, labels):
        check_text(text, label)
    cuts, where = [], []
    for (cut, located), label in zip(_cut_all(db, model, spec, texts, titles or [None] * len(texts)), labels):
        _warn_about_loss(db, spec, cut.plan, label)
        cuts.append(cut)
        where.append(located)
    pieces = [p for text, cut, located in zip(texts, cuts, where) for p in cut.pieces(text, located, model)]
    if on_cut is not None:
        on_cut()
    result = reuse.embed_pieces(db, model, pieces, on_progress=db.on_progress, should_stop=db.check_cancelled)
    _note_reuse(db, spec, result)
    out = assemble(spec.chunk_strategy, texts, [c.plan for c in cuts], result.vectors, result.keys)
    out = [_with_location(e, cut, text, located) for e, cut, text, located in zip(out, cuts, texts, where)]
    return _with_units(db, model, spec, texts, out) if spec.passage_units != "none" else out


def _with_units(db: Context, model: embed.Model, spec: VectorSpec, texts: list[str],
                out: list[Embedded]) -> list[Embedded]:
    """Each chunk's passage units (``passage_units``, embed/units.py), made or reused."""
    chunks, keys = [], []
    for text, emb in zip(texts, out):
        for n, (start, end) in enumerate(emb.spans):
            chunks.append((text[start:end], emb.located[n].context if emb.located else None))
            keys.append(emb.keys[n] if emb.keys else None)
    blobs = units.embed_units(db, model, spec.passage_units, chunks, keys)
    done, at = [], 0
    for emb in out:
        n = len(emb.spans)
        done.append(Embedded(emb.vectors, emb.spans, emb.keys, emb.located, blobs[at:at + n]))
        at += n
    return done


def _cut_all(db: Context, model: embed.Model, spec: VectorSpec, texts: list[str],
             titles: list[str | None]) -> list[tuple[Cut, list[Located]]]:
    """Every text's cut and chunk locations, in order. A statement with much text to cut has two
    texts cut at once: the tokenizer (Rust, which lets go of the GIL) of one runs beside the chunk
    planner and the outline (Python) of the other. The cuts are the same either way."""
    def one(i: int) -> tuple[Cut, list[Located]]:
        cut = _cut(db, model, spec, texts[i], titles[i])
        return cut, cut.located(texts[i])

    if len(texts) < 2 or sum(map(len, texts)) < CUT_POOL_CHARS or not isinstance(model, Model):
        return [one(i) for i in range(len(texts))]
    with ThreadPoolExecutor(CUT_THREADS, thread_name_prefix="tessera-cut") as pool:
        return list(pool.map(one, range(len(texts))))


def _cut(db: Context, model: embed.Model, spec: VectorSpec, text: str, title: str | None) -> Cut:
    """The text's cut, made once per statement: before the write lock when it could be
    (embed/prepared.py), under it otherwise."""
    prepared = getattr(db, "prepared", None)
    if prepared is None:
        return cut_text(model, spec, text, title)
    key = cut_key(model.fingerprint, spec, text, title)
    cut = prepared.cuts.get(key)
    if cut is None:
        cut = cut_text(model, spec, text, title)
        if prepared.filling:
            prepared.cuts[key] = cut
    return cut


def cut_ahead(db: Context, spec: VectorSpec, text: str, title: str | None) -> bool:
    """Cut ``text`` into ``db.prepared`` ahead of the statement that will embed it (a first pass's
    read-ahead); False, leaving it to the statement, when the text cannot be cut here (its errors
    are the statement's to raise) or the column's model is not a local one."""
    model = embed.spec_model(spec, db.remote_access)
    if not isinstance(model, Model) or getattr(db, "prepared", None) is None:
        return False
    try:
        check_text(text, "")
        _cut(db, model, spec, text, title)
    except Exception:       # noqa: BLE001 - the statement meets the same problem and says it properly
        return False
    return True


def cut_text(model: embed.Model, spec: VectorSpec, text: str, title: str | None = None) -> Cut:
    """The chunks of ``text`` under the column's settings, each with its heading path and context."""
    return cut_document(model, text, strategy=spec.chunk_strategy, max_tokens=spec.max_tokens,
                        overlap_tokens=spec.overlap_tokens, max_chunks=spec.max_chunks,
                        chunk_context=spec.chunk_context, title=title)


def _with_location(emb: Embedded, cut: Cut, text: str, located: list[Located]) -> Embedded:
    """An averaged ``mean`` vector stands for the whole text: located as one chunk, no context."""
    if len(emb.spans) != len(located):
        whole = cut.locate(text, 0, len(text))
        located = [Located(whole.heading, whole.section, None)]
    return Embedded(emb.vectors, emb.spans, emb.keys, located, emb.units)


def _note_reuse(db: Context, spec: VectorSpec, result: reuse.Reuse) -> None:
    """A Note (SHOW WARNINGS) when stored vectors spared the model some chunks."""
    if result.reused:
        total = result.reused + result.embedded
        db.warn(f"column '{spec.column}': {result.reused:,} of {total:,} chunks reused stored vectors "
                f"(same model, same text); {result.embedded:,} embedded", 1000, "Note")


def plan_text(model: embed.Model, spec: VectorSpec, text: str) -> chunking.ChunkPlan:
    """The chunks of ``text`` under the column's chunk settings."""
    return plan_document(model, text, strategy=spec.chunk_strategy, max_tokens=spec.max_tokens,
                         overlap_tokens=spec.overlap_tokens, max_chunks=spec.max_chunks)


def embed_plans(model: embed.Model, strategy: str, texts: list[str], plans: list[chunking.ChunkPlan],
                on_progress=None, should_stop=None, pieces: list[str] | None = None) -> list[Embedded]:
    """Embed every chunk of every text in one batched call; ``mean`` and ``truncate`` give one vector.
    ``pieces``: what the model reads of each chunk, when it is not the chunk's text (a context line)."""
    if pieces is None:
        pieces = [text[c.start:c.end] for text, plan in zip(texts, plans) for c in plan.chunks]
    vectors = model.embed(pieces, on_progress=on_progress, should_stop=should_stop)
    return assemble(strategy, texts, plans, vectors, None)


def assemble(strategy: str, texts: list[str], plans: list[chunking.ChunkPlan], vectors: np.ndarray,
             keys: list[str] | None) -> list[Embedded]:
    """Each text's vectors (one per chunk; ``mean`` and ``truncate`` one) from the flat list of all
    chunks' vectors, with each vector's text key (none for an averaged ``mean`` vector)."""
    out, at = [], 0
    for text, plan in zip(texts, plans):
        n = len(plan.chunks)
        vecs = vectors[at:at + n]
        chunk_keys = list(keys[at:at + n]) if keys is not None else None
        at += n
        if strategy in SINGLE_VECTOR and n > 1:
            mean = vecs.mean(axis=0)
            vecs = (mean / max(float(np.linalg.norm(mean)), 1e-12)).reshape(1, -1).astype(np.float32)
            out.append(Embedded(vecs, [(0, len(text))], [None] if keys is not None else None))
        else:
            out.append(Embedded(vecs.astype(np.float32), [(c.start, c.end) for c in plan.chunks], chunk_keys))
    return out


def _warn_about_loss(db: Context, spec: VectorSpec, plan: chunking.ChunkPlan, label: Place) -> None:
    if not plan.dropped_tokens and not plan.merged_overflow:
        return
    kept = plan.total_tokens - plan.dropped_tokens
    if plan.merged_overflow:
        db.warn(f"{label}, column '{spec.column}': max_chunks={spec.max_chunks} merged the overflow into "
                f"the last chunk; the model saw {kept} of {plan.total_tokens} tokens", truncated=spec.column)
    else:
        db.warn(f"{label}, column '{spec.column}': text has {plan.total_tokens} tokens and "
                f"chunk_strategy='{spec.chunk_strategy}' kept {kept} (the model window)", truncated=spec.column)
