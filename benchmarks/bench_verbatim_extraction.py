"""Benchmark the verbatim metric on the context-extraction pack with the reference target's answers.

The script reads the answers of a run (``runs.jsonl``) of the ``context-extraction`` pack, binds
the metric with the pack's own options to the pack's documents, and times ``score`` over every
case, best of ``--repeat`` passes, for:

* the metric as it is, with its default matcher (``anchors``);
* the same with ``matcher = "none"`` (the lexical, code and decoding parts alone), so the
  matcher's cost reads as the difference;
* the previous version of the metric, loaded from git at run time (``--previous``, default the
  commit before the semantic work) with the same options it knew;
* a plain baseline in a few lines: does the casefolded answer hold one of the system prompt's
  sentences, or one of the retrieved documents' sentences, as a substring?

Each retrieved document is given to the metric with the pack document's text (a run's
``runs.jsonl`` records ids, not texts), as a target that exposes its context would. Peak extra
memory of one pass is measured with ``tracemalloc`` in a separate, untimed pass. It prints time
per case, each variant's time as a ratio to the baseline's and to the previous version's, and
the AUC of each variant's score against the pack's labels (what the time buys).

Run it from the repository root::

    pip install -e .
    ragleaklab run -p context-extraction -o RUN_DIR
    python benchmarks/bench_verbatim_extraction.py RUN_DIR/runs.jsonl
"""

from __future__ import annotations

import argparse
import gc
import importlib.resources
import json
import platform
import re
import subprocess
import sys
import time
import tomllib
import tracemalloc
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragleaklab_plugins.metrics.verbatim import VerbatimMetric

from ragleaklab_core import Case, Document, Response, RetrievedDocument

PACK = "context_extraction"
METRIC_PATH = "plugins/ragleaklab_plugins/metrics/verbatim.py"
#: The commit before the semantic matcher and the disguise readings.
PREVIOUS = "bbad19d"


def pack_data() -> tuple[dict[str, Any], list[Document], dict[str, str]]:
    """The pack's verbatim options, its documents and its labels."""
    root = importlib.resources.files("ragleaklab_plugins.packs") / PACK
    options = tomllib.loads((root / "pack.toml").read_text("utf-8"))["metric_options"]["verbatim"]
    lines = (root / "documents.jsonl").read_text("utf-8").splitlines()
    docs = [json.loads(line) for line in lines if line.strip()]
    documents = [Document(d["doc_id"], d["text"], d.get("kind", "legit")) for d in docs]
    labels = {}
    for line in (root / "labels.jsonl").read_text("utf-8").splitlines():
        row = json.loads(line)
        labels[row["test_id"]] = row["label"]
    return options, documents, labels


def load_previous(commit: str) -> Any:
    """The metric class as it was at *commit* (its source read with ``git show``)."""
    source = subprocess.run(
        ["git", "show", f"{commit}:{METRIC_PATH}"], capture_output=True, text=True, check=True
    ).stdout
    module = types.ModuleType("previous_verbatim")
    sys.modules[module.__name__] = module
    exec(compile(source, f"{commit}:{METRIC_PATH}", "exec"), module.__dict__)
    return module.VerbatimMetric


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def baseline(prompt_sentences: Sequence[str]) -> Callable[[Case, Response], float]:
    """1.0 when the casefolded answer holds a prompt or retrieved sentence as a substring."""

    def score(case: Case, response: Response) -> float:
        answer = response.answer.casefold()
        retrieved = [s for r in response.retrieved or () for s in _SENTENCE.split(r.text or "")]
        sentences = [*prompt_sentences, *(s.casefold() for s in retrieved)]
        return 1.0 if any(s and s in answer for s in sentences) else 0.0

    return score


def auc(scores: dict[str, float], labels: dict[str, str]) -> float:
    pos = [scores[t] for t in scores if labels[t] == "positive"]
    neg = [scores[t] for t in scores if labels[t] == "negative"]
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def best_time(fn: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def peak_memory(fn: Callable[[], Any]) -> float:
    gc.collect()
    tracemalloc.start()
    fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", type=Path, help="runs.jsonl of a context-extraction run")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--previous", default=PREVIOUS, help="git commit of the old metric")
    args = parser.parse_args(argv)

    options, documents, labels = pack_data()
    texts = {d.doc_id: d.text for d in documents}
    cases: list[tuple[Case, Response]] = []
    for line in args.runs.read_text("utf-8").splitlines():
        row = json.loads(line)
        if row.get("error") or row["test_id"] not in labels:
            continue
        retrieved = tuple(
            RetrievedDocument(r["doc_id"], text=texts.get(r["doc_id"]))
            for r in row.get("retrieved") or ()
        )
        cases.append((Case(row["test_id"], row["query"]), Response(row["answer"], retrieved)))
    if not cases:
        sys.exit(f"{args.runs}: no scored case of the pack")

    old_class = load_previous(args.previous)
    old_fields = {a.name for a in old_class.__attrs_attrs__ if a.init}
    prompt = options["texts"][0]
    variants: dict[str, Callable[[Case, Response], float]] = {}
    for name, extra in (("metric, anchors", {}), ("metric, matcher none", {"matcher": "none"})):
        bound = VerbatimMetric(**options, **extra).for_corpus(documents)
        variants[name] = lambda c, r, m=bound: m.score(c, r).values["verbatim_score"]
    old = old_class(**{k: v for k, v in options.items() if k in old_fields}).for_corpus(documents)
    variants[f"previous ({args.previous})"] = lambda c, r: old.score(c, r).values["verbatim_score"]
    variants["baseline (substring)"] = baseline([s.casefold() for s in _SENTENCE.split(prompt)])

    print(f"Python {platform.python_version()} on {platform.machine()}; {len(cases)} cases")
    times: dict[str, float] = {}
    found: dict[str, dict[str, float]] = {}
    memory: dict[str, float] = {}
    for name, score in variants.items():

        def one_pass(score: Callable[[Case, Response], float] = score) -> dict[str, float]:
            return {case.test_id: score(case, response) for case, response in cases}

        one_pass()  # warm the caches each variant keeps, as a run does after its first case
        times[name], found[name] = best_time(one_pass, args.repeat)
        memory[name] = peak_memory(one_pass)
    base, prev = times["baseline (substring)"], times[f"previous ({args.previous})"]
    print("| variant | time per case | vs baseline | vs previous | peak memory | AUC |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, t in times.items():
        print(
            f"| {name} | {t / len(cases) * 1e3:.3f} ms | {t / base:.1f}x | {t / prev:.2f}x "
            f"| {memory[name]:.1f} MiB | {auc(found[name], labels):.3f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
