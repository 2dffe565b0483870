"""What a writing statement embedded before its transaction took the write lock (sql/embed_first.py).

A statement that embeds runs twice over its texts: first with no transaction open (the rows are
evaluated, the texts cut into chunks, the model run, chunk reuse looked up in committed data), then
for real, under BEGIN IMMEDIATE. The second pass finds each text's cut and each chunk's vector here,
so under the lock it neither cuts nor runs the model: the lock is held for SQLite's writes only.

Both are pure functions of their keys (the cut of a text under the column's chunk settings and
model; the model's vector of a chunk text, ``embed.reuse.chunk_key``), so what was made before the
lock is exactly what would be made under it, whatever other connections committed in between: a
miss (a text the first pass did not see) is simply cut and embedded under the lock. Chunk reuse is
looked up again under the lock (a vector found then is counted as reused).

Memory: the first pass covers at most :data:`BUDGET_CHARS` characters of text (always at least one
row); what lies beyond is embedded under the lock, batch by batch, as before. A LOAD DATA of
documents also reads and cuts up to :data:`READ_AHEAD_CHARS` more while the model embeds its first
pass (sql/statements/embed_first_load.py): only the cuts are kept, so under the lock the statement
finds them here and runs the model at once. The documents the first pass parsed are kept too: under
the lock the statement reads every file again and parses it only when its bytes (size, modification
time, sha256) are not the ones parsed before the lock.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

BUDGET_CHARS = 1 << 20          # characters of text a statement embeds before taking the lock
READ_AHEAD_CHARS = 4 << 20      # ... and reads and cuts ahead while the model runs (a document load)


@dataclass
class Prepared:
    cuts: dict[tuple, Any] = field(default_factory=dict)          # cut_key -> embed.chunk_context.Cut
    vectors: dict[str, Any] = field(default_factory=dict)   # chunk key -> the model's vector (numpy)
    # a document load's files as the first pass parsed them: (file, path, size, mtime_ns, sha256) ->
    # io.documents.Document (sql/statements/load_documents.read_document)
    documents: dict[tuple, Any] = field(default_factory=dict)
    filling: bool = True        # the first pass: what the model makes is kept; under the lock, only read
    restore: Callable[[], None] | None = None   # what the statement's end undoes (a progress wrapper)


def cut_key(fingerprint: str, spec: Any, text: str, title: str | None) -> tuple:
    """Everything a text's cut depends on: the model (its tokenizer), the column's chunk settings,
    the title of its context line, the text."""
    return (fingerprint, spec.chunk_strategy, spec.max_tokens, spec.overlap_tokens, spec.max_chunks,
            spec.chunk_context, title, text)
