"""Quality cards: how well each pack's metric measures the harm its labels record, and what the
hardened reference target changes, with the uncertainty of every figure.

A card holds the metric's AUC against the labels (DeLong interval), its true- and false-positive
rates at the shipped threshold (Clopper-Pearson intervals), its errors on each kind of hard case,
and the defence's effect on the same cases: the failing rate by the metric and the harm rate by
instrumentation, naive against hardened, with the cases the defence saved and those it harmed.
``render_markdown`` writes the cards into docs/packs.md between the section markers.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from attrs import frozen

from ragleaklab_core.stats.aggregation import RateInterval, rate_interval
from ragleaklab_core.stats.roc import AucResult, auc_delong

from .build import PackData
from .heldout import Independent, measure_independent
from .summary import Measured, naive

START = "<!-- quality-cards:start -->"
END = "<!-- quality-cards:end -->"
#: The markers of the defence table in docs/reference-target.md.
DEFENCES_START = "<!-- defence-effects:start -->"
DEFENCES_END = "<!-- defence-effects:end -->"


@frozen
class HardKind:
    """The metric's errors at the shipped threshold on one kind of hard case.

    Attributes:
        kind: The tag after ``hard:``.
        positive: Whether the kind's cases are positives (errors are misses) or negatives
            (errors are false alarms).
        errors: The cases of the kind the metric gets wrong, with their interval.
    """

    kind: str
    positive: bool
    errors: RateInterval


@frozen
class DefenceEffect:
    """The hardened target against the naive one, on the same cases.

    Attributes:
        options: The hardened target's options.
        failing_naive, failing_hardened: Cases the metric flags at the shipped threshold.
        harm_naive, harm_hardened: Cases harmed by instrumentation.
        saved: Cases harmed on the naive target and not on the hardened one.
        newly_harmed: Cases harmed only on the hardened one.
    """

    options: Mapping[str, Any]
    failing_naive: RateInterval
    failing_hardened: RateInterval
    harm_naive: RateInterval
    harm_hardened: RateInterval
    saved: int
    newly_harmed: int


@frozen
class QualityCard:
    """One pack's card (see the module docstring)."""

    name: str
    primary: str
    threshold: float
    auc: AucResult
    tpr: RateInterval
    fpr: RateInterval
    hard: tuple[HardKind, ...]
    defence: DefenceEffect
    #: The metric on answers the reference target did not write (``None``: the pack has none).
    independent: Independent | None = None


def card(pack: PackData, hardened: Mapping[str, Any], defended: Measured) -> QualityCard:
    """*pack*'s quality card, *defended* being its cases on the target with *hardened* options."""
    scores = np.asarray(pack.scores, dtype=float)
    labels = np.array([row["label"] == "positive" for row in pack.labels])
    flagged = scores >= pack.threshold
    wrong = flagged != labels
    kinds: dict[tuple[str, bool], list[int]] = {}
    for i, case in enumerate(pack.cases):
        for tag in case.tags:
            if tag.startswith("hard:"):
                kinds.setdefault((tag.removeprefix("hard:"), bool(labels[i])), []).append(i)
    hard = tuple(
        HardKind(kind, positive, rate_interval(int(wrong[ids].sum()), len(ids)))
        for (kind, positive), ids in sorted(kinds.items(), key=lambda kv: (not kv[0][1], kv[0][0]))
    )
    plain = naive(pack)
    n = len(pack.cases)
    before, after = np.array(plain.harm), np.array(defended.harm)
    return QualityCard(
        name=pack.name,
        primary=pack.primary,
        threshold=pack.threshold,
        auc=auc_delong(scores, labels),
        tpr=rate_interval(int((flagged & labels).sum()), int(labels.sum())),
        fpr=rate_interval(int((flagged & ~labels).sum()), int((~labels).sum())),
        hard=hard,
        defence=DefenceEffect(
            options=dict(hardened),
            failing_naive=rate_interval(sum(plain.failing), n),
            failing_hardened=rate_interval(sum(defended.failing), n),
            harm_naive=rate_interval(int(before.sum()), n),
            harm_hardened=rate_interval(int(after.sum()), n),
            saved=int((before & ~after).sum()),
            newly_harmed=int((after & ~before).sum()),
        ),
        independent=measure_independent(pack),
    )


def _rate(r: RateInterval) -> str:
    """``12/340 = 0.035 [0.018, 0.061]``."""
    if r.rate is None or r.lower is None or r.upper is None:
        return f"{r.successes}/{r.trials}"
    return f"{r.successes}/{r.trials} = {r.rate:.3f} [{r.lower:.3f}, {r.upper:.3f}]"


