"""``Connection.embed`` as a LangChain ``Embeddings``: the vectors a model-backed column stores."""
from __future__ import annotations

from collections.abc import Sequence

import tesseradb

from tesseradb.integrations.langchain._core import Embeddings
from tesseradb.integrations.layout import DEFAULT_MODEL


class TesseraEmbeddings(Embeddings):
    """``TesseraEmbeddings(model='Xenova/all-MiniLM-L6-v2', connection=None)``: the engine's local
    model (one vector per text, ``truncate``), on ``connection`` or a private in-memory one."""

    def __init__(self, model: str = DEFAULT_MODEL, connection: tesseradb.Connection | None = None):
        self.model = model
        self._con = connection if connection is not None else tesseradb.connect(":memory:")

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        texts = list(texts)
        if not texts:
            return []
        return self._con.embed(texts, model=self.model).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self._con.embed(text, model=self.model).tolist()
