"""A team's Qdrant collection in local mode (on disk, no server), wired as docs/targets.md wires
a LangChain vector store.

``RLK_QDRANT_PATH`` (the local-mode directory) and ``RLK_STORE_COLLECTION`` (default ``team``)
say where. The collection is created when missing, as a team's own setup would. Local mode locks
its directory: one process at a time.
"""

import atexit
import os

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_qdrant import QdrantVectorStore
from qdrant_client import QdrantClient
from qdrant_client.http.models import Distance, VectorParams

COLLECTION = os.environ.get("RLK_STORE_COLLECTION", "team")

client = QdrantClient(path=os.environ["RLK_QDRANT_PATH"])
# Closed before the interpreter tears its modules down: a local-mode client left to its __del__
# prints "Exception ignored ... import of portalocker halted" at the exit of any script.
atexit.register(client.close)
if not client.collection_exists(COLLECTION):
    client.create_collection(COLLECTION, VectorParams(size=32, distance=Distance.COSINE))
store = QdrantVectorStore(
    client=client, collection_name=COLLECTION, embedding=DeterministicFakeEmbedding(size=32)
)
retriever = store.as_retriever(search_kwargs={"k": 5})
