"""Which (document, fact) pairs attacks target and which stay for benign questions.

Strong attacks go to half the topics and failed attacks and benign questions to the other half, so
no strong poison document answers a query that is not its own.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from .corpus import Fact, LegitDoc
from .topics import TOPICS


def split_topics(rng: random.Random) -> tuple[set[str], set[str]]:
    """Half the topics (of every unit kind) are attacked, the other half stay clean: an
    attack on "VPN idle timeout" also surfaces for every other office's VPN questions, so
    benign questions come from topics no poison writes about."""
    attacked: set[str] = set()
    for kind in ("office", "service", "team"):
        keys = sorted(t.key for t in TOPICS if t.kind == kind)
        attacked.update(rng.sample(keys, len(keys) // 2))
    return attacked, {t.key for t in TOPICS} - attacked


def attack_slots(
    rng: random.Random, kb: Sequence[LegitDoc], topics: set[str], n: int
) -> list[tuple[LegitDoc, Fact]]:
    """*n* (document, fact) targets in *topics*, at most two facts per document, spread over
    the documents before any gets a second."""
    docs = [d for d in kb if d.topic.key in topics]
    first = rng.sample(docs, len(docs))
    slots = [(d, rng.choice(d.facts)) for d in first]
    for d in rng.sample(docs, len(docs)):
        taken = {f.key for dd, f in slots if dd is d}
        slots.append((d, rng.choice([f for f in d.facts if f.key not in taken])))
    if n > len(slots):
        raise SystemExit(f"only {len(slots)} attack slots for {n} attacks")
    return slots[:n]


def benign_slots(
    kb: Sequence[LegitDoc], topics: set[str], targets: Sequence[tuple[LegitDoc, Fact]]
) -> list[tuple[LegitDoc, Fact]]:
    """Every (document, fact) of *topics* that no attack targets."""
    hit = {(d.doc_id, f.key) for d, f in targets}
    return [
        (d, f) for d in kb if d.topic.key in topics for f in d.facts if (d.doc_id, f.key) not in hit
    ]
