"""Benchmark the reference target's retrieval and answers against a brute-force BM25 scan.

The script builds a seeded synthetic corpus: a vocabulary of made-up words whose frequencies
follow a Zipf-like law (the word of rank r has weight ``1 / (r + 3)``), mixed with the target's
own stopwords, cut into sentences of 6-18 words, 10,000 documents of 100-200 words each; and
1,000 queries of two to five mid-frequency words wrapped in question words. Then it measures:

* index time: ``ReferenceTarget().ingest(documents)`` (chunking, tokenizing and bm25s indexing);
* retrieval queries per second: ``ReferenceTarget.retrieve(query)`` (tokenize, bm25s scores,
  stable top-k, collapse to documents);
* ``answer()`` queries per second, naive (defaults) and hardened (``filter_injections`` and
  ``paraphrase`` on);
* the baseline: a brute-force BM25 scan in numpy over the same chunk tokens that scores every
  chunk densely for each query (one pass over all corpus tokens per query term, counting term
  frequencies with ``numpy.bincount``), then a full stable sort and the same collapse to
  documents. It reproduces bm25s's "lucene" BM25 and its float32 arithmetic, so the script checks
  that both return the same top-k document ids, in order, for every query, and exits with a
  message if not.

It prints a table with the ratio of retrieval throughput to the baseline's, and whether the goal
is met: hundreds of ``answer()`` queries per second (at least 200) on a 2-core machine.

Run it from the repository root::

    pip install -e .
    python benchmarks/bench_reference.py
    python benchmarks/bench_reference.py --docs 2000 --queries 200 --seed 1
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable, Sequence

import numpy as np
from ragleaklab_plugins.targets.reference import ReferenceTarget
from ragleaklab_plugins.targets.reference.chunking import chunk_document
from ragleaklab_plugins.targets.reference.text import STOPWORDS, content_tokens

from ragleaklab_core import Document

GOAL_ANSWER_QPS = 200.0
VOCABULARY = 4000
LETTERS = np.array(list("abcdefghijklmnopqrstuvwxyz"))


def make_vocabulary(rng: np.random.Generator, size: int) -> list[str]:
    """*size* distinct made-up lowercase words that are not stopwords."""
    words: dict[str, None] = {}
    while len(words) < size:
        word = "".join(rng.choice(LETTERS, size=int(rng.integers(3, 10))))
        if word not in STOPWORDS:
            words.setdefault(word)
    return list(words)


def make_corpus(seed: int, n_docs: int, n_queries: int) -> tuple[list[Document], list[str]]:
    """Seeded documents (100-200 words, sentences of 6-18) and queries."""
    rng = np.random.default_rng(seed)
    vocab = np.array(make_vocabulary(rng, VOCABULARY))
    weights = 1.0 / (np.arange(VOCABULARY) + 3.0)
    weights /= weights.sum()
    stop = np.array(sorted(STOPWORDS - {"s", "t"}))
    docs = []
    for i in range(n_docs):
        n_words = int(rng.integers(100, 201))
        content = vocab[rng.choice(VOCABULARY, size=n_words, p=weights)]
        is_stop = rng.random(n_words) < 0.3
        words = np.where(is_stop, stop[rng.integers(0, stop.size, n_words)], content).tolist()
        out, until_stop = [], int(rng.integers(6, 19))
        for w in words:
            out.append(w)
            until_stop -= 1
            if until_stop == 0:
                out[-1] += "."
                until_stop = int(rng.integers(6, 19))
        text = " ".join(out)
        docs.append(Document(f"d{i:05d}", text[0].upper() + text[1:] + "."))
    # Queries use mid-frequency words (ranks 20-2000), so answers are neither trivial nor empty.
    queries = []
    for _ in range(n_queries):
        terms = vocab[rng.integers(20, 2000, size=int(rng.integers(2, 6)))]
        queries.append("What does " + " ".join(terms.tolist()) + " mean?")
    return docs, queries


class BruteForceBM25:
    """Dense BM25 ("lucene" variant, as bm25s computes it) by scanning every chunk's tokens."""

    def __init__(
        self, chunk_tokens: Sequence[list[str]], doc_of_chunk: Sequence[int], k1: float, b: float
    ) -> None:
        self.vocab: dict[str, int] = {}
        ids = [[self.vocab.setdefault(t, len(self.vocab)) for t in toks] for toks in chunk_tokens]
        lengths = np.array([len(x) for x in ids], dtype=np.int64)
        self.n_chunks = len(ids)
        self.tokens = np.fromiter((t for x in ids for t in x), dtype=np.int32)
        self.chunk_of_token = np.repeat(np.arange(self.n_chunks, dtype=np.int32), lengths)
        self.doc_of_chunk = np.asarray(doc_of_chunk, dtype=np.int64)
        df = np.zeros(len(self.vocab), dtype=np.int64)
        for x in ids:
            df[np.unique(np.asarray(x, dtype=np.int64))] += 1
        n = self.n_chunks
        self.idf = np.array(
            [math.log(1 + (n - d + 0.5) / (d + 0.5)) for d in df.tolist()], dtype=np.float32
        )
        # bm25s: tf / (k1 * (1 - b + b * len / avg_len) + tf), the length term in float64.
        self.norm = k1 * ((1 - b) + b * lengths / lengths.mean())

    def top_documents(self, terms: list[str], k: int) -> list[int]:
        scores = np.zeros(self.n_chunks, dtype=np.float32)
        for term in terms:
            t = self.vocab.get(term)
            if t is None:
                continue
            tf = np.bincount(self.chunk_of_token[self.tokens == t], minlength=self.n_chunks)
            tf32 = tf.astype(np.float32)
            contribution = (self.idf[t] * (tf32 / (self.norm + tf32))).astype(np.float32)
            scores += contribution
        order = np.argsort(-scores, kind="stable")
        docs: list[int] = []
        seen: set[int] = set()
        for chunk in order.tolist():
            if scores[chunk] <= 0 or len(docs) == k:
                break
            doc = int(self.doc_of_chunk[chunk])
            if doc not in seen:
                seen.add(doc)
                docs.append(doc)
        return docs


