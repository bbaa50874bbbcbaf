"""A team's Chroma collection on disk, wired as docs/targets.md wires a LangChain vector store.

Where it lives comes from the environment, so a test points ``ragleaklab run`` at a fresh store:
``RLK_CHROMA_DIR`` (the persist directory) and ``RLK_STORE_COLLECTION`` (default ``team``).
"""

import os

from langchain_chroma import Chroma
from langchain_core.embeddings import DeterministicFakeEmbedding

store = Chroma(
    collection_name=os.environ.get("RLK_STORE_COLLECTION", "team"),
    embedding_function=DeterministicFakeEmbedding(size=32),
    persist_directory=os.environ["RLK_CHROMA_DIR"],
)
retriever = store.as_retriever(search_kwargs={"k": 5})
