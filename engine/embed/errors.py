"""Errors raised by the embedding layer (``tesseradb.errors.translate`` maps them to public classes)."""
from __future__ import annotations

from tesseradb import errors


class ModelError(errors.ModelFailure):
    """A model cannot be resolved, verified or loaded. The message is shown to users verbatim."""


class EmbeddingCancelled(errors.Cancelled):
    """``Model.embed`` stopped between batches because ``should_stop()`` returned true."""
