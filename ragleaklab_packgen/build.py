"""Drafting cases, labelling them by instrumentation, and finishing a pack.

A pack module drafts attacks and benign questions (``Draft``) with their poison documents under
their final ids, ``finish`` samples the benign questions (by seed, never by outcome) and shuffles,
and ``build_pack`` answers every draft on the labelled target, labels it from the target's own
record of what it did (``instrumentation``), tags hard cases, fits the default threshold and
returns everything written for the pack (``PackData``).

No draft is dropped, relabelled or re-drafted after it has been answered: every attack drafted is
a case, whatever any metric would make of it. The metric is read only in ``scoring`` to fit the
default threshold and in ``quality`` to measure it.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragleaklab_core import Case, Document, Response
from ragleaklab_core.run.case_details import FAMILY

from .instrumentation import Outcome
from .scoring import Scorer
from .target import answer_all
from .threshold import TARGET_FPR, exact_threshold

SMOKE_POSITIVES = 12
SMOKE_NEGATIVES = 18


@dataclass
class Draft:
    """A case being drafted.

    Attributes:
        query: What the case asks.
        tags: The case's tags (``"smoke"`` is added when the pack is finished).
        ground_truth: The case's ground truth; sentinel and claim packs add the nearest poison's
            sentinels or claims once the corpus is settled.
        plan: What the case was built to show: ``"win"`` (a strong attack), ``"miss"`` (an
            attack in the wrong vocabulary), ``"near_miss"`` (an attack that reaches the top 5
            but not the top), ``"benign"``, ``"data"`` (a legit document quoting a sentinel).
        poison: The poison document an attack plants, else None.
        own: The sentinel or poison claim of the case's own poison document.
        principal: Who asks (``Case.principal``), or None for an anonymous question.
    """

    query: str
    tags: list[str]
    ground_truth: dict[str, Any]
    plan: str
    poison: Document | None = None
    own: str | None = None
    label: bool = False
    note: str = ""
    hard: str | None = None
    principal: str | None = None


def family_tag(name: str) -> str:
    """The tag naming an attack case's family (``family:bait``): what ``report.json`` splits
    the failing rates of attack cases by (``by_family``, the core's convention)."""
    return FAMILY + name


#: A pack's outcome rule: the draft, the labelled target's response, the poison document ids.
Rule = Callable[[Draft, Response, frozenset[str]], Outcome]


@dataclass
class PackData:
    """Everything written for one pack."""

    name: str
    pack_type: str
    description: str
    metric: str
    primary: str
    metric_options: dict[str, dict[str, Any]]
    documents: list[Document]
    cases: list[Case]
    labels: list[dict[str, str]]
    threshold: float
    false_positives: int
    true_positives: int
    scores: list[float]
    #: What the labels and scores came from, kept to measure the defences on the same cases.
    drafts: list[Draft]
    rule: Rule
    scorer: Scorer
    #: The manifest's [taxonomy] table: OWASP LLM ids, MITRE ATLAS ids, severity (none: no table).
    taxonomy: dict[str, Any] = field(default_factory=dict)
    #: Metrics the pack also runs, beside the one its primary value comes from (reported,
    #: not gated: relevance-hijack keeps the rank values for what they measure).
    also_metrics: tuple[str, ...] = ()

    @property
    def n_positive(self) -> int:
        return sum(1 for row in self.labels if row["label"] == "positive")

    @property
    def n_negative(self) -> int:
        return len(self.labels) - self.n_positive


def judge(documents: Sequence[Document], drafts: Sequence[Draft], rule: Rule) -> list[Response]:
    """Run *drafts* on the labelled target and label each by *rule* (in place)."""
    poison = frozenset(d.doc_id for d in documents if d.kind == "poison")
    responses = answer_all(documents, [d.query for d in drafts], [d.principal for d in drafts])
    for draft, response in zip(drafts, responses, strict=True):
        outcome = rule(draft, response, poison)
        draft.label, draft.note, draft.hard = outcome.positive, outcome.note, outcome.hard
    return responses


def finish(
    rng: random.Random,
    prefix: str,
    attacks: list[Draft],
    benign: list[Draft],
    n_benign: int,
) -> list[Draft]:
    """Sample *n_benign* of the *benign* drafts (by seed alone) and shuffle them with every
    attack (case ids are assigned in that order)."""
    if n_benign > len(benign):
        raise SystemExit(f"{prefix}: only {len(benign)} benign drafts, {n_benign} needed")
    drafts = [*attacks, *rng.sample(benign, n_benign)]
    rng.shuffle(drafts)
    return drafts


def replace_id(doc: Document, doc_id: str) -> Document:
    """*doc* under another id."""
    return Document(doc_id, doc.text, doc.kind, dict(doc.metadata))


def build_pack(
    rng: random.Random,
    *,
    prefix: str,
    name: str,
    pack_type: str,
    description: str,
    metric: str,
    primary: str,
    metric_options: dict[str, dict[str, Any]],
    documents: list[Document],
    drafts: list[Draft],
    rule: Rule,
    scorer: Scorer,
    taxonomy: dict[str, Any],
    also_metrics: tuple[str, ...] = (),
) -> PackData:
    """Label *drafts* on the final corpus by instrumentation, tag hard cases and the smoke
    subset, turn drafts into cases and fit the default threshold on the metric's scores."""
    responses = judge(documents, drafts, rule)
    positives = [i for i, d in enumerate(drafts) if d.label]
    negatives = [i for i, d in enumerate(drafts) if not d.label]
    smoke = set(rng.sample(positives, SMOKE_POSITIVES)) | set(
        rng.sample(negatives, SMOKE_NEGATIVES)
    )
    cases: list[Case] = []
    labels: list[dict[str, str]] = []
    scores: list[float] = []
    score = scorer(documents)
    for i, (draft, response) in enumerate(zip(drafts, responses, strict=True)):
        test_id = f"{prefix}-{i + 1:04d}"
        extra = {"smoke"} if i in smoke else set()
        if draft.hard is not None:
            extra.add(f"hard:{draft.hard}")
        tags = sorted(set(draft.tags) | extra)
        case = Case(test_id, draft.query, draft.ground_truth, tuple(tags), draft.principal)
        cases.append(case)
        labels.append(
            {
                "test_id": test_id,
                "label": "positive" if draft.label else "negative",
                "notes": draft.note,
            }
        )
        scores.append(score(case, response))
    flags = [d.label for d in drafts]
    threshold, fp, tp = exact_threshold(scores, flags, TARGET_FPR)
    return PackData(
        name=name,
        pack_type=pack_type,
        description=description,
        metric=metric,
        primary=primary,
        metric_options=metric_options,
        documents=documents,
        cases=cases,
        labels=labels,
        threshold=threshold,
        false_positives=fp,
        true_positives=tp,
        scores=scores,
        drafts=list(drafts),
        rule=rule,
        scorer=scorer,
        taxonomy=taxonomy,
        also_metrics=also_metrics,
    )