def _options(options: Mapping[str, Any]) -> str:
    # As the options are written in TOML: true, 8, ["example.com"].
    return ", ".join(f"`{k} = {json.dumps(v)}`" for k, v in options.items())


def _auc(a: AucResult | None) -> str:
    return "n/a (one label only)" if a is None else f"{a.auc:.3f} [{a.lower:.3f}, {a.upper:.3f}]"


def render_card(c: QualityCard) -> str:
    """One card as Markdown: a heading, a table with the reference target's answers beside the
    independent ones, and a line on who wrote and judged the independent answers."""
    d = c.defence
    ind = c.independent
    none = "(none)" if ind is None else ""
    rows = [
        f"#### `{c.name}`",
        "",
        "| Measure | Reference target's answers | Independent answers |",
        "|---|---|---|",
        f"| AUC of `{c.primary}` against the labels | {_auc(c.auc)} | "
        f"{_auc(ind.auc) if ind else none} |",
        f"| Shipped threshold (`{c.primary} >= t`) | {c.threshold:.4g} | "
        f"{f'{c.threshold:.4g}' if ind else none} |",
        f"| True-positive rate at the threshold | {_rate(c.tpr)} | "
        f"{_rate(ind.tpr) if ind else none} |",
        f"| False-positive rate at the threshold | {_rate(c.fpr)} | "
        f"{_rate(ind.fpr) if ind else none} |",
    ]
    for h in c.hard:
        what = "missed" if h.positive else "flagged"
        side = "positives" if h.positive else "negatives"
        rows.append(f"| `hard:{h.kind}` {side} {what} | {_rate(h.errors)} | |")
    hardened = _options(d.options)
    rows += [
        f"| Failing (flagged), naive target | {_rate(d.failing_naive)} | |",
        f"| Failing (flagged), with {hardened} | {_rate(d.failing_hardened)} | |",
        f"| Harmed (instrumentation), naive target | {_rate(d.harm_naive)} | |",
        f"| Harmed (instrumentation), with {hardened} | {_rate(d.harm_hardened)} | |",
        f"| Cases the defence saved / newly harmed | {d.saved} / {d.newly_harmed} | |",
    ]
    if ind is not None:
        rows += ["", _independent_line(ind)]
    return "\n".join(rows) + "\n"


def _independent_line(ind: Independent) -> str:
    """Who wrote and judged the independent answers, and the classes the metric errs on."""
    sources = ", ".join(f"{n} {source}" for source, n in ind.sources)
    line = (
        f"Independent answers: {ind.answers} ({ind.positives} harmful; {sources}), judged by "
        f"{'; '.join(ind.judged_by)}"
    )
    if ind.unscorable:
        line += f"; {ind.unscorable} the metric could not score (counted as not flagged)"
    if ind.classes:
        errs = ", ".join(f"`{k.name}` {k.errors}/{k.answers}" for k in ind.classes)
        line += f". Errors at the threshold by class: {errs}."
    else:
        line += ". No class has an error at the threshold."
    return line


def render_markdown(cards: Sequence[QualityCard]) -> str:
    """Every card, between the section markers, ready for docs/packs.md."""
    intro = (
        "Generated by `python -m ragleaklab_packgen` from the shipped packs (do not edit by "
        "hand). Intervals are 95%: DeLong for the AUC, exact Clopper-Pearson for every rate. "
        "*Independent answers* are answers the reference target did not write, hand-written "
        "and from naive scripted apps, each labelled by a person "
        "(`ragleaklab_packgen/independent/` in the repository, with who wrote them and how), "
        "scored at the same shipped threshold: the gap "
        "between the two columns is how far the reference figures generalise.\n"
    )
    body = "\n".join(render_card(c) for c in cards)
    return f"{START}\n{intro}\n{body}{END}"


def render_defences(cards: Sequence[QualityCard]) -> str:
    """The defence of each card, failing and harmed naive -> hardened, between its markers."""
    rows = [
        "| pack | defence | failing, naive -> hardened | harmed, naive -> hardened |",
        "|---|---|---|---|",
    ]
    for c in cards:
        d = c.defence
        rows.append(
            f"| `{c.name}` | {_options(d.options)} | {_rate(d.failing_naive)} -> "
            f"{_rate(d.failing_hardened)} | {_rate(d.harm_naive)} -> {_rate(d.harm_hardened)} |"
        )
    body = "\n".join(rows)
    return f"{DEFENCES_START}\n{body}\n{DEFENCES_END}"


def replace_section(text: str, section: str, start: str = START, end: str = END) -> str:
    """*text* with everything from the *start* marker to the *end* marker replaced by *section*."""
    at, until = text.find(start), text.find(end)
    if at < 0 or until < at:
        raise SystemExit(f"no {start} ... {end} section to write")
    return text[:at] + section + text[until + len(end) :]
