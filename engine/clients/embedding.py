"""``Connection.embed``: the vectors a column would store, without a table; and the Python warning a
statement that embedded only part of a text raises (``DataTruncatedWarning``, once per column)."""
from __future__ import annotations

import sys
import warnings as _warnings
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from tesseradb import errors


def embed(call: Callable, texts: str | Sequence[str], model: str | None = None, **settings: Any) -> Any:
    """``Connection.embed`` (see there); ``call`` runs a function with the connection's public errors.
    The embedding stack (and numpy) load here, with the first call, not with the connection."""
    from tesseradb.embed.texts import DEFAULT_MODEL, embed_texts
    single = isinstance(texts, str)
    losses: list[tuple[int, int, int]] = []
    vectors = call(lambda: embed_texts([texts] if single else texts, model or DEFAULT_MODEL, losses, **settings))
    if losses:
        warn_embed_truncated(losses, single)
    chunked = str(settings.get("chunk_strategy", "truncate")).lower() not in ("truncate", "mean")
    if chunked:
        return vectors[0] if single else vectors
    stacked = _stack(vectors)
    return stacked[0] if single else stacked


def warn_truncated(warned: list) -> None:
    """One DataTruncatedWarning per column whose documents the model embedded only in part."""
    if not warned:          # the usual case, after every statement: no Counter built for nothing
        return
    for column, n in Counter(w.truncated for w in warned if w.truncated).items():
        docs = "1 document" if n == 1 else f"{n:,} documents"
        _warnings.warn(f"column '{column}': the model embedded only part of the text of {docs} (SHOW WARNINGS "
                       f"lists them); a chunk_strategy such as 'recursive' embeds all of it",
                       errors.DataTruncatedWarning, stacklevel=_outside_the_package())


def warn_embed_truncated(losses: list[tuple[int, int, int]], single: bool) -> None:
    """``Connection.embed`` (and the integrations' embedding classes over it) warn as INSERT does when
    the model saw only part of a text."""
    n, total, kept = losses[0]
    which = "the text" if single else f"text {n}"
    more = f" (and {len(losses) - 1:,} more)" if len(losses) > 1 else ""
    _warnings.warn(f"embed(): {which} has {total:,} tokens and the model saw {kept:,}{more}; a "
                   "chunk_strategy such as 'recursive' embeds all of it", errors.DataTruncatedWarning,
                   stacklevel=_outside_the_package())


def _outside_the_package() -> int:
    """The stacklevel of the first caller outside tesseradb (warnings then name the user's line)."""
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").startswith("tesseradb."):
        frame, level = frame.f_back, level + 1
    return level


def _stack(vectors: list) -> Any:
    import numpy as np
    return np.vstack(vectors) if vectors else np.empty((0, 0), dtype=np.float32)
