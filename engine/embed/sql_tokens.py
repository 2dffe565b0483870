"""SQL functions that need a model's tokenizer, registered on every connection (``sql.database``).

``_tessera_first_tokens(text, n, model)``: ``text`` cut after its first ``n`` tokens of the model (whole
when it has no more); ``knn_chunk_section(max_tokens)`` is rewritten into it (``sql.search.passage_around``).
"""
from __future__ import annotations

import apsw

from tesseradb import embed

FIRST_TOKENS = "_tessera_first_tokens"


def first_tokens(text: str | None, n: int, model_name: str) -> str | None:
    if text is None or len(text) <= n:          # every token covers at least one character
        return text
    offsets = embed.get_model(model_name).token_offsets(text)
    return text if len(offsets) <= n else text[:offsets[n - 1][1]]


def register(conn: apsw.Connection) -> None:
    conn.create_scalar_function(FIRST_TOKENS, first_tokens, 3, deterministic=True)
