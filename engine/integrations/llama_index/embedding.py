"""``Connection.embed`` as a LlamaIndex embedding model: the vectors a model-backed column stores."""
from __future__ import annotations

from typing import Any

import tesseradb

from tesseradb.integrations.layout import DEFAULT_MODEL
from tesseradb.integrations.llama_index._core import BaseEmbedding, PrivateAttr


class TesseraEmbedding(BaseEmbedding):
    """``TesseraEmbedding(model_name='Xenova/all-MiniLM-L6-v2', connection=None)``: the engine's local
    model, one vector per text, on ``connection`` or a private in-memory one."""

    _con: Any = PrivateAttr()

    def __init__(self, model_name: str = DEFAULT_MODEL, connection: tesseradb.Connection | None = None,
                 **kwargs: Any):
        super().__init__(model_name=model_name, **kwargs)
        self._con = connection if connection is not None else tesseradb.connect(":memory:")

    @classmethod
    def class_name(cls) -> str:
        return "TesseraEmbedding"

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._con.embed(query, model=self.model_name).tolist()

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._con.embed(text, model=self.model_name).tolist()

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._con.embed(list(texts), model=self.model_name).tolist() if texts else []
