"""Every count of built-in plugins in README.md and docs/*.md matches the installed entry points.

A count written in prose ("six built-in metrics") goes stale the day a plugin is added, and
nothing else notices. Each number (digits or words) followed, within two words, by ``packs``,
``metrics``, ``fitters``, ``targets`` or ``reporters`` must equal the number of ragleaklab's own
entry points in that group, unless it is listed in :data:`OTHER_COUNTS` with what it counts
instead. ``N of M packs`` is a run's output (checked where the session runs) and is skipped.
"""

from __future__ import annotations

import importlib.metadata
import re
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
}  # fmt: skip
NOUNS = {
    "packs": "ragleaklab.packs",
    "metrics": "ragleaklab.metrics",
    "fitters": "ragleaklab.fitters",
    "targets": "ragleaklab.targets",
    "reporters": "ragleaklab.reporters",
}
COUNT = re.compile(
    r"(?<![\w-])(?<!of )(?P<n>\d+|"
    + "|".join(WORDS)
    + r")\b(?P<between>(?:[ -](?!of\b)[A-Za-z][\w-]*){0,2}?) "
    r"(?P<noun>" + "|".join(NOUNS) + r")\b",
    re.IGNORECASE,
)


def built_ins() -> dict[str, set[str]]:
    """ragleaklab's own entry points by group (a third party's installed ones are not counted)."""
    found: dict[str, set[str]] = defaultdict(set)
    for ep in importlib.metadata.distribution("ragleaklab").entry_points:
        found[ep.group].add(ep.name)
    return found


def _others() -> dict[tuple[str, str], int]:
    """(page, phrase) -> what it counts, where that is not every built-in of its group."""
    b = built_ins()
    return {
        # "besides the embedded reference target, ragleaklab ships three targets for real systems"
        ("docs/targets.md", "three targets"): len(b["ragleaklab.targets"] - {"reference"}),
        # the two packs of the config shown above it
        ("docs/configuration.md", "two packs"): 2,
        # the tutorial's example distribution, not ragleaklab
        ("docs/tutorial.md", "two packs"): 2,
    }


def counts(text: str) -> list[tuple[str, int, str]]:
    """Every (phrase, number, group) counted in *text*."""
    out = []
    for m in COUNT.finditer(text):
        raw = m.group("n").lower()
        n = int(raw) if raw.isdigit() else WORDS[raw]
        out.append((m.group(0), n, NOUNS[m.group("noun").lower()]))
    return out


def test_the_scan_reads_words_digits_and_skips_run_output():
    found = counts("Five built-in packs, 6 metrics and four fitters; FAIL (7 of 8 packs failed)")
    assert found == [
        ("Five built-in packs", 5, "ragleaklab.packs"),
        ("6 metrics", 6, "ragleaklab.metrics"),
        ("four fitters", 4, "ragleaklab.fitters"),
    ]


def test_the_built_ins_are_read_from_the_entry_points():
    b = built_ins()
    assert {"relevance-hijack", "cross-tenant"} <= b["ragleaklab.packs"]
    assert {"reference", "http", "python"} <= b["ragleaklab.targets"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_count_of_built_ins_is_the_installed_count(page):
    b = built_ins()
    rel = page.relative_to(ROOT).as_posix()
    others = _others()
    wrong = []
    for phrase, n, group in counts(page.read_text(encoding="utf-8")):
        expected = others.get((rel, phrase.lower()), len(b[group]))
        if n != expected:
            wrong.append(f"{rel}: {phrase!r} says {n}, expected {expected} ({group})")
    assert wrong == []


def test_every_listed_exception_is_still_written():
    for (rel, phrase), _n in _others().items():
        assert phrase in (ROOT / rel).read_text(encoding="utf-8").lower(), (rel, phrase)


def _backticked(text: str) -> set[str]:
    return set(re.findall(r"`([^`]+)`", text))


def test_the_lists_of_built_ins_name_every_one():
    b = built_ins()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    packs = readme[readme.index("built-in packs ([packs]") :].split("\n- ", 1)[0]
    metrics = readme[readme.index("metrics ([metrics]") :].split("\n- ", 1)[0]
    assert b["ragleaklab.packs"] <= _backticked(packs)
    assert b["ragleaklab.metrics"] <= _backticked(metrics)
    # docs/architecture.md: the "built-ins" column of the plugin groups' table.
    for line in (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) > 4 and cells[1].strip("`") in b and "packs" not in cells[1]:
            assert _backticked(cells[-2]) == b[cells[1].strip("`")], line
    # docs/metrics.md: one table row per built-in metric.
    rows = re.findall(
        r"^\| `([\w-]+)` \| `\w+Metric` \|",
        (ROOT / "docs" / "metrics.md").read_text(encoding="utf-8"),
        re.M,
    )
    assert set(rows) == b["ragleaklab.metrics"]
