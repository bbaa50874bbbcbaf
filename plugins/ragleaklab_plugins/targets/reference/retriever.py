"""Sparse retrieval over chunks with bm25s, and a stable top-k that collapses chunks to documents.

bm25s does the scoring (a precomputed sparse matrix of per-term BM25 contributions, summed over
the query's terms); this module only chooses the best chunks from its score vector. Ties are
broken by ingestion order so the ranking never depends on how numpy happens to partition.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import bm25s
import numpy as np
import numpy.typing as npt
from attrs import define, field, frozen

#: How many chunks to rank per wanted document on the first try; doubled-up as needed.
_CHUNKS_PER_DOC = 4


def stable_top(scores: npt.NDArray[np.floating], n: int) -> npt.NDArray[np.intp]:
    """Indices of the *n* best positive scores, by descending score then ascending index.

    ``argpartition`` finds the n-th best score; every score at least that good is kept (so a tie
    at the cut is never settled by the partition) and sorted stably, which leaves tied scores in
    index order.
    """
    positive = np.flatnonzero(scores > 0)
    if n <= 0:
        return positive[:0]
    values = scores[positive]
    if positive.size > n:
        nth_best = values[np.argpartition(-values, n - 1)[:n]].min()
        keep = values >= nth_best
        positive, values = positive[keep], values[keep]
    return positive[np.argsort(-values, kind="stable")][:n]


@frozen
class Hit:
    """A document found for a query, represented by its best chunk."""

    doc_index: int
    chunk_index: int
    score: float


@define
class ChunkIndex:
    """A BM25 index (bm25s) over chunk token lists, rebuilt whole after each batch is added.

    Attributes:
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.
    """

    k1: float
    b: float
    _doc_of_chunk: list[int] = field(factory=list, init=False)
    _tokens: list[list[str]] = field(factory=list, init=False)
    _doc_array: npt.NDArray[np.intp] = field(factory=lambda: np.zeros(0, np.intp), init=False)
    _model: bm25s.BM25 | None = field(default=None, init=False)

    @property
    def n_chunks(self) -> int:
        """Number of chunks indexed."""
        return len(self._tokens)

    def add(self, tokens: Sequence[list[str]], doc_of_chunk: Sequence[int]) -> None:
        """Append chunks (their stopword-free tokens and document indices) and rebuild once."""
        if not tokens:
            return
        self._tokens.extend(tokens)
        self._doc_of_chunk.extend(doc_of_chunk)
        self._doc_array = np.asarray(self._doc_of_chunk, dtype=np.intp)
        # bm25s cannot index a corpus without a single token (its average length is 0/0); such
        # a corpus matches no query anyway.
        if not any(self._tokens):
            self._model = None
            return
        model = bm25s.BM25(k1=self.k1, b=self.b)
        model.index(self._tokens, show_progress=False)
        self._model = model

    def scores(self, query_terms: list[str]) -> npt.NDArray[np.float32]:
        """bm25s scores of every chunk for *query_terms* (zeros when nothing can match)."""
        if self._model is None or not query_terms:
            return np.zeros(self.n_chunks, dtype=np.float32)
        return np.asarray(self._model.get_scores(query_terms), dtype=np.float32)

    def ranked_documents(self, query_terms: list[str], want: int) -> Iterator[Hit]:
        """Documents in rank order, each once, at its best chunk; only positive scores.

        The first *want* documents cost one partial ranking of about ``4 * want`` chunks; asking
        the iterator for more (the injection filter backfilling) widens the ranking as needed.
        """
        scores = self.scores(query_terms)
        n_positive = int(np.count_nonzero(scores > 0))
        seen: set[int] = set()
        done = 0
        n = max(1, want) * _CHUNKS_PER_DOC
        while done < n_positive:
            # The (score, index) order is total, so a longer ranking extends the shorter one.
            order = stable_top(scores, n)
            for chunk in order[done:].tolist():
                doc = int(self._doc_array[chunk])
                if doc not in seen:
                    seen.add(doc)
                    yield Hit(doc, chunk, float(scores[chunk]))
            done = order.size
            n *= 2