def qps(fn: Callable[[str], object], queries: Sequence[str], repeat: int) -> float:
    """Queries per second of *fn* over *queries*, best of *repeat* passes."""
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        for q in queries:
            fn(q)
        best = min(best, time.perf_counter() - start)
    return len(queries) / best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    docs, queries = make_corpus(args.seed, args.docs, args.queries)
    naive = ReferenceTarget()
    start = time.perf_counter()
    naive.ingest(docs)
    index_s = time.perf_counter() - start
    hardened = ReferenceTarget(filter_injections=True, paraphrase=True)
    hardened.ingest(docs)

    chunk_tokens, doc_of_chunk = [], []
    for i, d in enumerate(docs):
        for c in chunk_document(d.doc_id, d.text, naive.chunk_words, naive.chunk_overlap):
            chunk_tokens.append(content_tokens(c.text))
            doc_of_chunk.append(i)
    start = time.perf_counter()
    baseline = BruteForceBM25(chunk_tokens, doc_of_chunk, naive.k1, naive.b)
    baseline_index_s = time.perf_counter() - start

    k = naive.top_k
    for q in queries:
        ours = [r.doc_id for r in naive.retrieve(q)[0]]
        theirs = [docs[i].doc_id for i in baseline.top_documents(content_tokens(q), k)]
        if ours != theirs:
            raise SystemExit(f"top-{k} mismatch for {q!r}: {ours} vs brute force {theirs}")

    retrieval = qps(naive.retrieve, queries, args.repeat)
    answer_naive = qps(naive.answer, queries, args.repeat)
    answer_hardened = qps(hardened.answer, queries, args.repeat)
    brute = qps(lambda q: baseline.top_documents(content_tokens(q), k), queries, args.repeat)
    answered = sum(not naive.answer(q).answer.startswith("I could not") for q in queries)

    print(
        f"corpus: {len(docs)} documents, {len(chunk_tokens)} chunks, {len(queries)} queries "
        f"({answered} answered), top_k={k}"
    )
    print(f"top-{k} document ids identical to the brute-force scan for all {len(queries)} queries")
    print()
    print("| measure | value |")
    print("|---|---:|")
    print(f"| index time, ReferenceTarget.ingest | {index_s:.2f} s |")
    print(f"| index time, brute-force arrays (baseline) | {baseline_index_s:.2f} s |")
    print(f"| retrieval, bm25s + stable top-k | {retrieval:,.0f} queries/s |")
    print(f"| retrieval, brute-force numpy scan (baseline) | {brute:,.0f} queries/s |")
    print(f"| retrieval speed-up over the baseline | {retrieval / brute:.1f}x |")
    print(f"| answer(), naive defaults | {answer_naive:,.0f} queries/s |")
    print(f"| answer(), filter_injections + paraphrase | {answer_hardened:,.0f} queries/s |")
    print()
    met = min(answer_naive, answer_hardened) >= GOAL_ANSWER_QPS
    print(f"goal (>= {GOAL_ANSWER_QPS:.0f} answer() queries/s): {'met' if met else 'NOT met'}")


if __name__ == "__main__":
    main()
