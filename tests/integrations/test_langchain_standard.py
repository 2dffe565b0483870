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


class TestEnginePassages(VectorStoreIntegrationTests):
    """passages=True (issue 32): a hit whose passage is the whole document comes back exactly as it
    was added, so the suite's exact comparisons hold in passage mode too."""

    @pytest.fixture()
    def vectorstore(self, tmp_path):
        store = TesseraVectorStore(str(tmp_path / "lc.db"), passages=True)
        try:
            yield store
        finally:
            store.close()


class TestEngineWholeDocuments(VectorStoreIntegrationTests):
    """passages=False: whole documents, as before issue 32's default."""

    @pytest.fixture()
    def vectorstore(self, tmp_path):
        store = TesseraVectorStore(str(tmp_path / "lc.db"), passages=False)
        try:
            yield store
        finally:
            store.close()
