"""A team's pgvector collection in Postgres, wired as docs/targets.md wires a LangChain vector
store, with a SYNCHRONOUS connection (a SQLAlchemy URL, not an async engine): its async search
raises, so it must be searched synchronously.

``RLK_PGVECTOR_URL`` (``postgresql+psycopg://...``) and ``RLK_STORE_COLLECTION`` (default
``team``) say where.
"""

import os

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_postgres import PGVector

store = PGVector(
    embeddings=DeterministicFakeEmbedding(size=32),
    collection_name=os.environ.get("RLK_STORE_COLLECTION", "team"),
    connection=os.environ["RLK_PGVECTOR_URL"],
    use_jsonb=True,
)
retriever = store.as_retriever(search_kwargs={"k": 5})
