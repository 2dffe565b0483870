"""tesseradb for LangChain (``pip install 'tesseradb[langchain]'``; docs/integrations.md)."""
from __future__ import annotations

from tesseradb.integrations.langchain.embeddings import TesseraEmbeddings
from tesseradb.integrations.langchain.retriever import TesseraRetriever
from tesseradb.integrations.langchain.vectorstore import TesseraVectorStore

__all__ = ["TesseraVectorStore", "TesseraEmbeddings", "TesseraRetriever"]
