"""The packs' quality cards (``ragleaklab_packgen.quality``): every figure against brute force, the
intervals against the core's, and the docs section they are written into."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragleaklab_core import Case
from ragleaklab_core.stats.aggregation import rate_interval
from ragleaklab_core.stats.roc import auc_delong
from tests.support.packgen import packgen

ROOT = Path(__file__).resolve().parents[3]


quality = packgen("quality")
build = packgen("build")
summary = packgen("summary")

KINDS = ("alpha", "beta", "gamma")


def synthetic(rows: list[tuple[float, bool, str | None]], threshold: float) -> Any:
    """A PackData of *rows* (score, positive, hard kind) with *threshold*."""
    cases = [
        Case(f"x-{i:04d}", "q", {}, (f"hard:{kind}",) if kind else ())
        for i, (_, _, kind) in enumerate(rows)
    ]
    labels = [
        {"test_id": c.test_id, "label": "positive" if y else "negative", "notes": "n"}
        for c, (_, y, _) in zip(cases, rows, strict=True)
    ]
    return build.PackData(
        name="synthetic",
        pack_type="other",
        description="d",
        metric="m",
        primary="v",
        metric_options={},
        documents=[],
        cases=cases,
        labels=labels,
        threshold=threshold,
        false_positives=0,
        true_positives=0,
        scores=[s for s, _, _ in rows],
        drafts=[],
        rule=lambda *a: None,
        scorer=lambda docs: None,
    )


ROWS = st.lists(
    st.tuples(
        st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0]),
        st.booleans(),
        st.sampled_from([None, *KINDS]),
    ),
    min_size=4,
    max_size=60,
).filter(lambda rows: any(y for _, y, _ in rows) and not all(y for _, y, _ in rows))


@settings(max_examples=150, deadline=None)
@given(ROWS, st.sampled_from([0.25, 0.5, 1.0]), st.data())
def test_every_figure_of_a_card_is_the_brute_force_count(rows, threshold, data):
    pack = synthetic(rows, threshold)
    n = len(rows)
    hardened_failing = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    hardened_harm = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    c = quality.card(pack, {"opt": True}, summary.Measured(hardened_failing, hardened_harm))
    flagged = [s >= threshold for s, _, _ in rows]
    truth = [y for _, y, _ in rows]
    tp = sum(f and y for f, y in zip(flagged, truth, strict=True))
    fp = sum(f and not y for f, y in zip(flagged, truth, strict=True))
    assert c.tpr == rate_interval(tp, sum(truth))
    assert c.fpr == rate_interval(fp, n - sum(truth))
    expected_auc = auc_delong(np.array([s for s, _, _ in rows]), np.array(truth))
    assert c.auc == expected_auc
    # Errors by hard kind: misses among that kind's positives, false alarms among its negatives.
    seen = set()
    for h in c.hard:
        members = [i for i, (_, y, k) in enumerate(rows) if k == h.kind and y == h.positive]
        wrong = sum(1 for i in members if flagged[i] != truth[i])
        assert h.errors == rate_interval(wrong, len(members))
        seen.add((h.kind, h.positive))
    assert seen == {(k, y) for _, y, k in rows if k is not None}
    # Positive kinds first, then negative ones, each sorted by name.
    assert [(not h.positive, h.kind) for h in c.hard] == sorted(
        (not h.positive, h.kind) for h in c.hard
    )
    d = c.defence
    assert d.failing_naive == rate_interval(sum(flagged), n)
    assert d.failing_hardened == rate_interval(sum(hardened_failing), n)
    assert d.harm_naive == rate_interval(sum(truth), n)
    assert d.harm_hardened == rate_interval(sum(hardened_harm), n)
    assert d.saved == sum(y and not h for y, h in zip(truth, hardened_harm, strict=True))
    assert d.newly_harmed == sum(h and not y for y, h in zip(truth, hardened_harm, strict=True))


def test_a_card_renders_every_figure_and_the_same_bytes_twice():
    rows = [(1.0, True, "alpha"), (0.0, True, "alpha"), (0.5, False, "beta"), (0.0, False, None)]
    pack = synthetic(rows, 0.5)
    c = quality.card(pack, {"max_quote_words": 8}, summary.Measured([True] * 4, [False] * 4))
    text = quality.render_markdown([c])
    assert text == quality.render_markdown([c])
    assert text.startswith(quality.START) and text.endswith(quality.END)
    assert "| `hard:alpha` positives missed | 1/2 = 0.500 [" in text
    assert "| `hard:beta` negatives flagged | 1/1 = 1.000 [" in text
    assert "| True-positive rate at the threshold | 1/2 = 0.500 [0.013, 0.987] |" in text
    assert "with `max_quote_words = 8` | 4/4 = 1.000" in text
    assert "| Cases the defence saved / newly harmed | 2 / 0 |" in text


def test_the_section_is_replaced_between_its_markers_only():
    doc = f"before\n{quality.START}\nold\n{quality.END}\nafter\n"
    new = f"{quality.START}\nnew\n{quality.END}"
    assert quality.replace_section(doc, new) == f"before\n{new}\nafter\n"
    with pytest.raises(SystemExit, match="quality-cards"):
        quality.replace_section("no markers here", new)
    with pytest.raises(SystemExit):
        quality.replace_section(f"{quality.END}\n{quality.START}", new)


def test_the_docs_hold_one_card_per_built_in_pack():
    text = (ROOT / "docs" / "packs.md").read_text(encoding="utf-8")
    section = text[text.index(quality.START) : text.index(quality.END)]
    names = list(packgen("registry").PACKS)
    assert {"relevance-hijack", "verbatim-extraction", "markdown-exfiltration"} <= set(names)
    for name in names:
        assert f"#### `{name}`" in section
    assert section.count("| AUC of ") == len(names)


def test_the_defence_table_has_one_row_per_card_and_its_own_markers():
    rows = [(1.0, True, None), (0.0, False, None)]
    cards = [
        quality.card(
            synthetic(rows, 0.5),
            {"filter_injections": True},
            summary.Measured([False, False], [True, False]),
        )
    ] * 2
    table = quality.render_defences(cards)
    assert table.startswith(quality.DEFENCES_START) and table.endswith(quality.DEFENCES_END)
    line = (
        "| `synthetic` | `filter_injections = true` | 1/2 = 0.500 [0.013, 0.987] -> "
        "0/2 = 0.000 [0.000, 0.842] | 1/2 = 0.500 [0.013, 0.987] -> 1/2 = 0.500 [0.013, 0.987] |"
    )
    assert table.splitlines().count(line) == 2
    doc = f"a\n{quality.DEFENCES_START}\nold\n{quality.DEFENCES_END}\nb"
    replaced = quality.replace_section(doc, table, quality.DEFENCES_START, quality.DEFENCES_END)
    assert replaced == f"a\n{table}\nb"


def test_the_reference_target_docs_hold_the_measured_defences():
    text = (ROOT / "docs" / "reference-target.md").read_text(encoding="utf-8")
    section = text[text.index(quality.DEFENCES_START) : text.index(quality.DEFENCES_END)]
    assert section.count("\n| `") == len(packgen("registry").PACKS)
    assert "max_quote_words = 8" in section
