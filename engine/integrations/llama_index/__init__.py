"""tesseradb for LlamaIndex (``pip install 'tesseradb[llama-index]'``; docs/integrations.md)."""
from __future__ import annotations

from tesseradb.integrations.llama_index.embedding import TesseraEmbedding
from tesseradb.integrations.llama_index.vector_store import TesseraVectorStore

__all__ = ["TesseraVectorStore", "TesseraEmbedding"]
