"""llama-index-core, or an error that names the extra to install."""
from __future__ import annotations

try:
    from llama_index.core.base.embeddings.base import BaseEmbedding
    from llama_index.core.bridge.pydantic import PrivateAttr
    from llama_index.core.schema import BaseNode, MetadataMode, TextNode
    from llama_index.core.vector_stores.types import (BasePydanticVectorStore, FilterCondition, FilterOperator,
                                                      MetadataFilter, MetadataFilters, VectorStoreQuery,
                                                      VectorStoreQueryMode, VectorStoreQueryResult)
    from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("tesseradb.integrations.llama_index needs llama-index-core: "
                      "pip install 'tesseradb[llama-index]'") from exc

__all__ = ["BaseEmbedding", "PrivateAttr", "BaseNode", "MetadataMode", "TextNode", "BasePydanticVectorStore",
           "FilterCondition", "FilterOperator", "MetadataFilter", "MetadataFilters", "VectorStoreQuery",
           "VectorStoreQueryMode", "VectorStoreQueryResult", "metadata_dict_to_node", "node_to_metadata_dict"]
