"""Benchmark the citation metric against its previous version and a plain baseline.

Data: the ``citation-forgery`` pack's documents and cases, and the answers the reference target
(its labelled defaults) writes to them: the answers real packs are scored on, citing in brackets,
numbered sources and footnotes. A second set rewrites every answer's bracketed citations into the
prose forms people and models also write (``..., according to kb-a.``), so the new parsing paths
are timed too. Each set is scored, best of ``--repeat`` runs, by:

* the metric: ``CitationMetric().for_corpus(documents).score(case, response)``;
* its previous version, loaded at run time from ``git show bbad19d:<path>`` (the script needs
  the repository's history; without it the column is left out);
* a baseline, the core job in a few lines: ids in brackets found by a regex, each checked against
  the retrieved ids, and the share of the words of the text before it found in the cited
  document.

It prints the times and the ratios metric / previous and metric / baseline (above 1: the metric
is slower; it also reads the prose forms, superscripts and links, compares figures in any
writing and looks for negations, antonyms and added clauses).

Run it from the repository root::

    pip install -e .
    python benchmarks/bench_citation.py
    python benchmarks/bench_citation.py --repeat 3
"""

from __future__ import annotations

import argparse
import platform
import re
import subprocess
import sys
import time
import types
from collections.abc import Callable, Sequence
from typing import Any

from ragleaklab_plugins.metrics.citation import CitationMetric

from ragleaklab_core import Case, Document, Response, load_pack
from ragleaklab_packgen.target import answer_all

PREVIOUS = "bbad19d"
PATH = "plugins/ragleaklab_plugins/metrics/citation.py"
_BRACKET = re.compile(r"\[([^\[\]\s]+)\]")
_WORD = re.compile(r"\w+")
_TRAILING_ID = re.compile(r"\s*\[([a-z][\w-]+)\]([.?!])")


def previous_metric() -> Any | None:
    """The metric class as it was at :data:`PREVIOUS`, or None without the history."""
    try:
        source = subprocess.run(
            ["git", "show", f"{PREVIOUS}:{PATH}"], capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    module = types.ModuleType("citation_previous")
    sys.modules[module.__name__] = module
    exec(compile(source, f"{PREVIOUS}:{PATH}", "exec"), module.__dict__)
    return module.CitationMetric


def baseline(documents: Sequence[Document]) -> Callable[[Case, Response], float]:
    """The plain version: bracketed ids, retrieved or not, and word overlap."""
    texts = {d.doc_id.casefold(): set(_WORD.findall(d.text.casefold())) for d in documents}

    def score(case: Case, response: Response) -> float:
        got = {d.doc_id.casefold() for d in response.retrieved or ()}
        worst = 0.0
        last = 0
        for m in _BRACKET.finditer(response.answer):
            key = m.group(1).casefold()
            before = set(_WORD.findall(response.answer[last : m.start()].casefold()))
            last = m.end()
            if key not in got:
                worst = 1.0
                continue
            found = len(before & texts.get(key, set())) / len(before) if before else 1.0
            worst = max(worst, 1.0 - found)
        return worst

    return score


def prose(answer: str) -> str:
    """*answer* with each trailing bracketed citation written as a citing phrase."""
    return _TRAILING_ID.sub(lambda m: f", according to {m.group(1)}{m.group(2)}", answer)


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    pack = load_pack("citation-forgery").obj
    documents = list(pack.documents())
    cases = list(pack.cases())
    responses = answer_all(documents, [c.query for c in cases])
    sets = {
        "reference answers": responses,
        "prose citations": [Response(prose(r.answer), r.retrieved) for r in responses],
    }
    metric = CitationMetric().for_corpus(documents)
    old_class = previous_metric()
    old = old_class().for_corpus(documents) if old_class else None
    plain = baseline(documents)
    print(f"Python {platform.python_version()} {platform.machine()}; {len(cases)} cases")
    print("| answers | metric | previous | baseline | metric / previous | metric / baseline |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, answers in sets.items():
        pairs = list(zip(cases, answers, strict=True))
        t_metric = best(lambda p=pairs: [metric.score(c, r) for c, r in p], args.repeat)
        t_plain = best(lambda p=pairs: [plain(c, r) for c, r in p], args.repeat)
        if old is not None:
            t_old = best(lambda p=pairs: [old.score(c, r) for c, r in p], args.repeat)
            old_cols = f"{t_old:.3f} s | ", f"{t_metric / t_old:.2f}"
        else:
            old_cols = "n/a | ", "n/a"
        print(
            f"| {name} | {t_metric:.3f} s | {old_cols[0]}{t_plain:.3f} s | {old_cols[1]} | "
            f"{t_metric / t_plain:.2f} |"
        )


if __name__ == "__main__":
    main()
