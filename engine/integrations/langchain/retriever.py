"""A VectorStoreRetriever that also knows ``search_type='hybrid'`` (full-text and knn() fused)."""
from __future__ import annotations

from collections.abc import Collection
from typing import Any, ClassVar

from tesseradb.integrations.langchain._core import Document, VectorStoreRetriever


class TesseraRetriever(VectorStoreRetriever):
    """``store.as_retriever(search_type='similarity' | 'similarity_score_threshold' | 'mmr' | 'hybrid',
    search_kwargs={'k': 4, 'filter': {...}, ...})``."""

    allowed_search_types: ClassVar[Collection[str]] = ("similarity", "similarity_score_threshold", "mmr", "hybrid")

    def _get_relevant_documents(self, query: str, *, run_manager: Any, **kwargs: Any) -> list[Document]:
        if self.search_type == "hybrid":
            return self.vectorstore.hybrid_search(query, **(self.search_kwargs | kwargs))
        return super()._get_relevant_documents(query, run_manager=run_manager, **kwargs)

    async def _aget_relevant_documents(self, query: str, *, run_manager: Any, **kwargs: Any) -> list[Document]:
        if self.search_type == "hybrid":
            return await self.vectorstore.ahybrid_search(query, **(self.search_kwargs | kwargs))
        return await super()._aget_relevant_documents(query, run_manager=run_manager, **kwargs)
