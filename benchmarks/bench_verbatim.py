"""Benchmark the verbatim metric against a plain set-of-windows scan, and show it is linear.

The script builds a seeded synthetic private corpus: a vocabulary of made-up words (mostly
ASCII, one in eight German, Russian or Greek with letters outside ASCII, some capitalised),
10,000 documents of 100-200 words; and an answer of 100,000 words that alternates runs of fresh
vocabulary words (5-60) with runs copied from random documents (4-40 words, re-cased and with
different punctuation, so copies shorter than ``min_words`` = 8 do not count). Then it measures,
best of ``--repeat`` runs each:

* index time: ``VerbatimMetric(min_words=8).for_corpus(documents)`` (tokenising every document
  and the window -> document-ids dict);
* scoring time: ``metric.score(case, Response(answer))`` (tokenising the answer with offsets, one
  dict look-up per window, merging runs, the evidence);
* the baseline, a straightforward implementation of the same measure in a few lines: tokenise
  with ``re.findall(r"[^\\W_]+", unicodedata.normalize("NFKC", text).casefold())`` (one pass over
  the whole text, no offsets), a ``set`` of every document window as a tuple, then a
  ``bytearray`` marking the tokens of each answer window found in the set. On this text (no
  combining marks, no spaceless script, no character NFKC splits) its tokens are the metric's,
  so the script checks that both count the same covered words and exits with a message if not.

It prints the ratios metric time / baseline time (above 1: the metric is slower; it also keeps
offsets into the original answer, the documents holding each window and the runs), and the
scoring time of the first 25,000, 50,000 and 100,000 words of the answer as ratios to the
25,000-word time (linear: about 2 and 4).

Run it from the repository root::

    pip install -e .
    python benchmarks/bench_verbatim.py
    python benchmarks/bench_verbatim.py --docs 2000 --answer-words 20000 --repeat 3 --seed 1
"""

from __future__ import annotations

import argparse
import functools
import gc
import platform
import random
import re
import time
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

from ragleaklab_plugins.metrics.verbatim import VerbatimMetric

from ragleaklab_core import Case, Document, Response

MIN_WORDS = 8
LETTERS = "abcdefghijklmnopqrstuvwxyz"
# Words with letters outside ASCII, precomposed (NFC): the baseline's whole-text NFKC gives
# the same tokens as the metric's per-word one.
FOREIGN = [
    "straße",
    "größe",
    "über",
    "schön",
    "fähre",
    "привет",
    "мир",
    "данные",
    "ключ",
    "сейф",
    "пароль",
    "ωμέγα",
    "κλειδί",
    "δεδομένα",
    "έργο",
    "μυστικό",
]
SEPARATORS = (" ", " ", " ", " ", ", ", ". ", "; ", " - ", "\n")


def make_vocabulary(rng: random.Random, size: int) -> list[str]:
    """*size* distinct made-up words; one in eight a foreign word with a numeric suffix."""
    words: dict[str, None] = {}
    while len(words) < size:
        if rng.random() < 0.125:
            word = f"{rng.choice(FOREIGN)}{rng.randrange(100)}"
        else:
            word = "".join(rng.choice(LETTERS) for _ in range(rng.randint(3, 9)))
        words.setdefault(word)
    return list(words)


def render(rng: random.Random, words: Sequence[str]) -> str:
    """*words* joined by random separators, some capitalised or upper-cased."""
    out = []
    for word in words:
        r = rng.random()
        if r < 0.05:
            word = word.upper()
        elif r < 0.15:
            word = word.capitalize()
        out.append(word + rng.choice(SEPARATORS))
    return "".join(out)


def make_data(
    seed: int, n_docs: int, answer_words: int
) -> tuple[list[Document], list[str], list[list[str]]]:
    """Seeded documents, and the answer as a list of word groups (joined to cut prefixes)."""
    rng = random.Random(seed)
    vocabulary = make_vocabulary(rng, 20_000)
    doc_words = [rng.choices(vocabulary, k=rng.randint(100, 200)) for _ in range(n_docs)]
    documents = [
        Document(f"priv-{i:05d}", render(rng, ws), "private") for i, ws in enumerate(doc_words)
    ]
    groups: list[list[str]] = []
    total = 0
    while total < answer_words:
        if rng.random() < 0.5:
            group = rng.choices(vocabulary, k=rng.randint(5, 60))
        else:
            source = rng.choice(doc_words)
            length = rng.randint(4, 40)
            start = rng.randrange(0, len(source) - length)
            group = source[start : start + length]
        group = group[: answer_words - total]
        groups.append(group)
        total += len(group)
    return documents, vocabulary, groups


