"""LangChain's own standard suite (langchain-tests' VectorStoreIntegrationTests, sync and async),
unskipped, against the store in both of its modes: vectors from the suite's Embeddings into a
float_vector column (as the framework's tests intend), and the engine embedding the text itself."""
from __future__ import annotations

import pytest
from langchain_tests.integration_tests.vectorstores import VectorStoreIntegrationTests

from tesseradb.integrations.langchain import TesseraVectorStore


class TestSuppliedEmbeddings(VectorStoreIntegrationTests):
    @pytest.fixture()
    def vectorstore(self, tmp_path):
        store = TesseraVectorStore(str(tmp_path / "lc.db"), embedding=self.get_embeddings())
        try:
            yield store
        finally:
            store.close()


class TestEngineEmbeddings(VectorStoreIntegrationTests):
    """embedding=None: the table's column is model-backed; every add and search goes through the
    engine's model (the suite's fake embeddings are not used)."""

    @pytest.fixture()
    def vectorstore(self, tmp_path):
        store = TesseraVectorStore(str(tmp_path / "lc.db"))
        try:
            yield store
        finally:
            store.close()
