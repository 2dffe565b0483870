"""tesseradb as a LlamaIndex vector store: nodes as rows, text kept (``stores_text=True``), the node's
relationships kept with it; nodes without embeddings are chunked and embedded by the engine."""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from tesseradb.integrations import layout as layouts
from tesseradb.vectors import mmr
from tesseradb.integrations.filters import AllOf, Cond, Filter
from tesseradb.integrations.llama_index._core import (BaseNode, BasePydanticVectorStore, MetadataFilters,
                                                      MetadataMode, PrivateAttr, VectorStoreQuery,
                                                      VectorStoreQueryMode, VectorStoreQueryResult,
                                                      metadata_dict_to_node, node_to_metadata_dict)
from tesseradb.integrations.llama_index.filters import to_tree
from tesseradb.integrations.store import (PASSAGE_KEY, DocumentStore, Hit, Row, connect, passage_mode, passage_of, short_float,
                                          wants_passages)

ROLES = ("ref_doc_id", "node")                 # columns beside id / text / metadata
MMR_PREFETCH_FACTOR = 4


class TesseraVectorStore(BasePydanticVectorStore):
    """``TesseraVectorStore(database, table='nodes', embed_dim=None, ...)``.

    ``database``: a path or a tesseradb Connection. The table (created when missing) keeps each node
    in a row: ``node_id``, ``ref_doc_id``, ``text``, ``metadata`` (json), ``node`` (the node's own
    fields and relationships), ``embedding`` (``float_vector`` of ``embed_dim`` values, default the
    model's width: the vectors nodes bring) and ``chunks`` (model-backed: the engine chunks and embeds
    the text of the nodes that bring no embedding). A query with an embedding searches ``embedding``;
    a query with text only searches ``chunks``.
    """

    stores_text: bool = True
    flat_metadata: bool = False
    is_embedding_query: bool = True

    _store: Any = PrivateAttr()
    _embedding: Any = PrivateAttr()
    _chunks: Any = PrivateAttr()
    _passages: Any = PrivateAttr()

    def __init__(self, database: Any, table: str = "nodes", *, embed_dim: int | None = None,
                 model: str = layouts.DEFAULT_MODEL, chunk_strategy: str = "recursive", max_tokens: int = 256,
                 overlap_tokens: int = 32, is_embedding_query: bool = True, passages: bool | str | None = None):
        super().__init__(stores_text=True, is_embedding_query=is_embedding_query)
        mode = passage_mode(passages)
        con, owns = connect(database)
        try:
            dims = embed_dim if embed_dim is not None else int(con.embed("dimensions", model=model).shape[-1])
            create = [f"CREATE TABLE {layouts.identifier(table, 'table')} (node_id string, ref_doc_id string, "
                      f"text text, metadata json, node json, {layouts.supplied_column('embedding', dims)}, "
                      f"{layouts.model_column('chunks', 'text', model, chunk_strategy, max_tokens, overlap_tokens)})"]
            layouts.ensure_table(con, table, create, "node_id")
            layout = layouts.read_layout(con, table, id="node_id", content="text", metadata="metadata", reserved=ROLES)
        except BaseException:
            if owns:
                con.close()
            raise
        self._store = DocumentStore(con, layout, owns, roles=ROLES)
        self._embedding = layout.vectors.get("embedding")
        self._chunks = layout.vectors.get("chunks")
        self._passages = mode

    @classmethod
    def class_name(cls) -> str:
        return "TesseraVectorStore"

    @property
    def client(self) -> Any:
        """The tesseradb Connection."""
        return self._store.con

    def close(self) -> None:
        self._store.close()

    # -- writing -----------------------------------------------------------------------------------
    def add(self, nodes: Sequence[BaseNode], **kwargs: Any) -> list[str]:
        """Store the nodes (replacing nodes with the same id); returns their ids."""
        rows = [self._row(node) for node in nodes]
        self._store.upsert(rows)
        return [row.id for row in rows]

    def _row(self, node: BaseNode) -> Row:
        info = node_to_metadata_dict(node, remove_text=True, flat_metadata=False)
        kept = {"_node_content": info["_node_content"], "_node_type": info["_node_type"]}
        vectors: dict[str, Any] = {}
        if node.embedding is not None:
            vectors = {"embedding": np.asarray(node.embedding, dtype=np.float32), "chunks": []}
        return Row(node.node_id, node.get_content(metadata_mode=MetadataMode.NONE), dict(node.metadata), vectors,
                   {"ref_doc_id": node.ref_doc_id, "node": json.dumps(kept, ensure_ascii=False)})

    def delete(self, ref_doc_id: str, **kwargs: Any) -> None:
        """Delete every node of the document ``ref_doc_id``."""
        self._store.delete(where=self._store.where(Cond("ref_doc_id", "eq", ref_doc_id, column="ref_doc_id")))

    def delete_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None,
                     **kwargs: Any) -> None:
        """Delete the nodes with these ids and/or matching ``filters`` (both: nodes that are both)."""
        tree = self._tree(filters, node_ids=node_ids)
        if tree is None:
            return
        self._store.delete(where=self._store.where(tree))

    def clear(self) -> None:
        self._store.delete()

    def get_nodes(self, node_ids: list[str] | None = None, filters: MetadataFilters | None = None) -> list[BaseNode]:
        tree = self._tree(filters)
        hits = self._store.get(node_ids, self._store.where(tree))
        return [self._node(hit) for hit in hits]

    # -- querying ----------------------------------------------------------------------------------
    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        mode = query.mode
        where = self._store.where(self._tree(query.filters, query.node_ids, query.doc_ids))
        k = int(query.hybrid_top_k or query.similarity_top_k) if mode == VectorStoreQueryMode.HYBRID \
            else int(query.similarity_top_k)
        if mode == VectorStoreQueryMode.HYBRID:
            hits = self._hybrid(query, k, where)
        elif mode == VectorStoreQueryMode.MMR:
            hits = self._mmr(query, k, where, kwargs)
        elif mode == VectorStoreQueryMode.DEFAULT:
            column, value = self._target(query)
            hits = self._store.search(column, value, k, where, passages=wants_passages(self._mode(kwargs), column))
        else:
            raise ValueError(f"TesseraVectorStore does not support query mode {mode.value!r} "
                              "(default, hybrid and mmr)")
        return self._result(hits, self._mode(kwargs))

    def _mode(self, kwargs: dict[str, Any]) -> str:
        """``passages`` of the store (default "auto": the matched chunk of a document longer than one
        chunk), or of this query (``query(q, passages=...)``)."""
        asked = kwargs.get("passages")
        return self._passages if asked is None else passage_mode(asked)

    def _target(self, query: VectorStoreQuery):
        """The column searched and what knn() is given: the query's embedding over ``embedding``, or
        its text over the engine's ``chunks``."""
        if query.query_embedding is not None:
            return self._embedding, np.asarray(query.query_embedding, dtype=np.float32)
        if query.query_str:
            return self._chunks, query.query_str
        raise ValueError("a VectorStoreQuery needs query_embedding or query_str")

    def _hybrid(self, query: VectorStoreQuery, k: int, where) -> list[Hit]:
        if not query.query_str:
            raise ValueError("a hybrid query needs query_str (its full-text side)")
        weights = None if query.alpha is None else (1.0 - float(query.alpha), float(query.alpha))
        if query.query_embedding is not None:
            return self._store.hybrid(self._embedding, query.query_str, k, where,
                                      vector=query.query_embedding, weights=weights or (1.0, 1.0))
        return self._store.hybrid(self._chunks, query.query_str, k, where, weights=weights,
                                  passages=wants_passages(self._passages, self._chunks))

    def _mmr(self, query: VectorStoreQuery, k: int, where, kwargs: dict[str, Any]) -> list[Hit]:
        column, value = self._target(query)
        prefetch = int(kwargs.get("mmr_prefetch_k") or k * float(kwargs.get("mmr_prefetch_factor", MMR_PREFETCH_FACTOR)))
        lam = 0.5 if query.mmr_threshold is None else float(query.mmr_threshold)
        vector = value if column is self._embedding else self._store.con.embed(value, model=column.model)
        candidates = [h for h in self._store.search(column, value, max(k, prefetch), where, vectors=True)
                      if h.vector is not None]
        if not candidates:
            return []
        return [candidates[i] for i in mmr.for_query(vector, np.array([h.vector for h in candidates]), k, lam)]

    # -- helpers -----------------------------------------------------------------------------------
    def _tree(self, filters: MetadataFilters | None, node_ids: list[str] | None = None,
              doc_ids: list[str] | None = None) -> Filter | None:
        parts = [t for t in (to_tree(filters),) if t is not None]
        # an empty list restricts nothing: VectorStoreIndex passes the ids it keeps itself, none for a
        # store that keeps the text (as the other stores read it)
        if node_ids:
            parts.append(Cond("node_id", "in", [str(i) for i in node_ids], column="node_id"))
        if doc_ids:
            parts.append(Cond("ref_doc_id", "in", [str(i) for i in doc_ids], column="ref_doc_id"))
        return None if not parts else parts[0] if len(parts) == 1 else AllOf(parts)

    def _node(self, hit: Hit, mode: str = "document") -> BaseNode:
        """The node as added (its ``node_id`` is the row's); with a passage that is part of the
        document, the passage as its text and the passage's details under ``metadata['tessera']``."""
        kept = hit.extra.get("node") or {}
        if isinstance(kept, str):
            kept = json.loads(kept)
        text, passage = passage_of(hit, mode)
        node = metadata_dict_to_node(kept, text=text)
        node.metadata = hit.metadata if passage is None else {**hit.metadata, PASSAGE_KEY: passage.as_dict()}
        return node

    def _result(self, hits: list[Hit], mode: str = "document") -> VectorStoreQueryResult:
        """Similarities are larger-is-better: 1 - knn_dist() (cosine), or hybrid_score()."""
        scores = [short_float(h.score if h.score is not None else 1.0 - float(h.distance)) for h in hits]
        return VectorStoreQueryResult(nodes=[self._node(h, mode) for h in hits], similarities=scores,
                                      ids=[h.id for h in hits])
