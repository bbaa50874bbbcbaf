"""The reference target: an embedded, deterministic RAG pipeline (``ragleaklab.targets:reference``).

Word-window chunking, BM25 retrieval with bm25s, and a generator that copies the most relevant
sentences and obeys instructions planted in retrieved text, with optional defences. Its exact
text contract is documented in docs/reference-target.md.
"""

from ragleaklab_plugins.targets.reference.target import ReferenceTarget

__all__ = ["ReferenceTarget"]
