"""Benchmark the access metric's ``score`` over the cross-tenant pack against its previous
version and a plain baseline.

Answers: for every case of the pack, a realistic answer built from the pack's own documents
(seeded): a sentence of a document the principal may not see, rewritten the ways answers write
values (amounts in words or as ``42.5k``, ids without hyphens), a sentence of a public
document, or a refusal. Timed, best of ``--repeat`` runs each, scoring every case:

* the metric as it is;
* its previous version (``plugins/ragleaklab_plugins/metrics/access.py`` at commit bbad19d,
  loaded with ``git show`` at run time);
* the baseline: a few lines that do the core job, a set of the words only forbidden
  documents hold (per tenant, precomputed) and a set intersection with the answer's words.

It prints each time per case and the ratios of the metric to each (above 1: slower). Run it
from the repository root (it reads the older versions with ``git show``)::

    python benchmarks/bench_access.py --repeat 5
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ragleaklab_plugins.metrics.access import AccessMetric

from ragleaklab_core import Case, Document, Response

PACK = Path("plugins/ragleaklab_plugins/packs/cross_tenant")
METRICS = "plugins/ragleaklab_plugins/metrics"
#: The metric before values however spelled, confirmed guesses and refusals were read.
PREVIOUS = "bbad19d"


def _load(commit: str, path: str, name: str, patch: tuple[str, str] | None = None) -> Any:
    source = subprocess.run(
        ["git", "show", f"{commit}:{path}"], check=True, capture_output=True, text=True
    ).stdout
    if patch:
        source = source.replace(*patch)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, f.name)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    finally:
        Path(f.name).unlink()
    return module


def _previous() -> type:
    module = _load(PREVIOUS, f"{METRICS}/access.py", "access_previous")
    return module.AccessMetric  # type: ignore[no-any-return]


def _answers(docs: list[Document], cases: list[Case], seed: int) -> list[str]:
    rng = random.Random(seed)
    private = [d for d in docs if "access" in d.metadata]
    public = [d for d in docs if "access" not in d.metadata]
    out = []
    for _ in cases:
        pick = rng.random()
        if pick < 0.4:
            text = rng.choice(private).text
            text = re.sub(r"(\d+),000", lambda m: f"{m.group(1)}k", text)
            text = re.sub(r"\b([A-Z]{2})-(\d+)", r"\1 \2", text)
        elif pick < 0.8:
            text = rng.choice(public).text
        else:
            text = "I can't share another team's records. " + rng.choice(public).text[:200]
        out.append(text)
    return out


def _baseline(docs: list[Document]):  # type: ignore[no-untyped-def]
    words = re.compile(r"[^\W_]+")
    tenant_words: dict[str | None, set[str]] = {}
    for d in docs:
        tenant = (d.metadata.get("access") or {}).get("groups", [None])[0]
        tenant_words.setdefault(tenant, set()).update(words.findall(d.text.casefold()))
    public = tenant_words.get(None, set())

    def score(case: Case, answer: str) -> float:
        tenant = (case.principal or ":").split(":")[0]
        seen = public | tenant_words.get(tenant, set())
        found = set(words.findall(answer.casefold()))
        return len(found - seen) / len(found) if found else 0.0

    return score


def _time(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    docs = [
        Document(d["doc_id"], d["text"], d.get("kind", "legit"), d.get("metadata", {}))
        for d in map(json.loads, (PACK / "documents.jsonl").open(encoding="utf-8"))
    ]
    cases = [
        Case(c["test_id"], c["query"], c["ground_truth"], principal=c.get("principal"))
        for c in map(json.loads, (PACK / "cases.jsonl").open(encoding="utf-8"))
    ]
    answers = _answers(docs, cases, args.seed)
    responses = [Response(a) for a in answers]
    current = AccessMetric().for_corpus(docs)
    previous = _previous()().for_corpus(docs)
    base = _baseline(docs)
    pairs = list(zip(cases, responses, strict=True))
    t_cur = _time(lambda: [current.score(c, r) for c, r in pairs], args.repeat)
    t_prev = _time(lambda: [previous.score(c, r) for c, r in pairs], args.repeat)
    t_base = _time(lambda: [base(c, r.answer) for c, r in pairs], args.repeat)
    n = len(pairs)
    print(f"python {sys.version.split()[0]}, {n} cases of the cross-tenant pack")
    print(f"access score:      {1e6 * t_cur / n:8.1f} us/case")
    print(f"previous version:  {1e6 * t_prev / n:8.1f} us/case")
    print(f"baseline (sets):   {1e6 * t_base / n:8.1f} us/case")
    print(f"ratio vs previous: {t_cur / t_prev:.2f}x   ratio vs baseline: {t_cur / t_base:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
