"""langchain-core, or an error that names the extra to install."""
from __future__ import annotations

try:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import VectorStore, VectorStoreRetriever
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("tesseradb.integrations.langchain needs langchain-core: "
                      "pip install 'tesseradb[langchain]'") from exc

__all__ = ["Document", "Embeddings", "VectorStore", "VectorStoreRetriever"]