def answer_text(seed: int, groups: Sequence[list[str]], n_words: int) -> str:
    """The first *n_words* words of the answer, rendered with a seeded rng."""
    rng = random.Random(seed + 1)
    words: list[str] = []
    for group in groups:
        words.extend(group)
        if len(words) >= n_words:
            break
    return render(rng, words[:n_words])


# ---- the baseline ---------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+")


def baseline_tokens(text: str) -> list[str]:
    return _WORD.findall(unicodedata.normalize("NFKC", text).casefold())


def baseline_index(documents: Sequence[Document], n: int) -> set[tuple[str, ...]]:
    windows: set[tuple[str, ...]] = set()
    for doc in documents:
        tokens = baseline_tokens(doc.text)
        windows.update(zip(*(tokens[j:] for j in range(n)), strict=False))
    return windows


def baseline_covered(answer: str, windows: set[tuple[str, ...]], n: int) -> tuple[int, int]:
    """(covered words, answer words)."""
    tokens = baseline_tokens(answer)
    covered = bytearray(len(tokens))
    ones = b"\x01" * n
    for i, window in enumerate(zip(*(tokens[j:] for j in range(n)), strict=False)):
        if window in windows:
            covered[i : i + n] = ones
    return covered.count(1), len(tokens)


# ---- timing ---------------------------------------------------------------------------------


def best_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--answer-words", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    documents, _, groups = make_data(args.seed, args.docs, args.answer_words)
    n_doc_words = sum(len(baseline_tokens(d.text)) for d in documents)
    case = Case("bench", "q")
    sizes = [args.answer_words // 4, args.answer_words // 2, args.answer_words]
    answers = {n: answer_text(args.seed, groups, n) for n in sizes}
    full = answers[args.answer_words]

    metric = VerbatimMetric(min_words=MIN_WORDS)
    # The index is built fresh each run (gc.collect() between runs frees the last one).
    t_index, bound = best_time(lambda: metric.for_corpus(documents), max(1, args.repeat // 2))
    t_base_index, windows = best_time(
        lambda: baseline_index(documents, MIN_WORDS), max(1, args.repeat // 2)
    )
    t_score, result = best_time(lambda: bound.score(case, Response(full)), args.repeat)
    t_base_score, (base_covered, base_words) = best_time(
        lambda: baseline_covered(full, windows, MIN_WORDS), args.repeat
    )
    covered, answer_words = result.evidence["covered_words"], result.evidence["answer_words"]
    if (covered, answer_words) != (base_covered, base_words):
        raise SystemExit(
            f"the metric and the baseline disagree: {covered}/{answer_words} covered words vs "
            f"{base_covered}/{base_words}"
        )

    print(
        f"Python {platform.python_version()} on {platform.machine()}; {args.docs:,} private "
        f"documents ({n_doc_words:,} words), min_words = {MIN_WORDS}, best of {args.repeat}"
    )
    print(
        f"answer: {answer_words:,} words, {covered:,} covered "
        f"(verbatim_score {result.values['verbatim_score']:.3f}); the baseline agrees\n"
    )
    print("| measure | metric | baseline | metric / baseline |")
    print("|---|---:|---:|---:|")
    rows = [
        ("index build", t_index, t_base_index),
        (f"scoring, {answer_words:,}-word answer", t_score, t_base_score),
        ("index build + scoring", t_index + t_score, t_base_index + t_base_score),
    ]
    for name, mine, base in rows:
        print(f"| {name} | {mine:.3f} s | {base:.3f} s | {mine / base:.2f} |")

    print("\n| answer words | scoring time | ratio to the first | baseline ratio |")
    print("|---:|---:|---:|---:|")
    first = first_base = 0.0
    for n in sizes:
        text = answers[n]
        t, _ = best_time(functools.partial(bound.score, case, Response(text)), args.repeat)
        tb, _ = best_time(
            functools.partial(baseline_covered, text, windows, MIN_WORDS), args.repeat
        )
        first, first_base = first or t, first_base or tb
        print(f"| {n:,} | {t * 1000:.1f} ms | {t / first:.2f} | {tb / first_base:.2f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
