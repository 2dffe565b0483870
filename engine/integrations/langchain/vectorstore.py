"""tesseradb as a LangChain ``VectorStore``: one row per document, chunked and embedded by the engine
(or vectors from a LangChain ``Embeddings``), filters as bound WHERE conditions applied before k."""
from __future__ import annotations

import asyncio
import math
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from tesseradb.integrations import filters, layout as layouts
from tesseradb.vectors import mmr
from tesseradb.integrations.langchain._core import Document, Embeddings, VectorStore
from tesseradb.integrations.langchain.embeddings import TesseraEmbeddings
from tesseradb.integrations.langchain.retriever import TesseraRetriever
from tesseradb.integrations.store import (DocumentStore, Hit, Row, connect, passage_mode, passage_of, short_float,
                                          wants_passages)
from tesseradb.integrations.store import PASSAGE_KEY  # noqa: F401 (re-exported: metadata['tessera'])



class TesseraVectorStore(VectorStore):
    """``TesseraVectorStore(database, table='documents', embedding=None, ...)``.

    ``database``: a path or a tesseradb Connection. ``table`` is created when missing: with
    ``embedding=None`` its ``embedding`` column is model-backed (``model``, chunked with
    ``chunk_strategy`` / ``max_tokens`` / ``overlap_tokens``) and the engine embeds; with an
    ``Embeddings``, a ``float_vector`` column of its width holds the vectors it computes.
    ``create_table``: your own CREATE TABLE statement instead (run when the table is missing); its
    other plain columns hold the metadata keys of their names. ``passages`` (default ``None``, "auto"):
    a search returns the matched chunk as ``page_content`` when the document is longer than one chunk,
    with its details under ``metadata['tessera']``, and the document exactly as added otherwise;
    ``True`` always the chunk, ``"section"`` the chunk's section, ``False`` whole documents.
    """

    def __init__(self, database: Any, table: str = "documents", embedding: Embeddings | None = None, *,
                 create_table: str | None = None, model: str = layouts.DEFAULT_MODEL,
                 chunk_strategy: str = "recursive", max_tokens: int = 256, overlap_tokens: int = 32,
                 passages: bool | str | None = None, id_column: str = "doc_key", content_column: str = "content",
                 metadata_column: str = "metadata", vector_column: str = "embedding"):
        con, owns = connect(database)
        try:
            if create_table is not None:
                create = [create_table]
            else:
                vectors = (layouts.model_column(vector_column, content_column, model, chunk_strategy, max_tokens,
                                                overlap_tokens) if embedding is None else
                           layouts.supplied_column(vector_column, len(embedding.embed_query("dimensions"))))
                create = [f"CREATE TABLE {layouts.identifier(table, 'table')} ({layouts.identifier(id_column)} "
                          f"string, {layouts.identifier(content_column)} text, "
                          f"{layouts.identifier(metadata_column)} json, {vectors})"]
            layouts.ensure_table(con, table, create, id_column)
            layout = layouts.read_layout(con, table, id=id_column, content=content_column, metadata=metadata_column)
        except BaseException:
            if owns:
                con.close()
            raise
        self._column = _vector_column(layout, vector_column)
        if embedding is None and self._column.model is None:
            raise ValueError(f"column {self._column.name!r} holds supplied vectors: pass embedding=")
        self._store = DocumentStore(con, layout, owns)
        self._embedding = embedding
        self._model_embeddings: TesseraEmbeddings | None = None
        self.passages = passage_mode(passages)

    # -- the interface's plumbing ------------------------------------------------------------------
    @property
    def embeddings(self) -> Embeddings:
        """The ``embedding`` given, or the engine's model over ``Connection.embed``."""
        if self._embedding is not None:
            return self._embedding
        if self._model_embeddings is None:
            self._model_embeddings = TesseraEmbeddings(self._column.model or layouts.DEFAULT_MODEL, self._store.con)
        return self._model_embeddings

    @property
    def connection(self):
        return self._store.con

    def close(self) -> None:
        """Close the connection when the store opened it (from a path)."""
        self._store.close()

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        """Relevance in [0, 1] from knn_dist(), larger is closer: cosine and ip ``1 - distance / 2``
        (that is ``(1 + cos) / 2``; LangChain's ``1 - distance`` goes below 0 past a right angle);
        l2 (squared distances) through LangChain's Euclidean function."""
        if self._column.similarity == "l2":
            return lambda d: self._euclidean_relevance_score_fn(math.sqrt(max(d, 0.0)))
        return lambda d: min(1.0, max(0.0, 1.0 - d / 2.0))

    @classmethod
    def from_texts(cls, texts: list[str], embedding: Embeddings | None = None,
                   metadatas: list[dict] | None = None, *, ids: list[str] | None = None,
                   database: Any = ":memory:", table: str = "documents", **kwargs: Any) -> "TesseraVectorStore":
        store = cls(database, table, embedding, **kwargs)
        store.add_texts(texts, metadatas, ids=ids)
        return store

    def as_retriever(self, **kwargs: Any) -> TesseraRetriever:
        tags = kwargs.pop("tags", None) or [*self._get_retriever_tags()]
        return TesseraRetriever(vectorstore=self, tags=tags, **kwargs)

    # -- writing -----------------------------------------------------------------------------------
    def add_texts(self, texts: Iterable[str], metadatas: list[dict] | None = None, *,
                  ids: Sequence[str | None] | None = None, **kwargs: Any) -> list[str]:
        """Insert the texts, replacing documents whose ids exist; returns the ids (new UUIDs where
        none was given)."""
        texts = list(texts)
        metadatas = list(metadatas) if metadatas is not None else [{} for _ in texts]
        ids = list(ids) if ids is not None else [None] * len(texts)
        if not len(texts) == len(metadatas) == len(ids):
            raise ValueError(f"{len(texts)} texts, {len(metadatas)} metadatas and {len(ids)} ids: one each")
        ids = [str(i) if i is not None else str(uuid.uuid4()) for i in ids]
        vectors = self._embedding.embed_documents(texts) if self._embedding is not None and texts else None
        rows = [Row(doc_id, text, meta or {},
                    {} if vectors is None else {self._column.name: np.asarray(vectors[n], dtype=np.float32)})
                for n, (doc_id, text, meta) in enumerate(zip(ids, texts, metadatas))]
        self._store.upsert(rows)
        return ids

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool:
        """Delete these documents (missing ids are ignored); every document with ``ids=None``."""
        self._store.delete(None if ids is None else [str(i) for i in ids])
        return True

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        return [self._document(hit, "document") for hit in self._store.get([str(i) for i in ids])]

    # -- searching ---------------------------------------------------------------------------------
    def similarity_search(self, query: str, k: int = 4, filter: dict | None = None, **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, filter, **kwargs)]

    def similarity_search_with_score(self, query: str, k: int = 4, filter: dict | None = None,
                                     **kwargs: Any) -> list[tuple[Document, float]]:
        """(document, knn_dist()) nearest first: a distance, smaller is nearer (cosine: 0 .. 2).
        ``passages=`` overrides the store's setting for this call (see the class)."""
        mode = self._mode(kwargs)
        hits = self._store.search(self._column, self._query(query), k, self._where(filter),
                                  passages=wants_passages(mode, self._column))
        return [(self._document(h, mode), short_float(h.distance)) for h in hits]

    def similarity_search_by_vector(self, embedding: list[float], k: int = 4, filter: dict | None = None,
                                    **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self.similarity_search_with_score_by_vector(embedding, k, filter, **kwargs)]

    def similarity_search_with_score_by_vector(self, embedding: list[float], k: int = 4, filter: dict | None = None,
                                               **kwargs: Any) -> list[tuple[Document, float]]:
        mode = self._mode(kwargs)
        hits = self._store.search(self._column, np.asarray(embedding, dtype=np.float32), k, self._where(filter),
                                  passages=wants_passages(mode, self._column))
        return [(self._document(h, mode), short_float(h.distance)) for h in hits]

    def max_marginal_relevance_search(self, query: str, k: int = 4, fetch_k: int = 20, lambda_mult: float = 0.5,
                                      filter: dict | None = None, **kwargs: Any) -> list[Document]:
        vector = self._query_vector(query)        # one embedding: knn() and MMR both take the vector
        return self._mmr(vector, k, fetch_k, lambda_mult, filter, self._mode(kwargs))

    def max_marginal_relevance_search_by_vector(self, embedding: list[float], k: int = 4, fetch_k: int = 20,
                                                lambda_mult: float = 0.5, filter: dict | None = None,
                                                **kwargs: Any) -> list[Document]:
        return self._mmr(np.asarray(embedding, dtype=np.float32), k, fetch_k, lambda_mult, filter,
                         self._mode(kwargs))

    def hybrid_search(self, query: str, k: int = 4, filter: dict | None = None, **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self.hybrid_search_with_score(query, k, filter, **kwargs)]

    def hybrid_search_with_score(self, query: str, k: int = 4, filter: dict | None = None,
                                 **kwargs: Any) -> list[tuple[Document, float]]:
        """(document, hybrid_score()) best first: a fused score, larger is better. A model-backed
        column uses ``hybrid_match()``; supplied vectors fuse MATCH() over the text with knn()."""
        vector = None if self._column.model else self._query(query)
        mode = self._mode(kwargs)
        hits = self._store.hybrid(self._column, query, k, self._where(filter), vector=vector,
                                  passages=wants_passages(mode, self._column))
        return [(self._document(h, mode), short_float(h.score)) for h in hits]

    async def ahybrid_search(self, query: str, k: int = 4, filter: dict | None = None,
                             **kwargs: Any) -> list[Document]:
        return await asyncio.get_running_loop().run_in_executor(
            None, lambda: self.hybrid_search(query, k, filter, **kwargs))

    def search(self, query: str, search_type: str, **kwargs: Any) -> list[Document]:
        if search_type == "hybrid":
            return self.hybrid_search(query, **kwargs)
        return super().search(query, search_type, **kwargs)

    async def asearch(self, query: str, search_type: str, **kwargs: Any) -> list[Document]:
        if search_type == "hybrid":
            return await self.ahybrid_search(query, **kwargs)
        return await super().asearch(query, search_type, **kwargs)

    # -- helpers -----------------------------------------------------------------------------------
    def _query(self, query: str) -> Any:
        """What knn() is given: the text itself for a model-backed column (the engine embeds it, with
        its cache), else the ``Embeddings``' vector."""
        if self._embedding is None:
            return query
        return np.asarray(self._embedding.embed_query(query), dtype=np.float32)

    def _query_vector(self, query: str) -> np.ndarray:
        if self._embedding is not None:
            return np.asarray(self._embedding.embed_query(query), dtype=np.float32)
        return self._store.con.embed(query, model=self._column.model)

    def _mode(self, kwargs: dict[str, Any]) -> str:
        asked = kwargs.get("passages")
        return self.passages if asked is None else passage_mode(asked)

    def _mmr(self, vector: np.ndarray, k: int, fetch_k: int, lambda_mult: float, filter: dict | None,
             mode: str) -> list[Document]:
        candidates = [h for h in self._store.search(self._column, vector, max(k, fetch_k), self._where(filter),
                                                    passages=wants_passages(mode, self._column), vectors=True)
                      if h.vector is not None]
        picked = mmr.for_query(vector, np.array([h.vector for h in candidates]), k, lambda_mult) if candidates else []
        return [self._document(candidates[i], mode) for i in picked]

    def _where(self, filter: dict | None):
        return self._store.where(filters.from_dict(filter))

    def _document(self, hit: Hit, mode: str) -> Document:
        content, passage = passage_of(hit, mode)
        if passage is None:
            return Document(page_content=hit.content, metadata=hit.metadata, id=hit.id)
        details = {"score": short_float(hit.distance if hit.score is None else hit.score), **passage.as_dict()}
        return Document(page_content=content, metadata={**hit.metadata, PASSAGE_KEY: details}, id=hit.id)


def _vector_column(layout: layouts.Layout, name: str) -> layouts.VectorColumn:
    if name in layout.vectors:
        return layout.vectors[name]
    if len(layout.vectors) == 1:
        return next(iter(layout.vectors.values()))
    raise ValueError(f"table {layout.table!r} has no knn vector column {name!r}"
                     + (f" (it has {', '.join(layout.vectors)})" if layout.vectors else ""))
