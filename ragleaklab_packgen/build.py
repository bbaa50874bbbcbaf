"""Drafting cases, selecting them by outcome, and finishing a pack.

A pack module drafts attacks and benign questions (``Draft``), ``settle`` drops the attacks whose
outcome would blur the rule (with their poison) until the selection is stable, ``finish`` numbers
the poison and picks the negatives, and ``build_pack`` labels the drafts on the final corpus,
fits the threshold and returns everything written for the pack (``PackData``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ragleaklab_core import Case, Document, Response

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
    """

    query: str
    tags: list[str]
    ground_truth: dict[str, Any]
    plan: str
    poison: Document | None = None
    own: str | None = None
    label: bool = False
    note: str = ""


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

    @property
    def n_positive(self) -> int:
        return sum(1 for row in self.labels if row["label"] == "positive")

    @property
    def n_negative(self) -> int:
        return len(self.labels) - self.n_positive


Rule = Callable[[Draft, Response, frozenset[str]], tuple[bool, str]]


def judge(documents: Sequence[Document], drafts: Sequence[Draft], rule: Rule) -> list[Response]:
    """Run *drafts* on the naive reference target and label each by *rule* (in place)."""
    poison = frozenset(d.doc_id for d in documents if d.kind == "poison")
    responses = answer_all(documents, [d.query for d in drafts])
    for draft, response in zip(drafts, responses, strict=True):
        draft.label, draft.note = rule(draft, response, poison)
    return responses


def settle(
    base: Sequence[Document],
    attacks: list[Draft],
    rule: Rule,
    keep: Callable[[Draft, Response], bool],
    annotate: Callable[[Sequence[Document], list[Draft]], None] | None = None,
) -> list[Draft]:
    """Drop the attacks whose outcome *keep* rejects, with their poison, until none is dropped.

    Removing a poison document can change other cases' outcomes, hence the loop; it only ever
    removes documents, so it ends.
    """
    while True:
        documents = [*base, *(a.poison for a in attacks if a.poison is not None)]
        if annotate is not None:
            annotate(documents, attacks)
        responses = judge(documents, attacks, rule)
        kept = [a for a, r in zip(attacks, responses, strict=True) if keep(a, r)]
        if len(kept) == len(attacks):
            return attacks
        attacks = kept


def finish(
    rng: random.Random,
    prefix: str,
    base: Sequence[Document],
    attacks: list[Draft],
    benign: list[Draft],
    n_negatives: int,
) -> tuple[list[Document], list[Draft]]:
    """Renumber the surviving poison documents, pick benign cases to reach *n_negatives*
    negatives, and shuffle the cases (ids are assigned in that order)."""
    renamed: list[Document] = []
    for n, draft in enumerate((a for a in attacks if a.poison is not None), 1):
        assert draft.poison is not None
        draft.poison = replace_id(draft.poison, f"{prefix}-poison-{n:04d}")
        renamed.append(draft.poison)
    need = n_negatives - sum(1 for a in attacks if not a.label)
    if need > len(benign):
        raise SystemExit(f"{prefix}: only {len(benign)} clean benign cases, {need} needed")
    chosen = rng.sample(benign, need)
    drafts = [*attacks, *chosen]
    rng.shuffle(drafts)
    return [*base, *renamed], drafts


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
    scorer: Callable[[Sequence[Document]], Callable[[Case, Response], float]],
) -> PackData:
    """Label *drafts* on the final corpus, check the labels did not move, fit the threshold,
    tag the smoke subset and turn drafts into cases."""
    before = [d.label for d in drafts]
    responses = judge(documents, drafts, rule)
    moved = [d.query for d, b in zip(drafts, before, strict=True) if d.label != b]
    if moved:
        raise SystemExit(f"{name}: labels changed on the final corpus: {moved[:3]}")
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
        tags = sorted(set(draft.tags) | ({"smoke"} if i in smoke else set()))
        case = Case(test_id, draft.query, draft.ground_truth, tuple(tags))
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
    )


def primary_scorer(
    metric: Any, value: str
) -> Callable[[Sequence[Document]], Callable[[Case, Response], float]]:
    """A scorer factory: *metric* bound to the corpus (when it can be), reading *value*."""

    def bind(documents: Sequence[Document]) -> Callable[[Case, Response], float]:
        bound = metric.for_corpus(documents) if hasattr(metric, "for_corpus") else metric

        def score(case: Case, response: Response) -> float:
            result = bound.score(case, response)
            if result.unscorable:
                raise SystemExit(f"{case.test_id} is unscorable: {result.unscorable}")
            return float(result.values[value])

        return score

    return bind
