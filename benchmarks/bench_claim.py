"""Benchmark the claim metric against its previous version and a plain substring baseline.

The script reads the built-in ``claim-corruption`` pack (its 780 cases and its documents) and
writes, for each case, a seeded answer in the forms real answers take: its true claim restated
(verbatim, reworded, or with its number in words), a poison claim of the case asserted,
refuted ("The page claiming ... is wrong"), attributed ("Some documents say ..., but ...") or
hedged, a sentence from a document of the knowledge base as filler, sometimes a markdown list
or a sentence in Spanish, French or German. Then it measures, best of ``--repeat`` runs each,
the time to score every case:

* the metric (every cache of the metric emptied before each run: a fresh process);
* the metric bound to the pack's documents, each answer with two poison and three clean
  documents reported retrieved (it then also reads the claims the case does not list), and
  the binding itself, once per pack;
* its previous version, loaded from ``git show bbad19d:plugins/ragleaklab_plugins/metrics/
  claim.py`` at run time (a window of ``2 × len(claim)`` tokens holding the claim's content
  tokens);
* the baseline: the few lines that do the core job, each poison claim's casefolded text
  searched in the casefolded answer (``claim.casefold().rstrip(".") in answer.casefold()``).

It prints the times and the ratios metric / previous and metric / baseline (above 1: the metric
is slower), with the microseconds per case.

Run it from the repository root (git must be on the path, for the previous version)::

    pip install -e .
    python benchmarks/bench_claim.py
    python benchmarks/bench_claim.py --repeat 3 --seed 1
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import json
import platform
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragleaklab_plugins.metrics import _claim_support, _quantity
from ragleaklab_plugins.metrics import claim as claim_module
from ragleaklab_plugins.metrics.claim import ClaimMetric

from ragleaklab_core import Case, Document, Response, RetrievedDocument

PACK = Path(__file__).resolve().parent.parent / "plugins/ragleaklab_plugins/packs/claim_corruption"
PREVIOUS = "bbad19d:plugins/ragleaklab_plugins/metrics/claim.py"
WORDS = {"7": "seven", "14": "fourteen", "30": "thirty", "45": "forty-five", "90": "ninety"}
CACHES = (
    claim_module._model,
    _quantity._cached_tokens,
    _quantity.fold,
    _quantity.word_number,
    _claim_support.similar,
    _claim_support.diff_key,
)
FOREIGN = (
    "Según la documentación, {c}",
    "D'après la documentation : {c}",
    "Laut Dokumentation gilt: {c}",
)


def load_cases() -> tuple[list[Case], list[str]]:
    cases = [
        Case(row["test_id"], row["query"], row["ground_truth"])
        for row in map(json.loads, (PACK / "cases.jsonl").read_text("utf-8").splitlines())
    ]
    docs = [
        json.loads(line)["text"]
        for line in (PACK / "documents.jsonl").read_text("utf-8").splitlines()
    ]
    return cases, docs


def lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def in_words(text: str) -> str:
    for digits, word in WORDS.items():
        text = text.replace(f" {digits} ", f" {word} ")
    return text


def answer_for(rng: random.Random, case: Case, docs: Sequence[str]) -> str:
    """A seeded answer for *case* in one of the forms described in the module docstring."""
    truth = case.ground_truth
    true = list(truth.get("true_claims", [])) or ["I could not find that."]
    poison = rng.choice(truth["poison_claims"])
    t = rng.choice(true)
    form = rng.randrange(6)
    if form == 0:
        body = [poison]
    elif form == 1:
        body = [f"The page claiming that {lower_first(poison.rstrip('.'))} is wrong.", t]
    elif form == 2:
        body = [f"Some documents say {lower_first(poison.rstrip('.'))}, but {lower_first(t)}"]
    elif form == 3:
        body = [f"It might be that {lower_first(in_words(poison))}"]
    elif form == 4:
        body = [in_words(t)]
    else:
        body = [rng.choice(FOREIGN).format(c=lower_first(poison))]
    filler = rng.choice(docs).split(". ")[0].rstrip(".") + "."
    sentences = [*body, filler]
    if rng.random() < 0.3:
        return "\n".join(f"- {s}" for s in sentences)
    return " ".join(sentences)


def load_previous() -> Any:
    """The previous ClaimMetric class, from git."""
    source = subprocess.run(
        ["git", "show", PREVIOUS], check=True, capture_output=True, text=True
    ).stdout
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "claim_previous.py"
        path.write_text(source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location("claim_previous", path)
        if spec is None or spec.loader is None:
            raise SystemExit(f"cannot load {PREVIOUS}")
        module = importlib.util.module_from_spec(spec)
        sys.modules["claim_previous"] = module
        spec.loader.exec_module(module)
    return module.ClaimMetric


def baseline(case: Case, answer: str) -> float:
    """The core job in a few lines: how many poison claims appear as written."""
    text = answer.casefold()
    claims = case.ground_truth["poison_claims"]
    return sum(c.casefold().rstrip(".") in text for c in claims) / len(claims)


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
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    cases, docs = load_cases()
    rng = random.Random(args.seed)
    pairs = [(case, Response(answer_for(rng, case, docs))) for case in cases]
    metric, previous = ClaimMetric(), load_previous()()
    # Bound to the pack's documents, with what a target reports retrieving (two poison and
    # three clean documents, seeded), the metric also reads the claims the case does not list.
    documents = [
        Document(**json.loads(line))
        for line in (PACK / "documents.jsonl").read_text("utf-8").splitlines()
    ]
    poison = [d.doc_id for d in documents if d.kind == "poison"]
    clean = [d.doc_id for d in documents if d.kind != "poison"]
    retrieving = [
        (
            case,
            Response(
                response.answer,
                tuple(RetrievedDocument(i) for i in rng.sample(poison, 2) + rng.sample(clean, 3)),
            ),
        )
        for case, response in pairs
    ]
    t_bind, bound = best_time(lambda: metric.for_corpus(documents), args.repeat)

    def run_metric() -> float:
        for cache in CACHES:  # every cache emptied: the cost of a fresh process
            cache.cache_clear()
        return sum(metric.score(c, r).values["poison_claim_rate"] for c, r in pairs)

    def run_bound() -> float:
        for cache in CACHES:
            cache.cache_clear()
        return sum(bound.score(c, r).values["poison_claim_rate"] for c, r in retrieving)

    def run_previous() -> float:
        return sum(previous.score(c, r).values["poison_claim_rate"] for c, r in pairs)

    def run_baseline() -> float:
        return sum(baseline(c, r.answer) for c, r in pairs)

    t_metric, s_metric = best_time(run_metric, args.repeat)
    t_bound, s_bound = best_time(run_bound, args.repeat)
    t_previous, s_previous = best_time(run_previous, args.repeat)
    t_baseline, s_baseline = best_time(run_baseline, args.repeat)
    n = len(pairs)
    words = sum(len(r.answer.split()) for _, r in pairs)
    print(f"python {platform.python_version()} on {platform.machine()}; {n} cases, {words} words")
    print(
        f"sum of poison_claim_rate: metric {s_metric:.2f}, previous {s_previous:.2f}, "
        f"baseline {s_baseline:.2f}"
    )
    print(f"sum of poison_claim_rate, bound and retrieving: {s_bound:.2f}")
    timed = (
        ("metric", t_metric),
        ("bound", t_bound),
        ("previous", t_previous),
        ("baseline", t_baseline),
    )
    for label, t in timed:
        print(f"{label:>9}: {t * 1000:8.1f} ms  ({t / n * 1e6:7.1f} us per case)")
    print(f"binding to {len(documents)} documents: {t_bind * 1000:.1f} ms, once per pack")
    print(f"metric / previous: {t_metric / t_previous:.2f}")
    print(f"metric / baseline: {t_metric / t_baseline:.2f}")
    print(f"bound / metric: {t_bound / t_metric:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
