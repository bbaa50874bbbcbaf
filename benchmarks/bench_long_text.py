"""Time every built-in metric on answers of one long run of a character, against a linear baseline.

An answer is attacker-controlled: one very long word, or a long run of one character, must not
stall a run. A regex that can start anywhere inside a run and scan to its end takes time that
grows with the square of the run's length (the citation parser's speaking-source pattern did:
12,000 letters took about 28 seconds). This script scores, with each built-in pack's metrics
bound to the pack's documents as a run binds them, a real case of the pack answered by
``--chars`` repetitions (default 50,000) of each kind of character: letters, digits, spaces,
punctuation, ``[``, ``(``, ``*``, ``_``, ``:``, and a few two-character shapes (``ab-``,
``a.``, a line break and a space), and the same once more at ``--scale`` times the
length.

For each metric and kind it prints the time, the ratio against the baseline
``re.findall(r"\\w+", text)`` on the same text (one linear pass), and the growth when the text is
``--scale`` times longer: about ``--scale`` for a linear metric, its square for a quadratic one.
Best of ``--repeat`` runs each.

Run it from the repository root::

    pip install -e .
    python benchmarks/bench_long_text.py
    python benchmarks/bench_long_text.py --chars 20000 --scale 4 --repeat 3
"""

from __future__ import annotations

import argparse
import platform
import re
import sys
import time
from collections.abc import Callable

from ragleaklab_core import Response
from ragleaklab_core.run.runner import load_metric, load_pack

PACKS = (
    "citation-forgery",
    "claim-corruption",
    "context-extraction",
    "cross-tenant",
    "markdown-exfiltration",
    "relevance-hijack",
    "sentinel-takeover-safe",
    "verbatim-extraction",
)
#: The kinds of long runs: name -> the repeated unit.
KINDS = {
    "letters": "a",
    "digits": "7",
    "spaces": " ",
    "punctuation": ".",
    "[": "[",
    "(": "(",
    "*": "*",
    "_": "_",
    ":": ":",
    "word-dash": "ab-",
    "dotted": "a.",
    "line-space": "\n ",
}
_WORD = re.compile(r"\w+")


def best(call: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chars", type=int, default=50_000)
    parser.add_argument("--scale", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args(argv)
    setup = f"{args.chars} chars, x{args.scale}, best of {args.repeat}"
    print(f"python {platform.python_version()}, {setup}")
    print(f"{'pack':24} {'metric':12} {'kind':12} {'seconds':>9} {'/baseline':>10} {'growth':>7}")
    worst = 0.0
    for name in PACKS:
        pack = load_pack(name).obj
        info = pack.info()
        documents = tuple(pack.documents())
        case = next(iter(pack.cases()))
        for metric_name in info.metrics:
            metric = load_metric(metric_name, info, documents).obj
            for kind, unit in KINDS.items():
                times = []
                for length in (args.chars, args.chars * args.scale):
                    text = (unit * (length // len(unit) + 1))[:length]
                    response = Response(text)
                    base = best(lambda text=text: _WORD.findall(text), args.repeat)
                    took = best(lambda m=metric, c=case, r=response: m.score(c, r), args.repeat)
                    times.append((took, base))
                (took, base), (took_big, _) = times
                growth = took_big / max(took, 1e-6)
                if took_big > 0.01:  # growth of a few milliseconds is noise
                    worst = max(worst, growth)
                print(
                    f"{name:24} {metric_name:12} {kind:12} {took:9.4f} "
                    f"{took / max(base, 1e-6):10.1f} {growth:7.2f}"
                )
    shapes = f"linear: about {args.scale}, quadratic: {args.scale**2}"
    print(f"largest growth above 10 ms: {worst:.2f} ({shapes})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
