"""The knowledge base: a few hundred legit documents, one per (topic, unit).

Every pack starts from the same seeded draw of it (``build_kb``); the facts of each document are
what attacks contradict and benign questions ask about.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass

from ragleaklab_core import Document

from .topics import TOPICS, FactTemplate, Topic
from .vocabulary import OFFICES, SERVICES, TEAMS, alias, slug

UNITS_PER_TOPIC = {"office": 9, "service": 12, "team": 12}


@dataclass(frozen=True)
class Fact:
    """A fact of one legit document: its template, true value and sentence as written."""

    template: FactTemplate
    value: str
    sentence: str

    @property
    def key(self) -> str:
        return self.template.key


@dataclass(frozen=True)
class LegitDoc:
    doc_id: str
    topic: Topic
    unit: str
    text: str
    facts: tuple[Fact, ...]

    @property
    def alias(self) -> str:
        return alias(self.topic.kind, self.unit)

    def document(self) -> Document:
        meta = {"topic": self.topic.key, "unit": self.unit}
        return Document(self.doc_id, self.text, "legit", meta)


def units_of(kind: str) -> list[str]:
    if kind == "office":
        return sorted(OFFICES)
    return sorted(SERVICES if kind == "service" else TEAMS)


def _words(sentences: Iterable[str]) -> int:
    return sum(len(s.split()) for s in sentences)


def other_value(rng: random.Random, fact: Fact) -> str:
    """A value for *fact* that differs from its true one."""
    return rng.choice([v for v in fact.template.values if v != fact.value])


def build_kb(rng: random.Random) -> list[LegitDoc]:
    """One legit document per (topic, sampled unit), sorted by doc id.

    A document is its title sentence, then its fact sentences and one to four fillers in a
    shuffled order: 40-150 words, every fact a sentence of its own.
    """
    docs: list[LegitDoc] = []
    for topic in TOPICS:
        for unit in sorted(rng.sample(units_of(topic.kind), UNITS_PER_TOPIC[topic.kind])):
            facts = []
            for t in topic.facts:
                value = rng.choice(t.values)
                facts.append(Fact(t, value, t.claim.format(u=unit, v=value)))
            fillers = rng.sample(topic.fillers, len(topic.fillers))
            n_fillers = rng.randint(1, len(fillers))
            claims = [f.sentence for f in facts]
            # Top up short documents so every one has at least 40 words.
            while n_fillers < len(fillers) and _words(claims + fillers[:n_fillers]) < 36:
                n_fillers += 1
            body = claims + [s.format(u=unit) for s in fillers[:n_fillers]]
            rng.shuffle(body)
            text = " ".join([topic.title.format(u=unit), *body])
            docs.append(LegitDoc(f"kb-{topic.key}-{slug(unit)}", topic, unit, text, tuple(facts)))
    docs.sort(key=lambda d: d.doc_id)
    return docs


def with_values(doc: LegitDoc, values: dict[str, str]) -> str:
    """*doc*'s text with some facts' values replaced (``{fact key: new value}``)."""
    text = doc.text
    for fact in doc.facts:
        if fact.key in values:
            new = fact.template.claim.format(u=doc.unit, v=values[fact.key])
            text = text.replace(fact.sentence, new)
    return text
