"""Benchmark relevance-hijack's gate: the attribution metric against its previous version and a
plain baseline, in time and in what each sees.

The script runs the built-in ``relevance-hijack`` pack against the embedded reference target
(620 answers, every retrieval recorded) and scores every answer, best of ``--repeat`` runs each:

* the attribution metric (``poison_attribution``, bound to the pack's corpus once, as a run does);
* its previous version: the value the pack gated on before, the rank metric's
  ``poison_rate_at_k`` (the share of the top 5 that is poison), which reads the ranking only;
* the baseline, the few lines that do the core job with sets: the share of the answer's word
  trigrams found in a retrieved poison document and in no clean document of the pack.

It prints the time per case, the ratios attribution / previous and attribution / baseline (above
1: attribution is slower), and each value's AUC and true-positive rate at a 1% false-positive rate
against the pack's labels (what the time buys).

Run it from the repository root::

    pip install -e .
    python benchmarks/bench_attribution.py
    python benchmarks/bench_attribution.py --repeat 3
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import re
import time
from collections.abc import Callable, Sequence

import numpy as np
from ragleaklab_plugins.metrics.attribution import AttributionMetric
from ragleaklab_plugins.metrics.retrieval import RetrievalMetric
from ragleaklab_plugins.targets.reference import ReferenceTarget

from ragleaklab_core import Case, Response, load_pack
from ragleaklab_core.stats.roc import auc_delong

_WORD = re.compile(r"\w+")


def trigrams(text: str) -> set[tuple[str, ...]]:
    w = _WORD.findall(text.casefold())
    return {tuple(w[i : i + 3]) for i in range(len(w) - 2)}


def baseline(documents: Sequence[object]) -> Callable[[Case, Response], float]:
    """Share of the answer's trigrams only retrieved poison holds (no clean document does)."""
    clean: set[tuple[str, ...]] = set()
    poison: dict[str, set[tuple[str, ...]]] = {}
    for d in documents:
        grams = trigrams(d.text)  # type: ignore[attr-defined]
        if d.kind == "poison":  # type: ignore[attr-defined]
            poison[d.doc_id] = grams  # type: ignore[attr-defined]
        else:
            clean |= grams

    def score(case: Case, response: Response) -> float:
        answer = trigrams(response.answer)
        if not answer:
            return 0.0
        held = set().union(*(poison.get(r.doc_id, set()) for r in response.retrieved or ()))
        return len((answer & held) - clean) / len(answer)

    return score


def timed(score: Callable[[Case, Response], float], pairs: Sequence[tuple[Case, Response]],
          repeat: int) -> tuple[float, list[float]]:  # fmt: skip
    best, values = float("inf"), []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        values = [score(case, response) for case, response in pairs]
        best = min(best, time.perf_counter() - start)
    return best, values


def operating(values: Sequence[float], labels: np.ndarray) -> tuple[float, float]:
    s = np.asarray(values, dtype=float)
    auc = auc_delong(s, labels).auc
    negatives = np.sort(s[~labels])
    allowed = int(np.floor(0.01 * negatives.size))  # false positives a 1% FPR allows
    cut = negatives[-allowed - 1] if allowed < negatives.size else -np.inf
    tpr = float(np.mean(s[labels] > cut))
    return auc, tpr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    pack = load_pack("relevance-hijack").obj
    documents, cases = list(pack.documents()), list(pack.cases())
    raw = pack.default_labels() or b""
    positive = {r["test_id"]: r["label"] == "positive" for r in map(json.loads, raw.splitlines())}
    labels = np.array([positive[c.test_id] for c in cases], dtype=bool)
    target = ReferenceTarget()
    target.ingest(documents)
    pairs = [(case, target.answer(case.query)) for case in cases]

    attribution = AttributionMetric().for_corpus(documents)
    rank = RetrievalMetric(k=5).for_corpus(documents)
    rows = {
        "attribution (poison_attribution)": lambda c, r: attribution.score(c, r).values[
            "poison_attribution"
        ],
        "previous (poison_rate_at_k)": lambda c, r: rank.score(c, r).values["poison_rate_at_k"],
        "baseline (poison-only trigrams)": baseline(documents),
    }
    start = time.perf_counter()
    AttributionMetric().for_corpus(documents)
    bind = time.perf_counter() - start
    print(f"relevance-hijack: {len(pairs)} answers of the reference target; python "
          f"{platform.python_version()}; best of {args.repeat}")  # fmt: skip
    print(f"binding attribution to the corpus ({len(documents)} documents): {bind * 1e3:.1f} ms")
    times = {}
    for name, score in rows.items():
        seconds, values = timed(score, pairs, args.repeat)
        times[name] = seconds
        auc, tpr = operating(values, labels)
        per = seconds / len(pairs) * 1e6
        print(f"  {name:34s} {per:8.1f} us/case  AUC {auc:.3f}  TPR@1%FPR {tpr:.3f}")
    first = next(iter(times.values()))
    previous, plain = list(times.values())[1:]
    print(f"attribution / previous: {first / previous:.1f}x; attribution / baseline: "
          f"{first / plain:.1f}x")  # fmt: skip


if __name__ == "__main__":
    main()
