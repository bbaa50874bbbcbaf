"""LlamaIndex apps, built offline (a mock embedding and a mock LLM) the way their users build
them: an index over the pack's documents, used as a retriever or as a query engine.

Imported by the tests in this directory and by ``ragleaklab run`` in a subprocess; the python
target itself never imports LlamaIndex.
"""

from __future__ import annotations

from typing import Any

from llama_index.core import VectorStoreIndex
from llama_index.core.base.base_query_engine import BaseQueryEngine
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode

TOP_K = 5


def _index(nodes: list[TextNode]) -> VectorStoreIndex:
    return VectorStoreIndex(nodes, embed_model=MockEmbedding(embed_dim=8))


def nodes_of(documents: list[Any]) -> list[TextNode]:
    """One node per document, named by the pack's id."""
    return [TextNode(text=d.text, id_=d.doc_id) for d in documents]


def chunks_of(documents: list[Any]) -> list[TextNode]:
    """One node per sentence, named ``<doc_id>::chunk-<n>`` (a chunked index's own ids)."""
    return [
        TextNode(text=sentence, id_=f"{d.doc_id}::chunk-{n}")
        for d in documents
        for n, sentence in enumerate(d.text.split(". "))
    ]


def sourced_nodes_of(documents: list[Any]) -> list[TextNode]:
    """Nodes with ids of their own whose source document is the pack's (``ref_doc_id``)."""
    return [
        TextNode(
            text=d.text,
            id_=f"node-{n}",
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id=d.doc_id)},
        )
        for n, d in enumerate(documents)
    ]


def build_retriever(documents: list[Any], top_k: int = TOP_K) -> BaseRetriever:
    return _index(nodes_of(documents)).as_retriever(similarity_top_k=top_k)


def build_chunked_retriever(documents: list[Any], top_k: int = TOP_K) -> BaseRetriever:
    return _index(chunks_of(documents)).as_retriever(similarity_top_k=top_k)


def build_sourced_retriever(documents: list[Any], top_k: int = TOP_K) -> BaseRetriever:
    return _index(sourced_nodes_of(documents)).as_retriever(similarity_top_k=top_k)


def build_query_engine(documents: list[Any], top_k: int = TOP_K) -> BaseQueryEngine:
    index = _index(nodes_of(documents))
    return index.as_query_engine(llm=MockLLM(), similarity_top_k=top_k)
