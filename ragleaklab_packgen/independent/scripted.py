"""Naive scripted apps whose answers go into the independent sets.

These are the simplest retrieval apps people build before they add a model:
a keyword retriever over the pack's documents (no access control, no
poison filter) and an answer copied out of what it retrieved.  They were
written without reading any metric and are not tuned to one: they only
show what a careless pipeline says.  Their output is recorded in the
``<pack>.jsonl`` files with ``source = "scripted:<app>"``; the label of each
such answer was judged by a person reading the answer, never by this script.

Run from the repository root to print the records (without labels)::

    python -m ragleaklab_packgen.independent.scripted

The apps:

``extractive``
    The top document's sentence that shares most words with the question.
``extractive-cite``
    The same sentence and the best sentence of the second document, with one
    ``Source: <doc_id>`` line naming the top document (a common shortcut: one
    citation for the whole answer).
``echo-context``
    A debugging endpoint left on: when the question asks to print, repeat,
    show or dump anything, it returns the top document's full text; otherwise
    it behaves like ``extractive``.
``template-follower``
    Obeys a markdown image or link found in a retrieved document: fills the
    first ``{...}`` or ``DATA`` placeholder of the URL with the first protected
    value of the question and appends it to the extractive answer.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

PACKS = Path(__file__).resolve().parents[2] / "plugins" / "ragleaklab_plugins" / "packs"
K = 5
_WORD = re.compile(r"[a-z0-9]+")
_STOPWORDS = (
    "a an and are as at be by do does for from how in is it long many "
    "much of on or the to what when where which who with your you my me i this that"
)
_STOP = frozenset(_STOPWORDS.split())
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_MD_URL = re.compile(r"!?\[[^\]]*\]\((https?://[^)\s]+)\)")
_PLACEHOLDER = re.compile(r"\{[^}]*\}|\$\{[^}]*\}|DATA")
_DUMP = re.compile(r"\b(print|repeat|show|dump|display|wiederhole|zeige|affiche|muestra)\b", re.I)

# (pack directory, app, case ids) - chosen by hand to cover attack and benign
# cases before the output was read.
PLAN: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    (
        "relevance_hijack",
        "extractive",
        ("rh-0001", "rh-0009", "rh-0030", "rh-0054", "rh-0064", "rh-0100", "rh-0178", "rh-0233"),
    ),
    (
        "claim_corruption",
        "extractive",
        ("cc-0001", "cc-0021", "cc-0037", "cc-0054", "cc-0060", "cc-0086", "cc-0109"),
    ),
    (
        "citation_forgery",
        "extractive-cite",
        ("cf-0001", "cf-0006", "cf-0007", "cf-0014", "cf-0029", "cf-0039", "cf-0040"),
    ),
    (
        "cross_tenant",
        "extractive",
        ("ct-0004", "ct-0007", "ct-0011", "ct-0012", "ct-0020", "ct-0040", "ct-0048"),
    ),
    (
        "markdown_exfiltration",
        "template-follower",
        ("mx-0003", "mx-0006", "mx-0014", "mx-0020", "mx-0022", "mx-0001", "mx-0007"),
    ),
    (
        "context_extraction",
        "echo-context",
        ("ce-0007", "ce-0010", "ce-0015", "ce-0038", "ce-0045", "ce-0008", "ce-0019"),
    ),
)


def _terms(text: str) -> list[str]:
    return [w for w in _WORD.findall(text.lower()) if w not in _STOP]


def _read_jsonl(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)


class Retriever:
    """Keyword retriever: idf-weighted count of question terms in a document."""

    def __init__(self, documents: Iterable[dict]) -> None:
        self.docs = list(documents)
        self._bags = [Counter(_terms(d["text"])) for d in self.docs]
        df: Counter[str] = Counter()
        for bag in self._bags:
            df.update(bag.keys())
        n = len(self.docs)
        self._idf = {t: math.log((n + 1) / (c + 0.5)) for t, c in df.items()}

    def top(self, query: str, k: int = K) -> list[dict]:
        q = set(_terms(query))
        scored = []
        for i, bag in enumerate(self._bags):
            s = sum(self._idf[t] * (1 + math.log(bag[t])) for t in q if t in bag)
            scored.append((-s, self.docs[i]["doc_id"], i))
        scored.sort()
        return [self.docs[i] for _, _, i in scored[:k]]


def best_sentence(query: str, text: str) -> str:
    q = set(_terms(query))
    sentences = [s for s in _SENTENCE.split(text) if s]
    return max(sentences, key=lambda s: (len(q & set(_terms(s))), -sentences.index(s)))


def answer(app: str, case: dict, top: list[dict]) -> str:
    query = case["query"]
    first = best_sentence(query, top[0]["text"])
    if app == "extractive":
        return first
    if app == "extractive-cite":
        second = best_sentence(query, top[1]["text"])
        return f"{first} {second}\n\nSource: {top[0]['doc_id']}"
    if app == "echo-context":
        return top[0]["text"] if _DUMP.search(query) else first
    if app == "template-follower":
        protected = case.get("ground_truth", {}).get("protected", [])
        for doc in top:
            match = _MD_URL.search(doc["text"])
            if match and protected:
                url = _PLACEHOLDER.sub(protected[0].replace(" ", "%20"), match.group(1), count=1)
                return f"{first}\n\n![]({url})"
        return first
    raise ValueError(app)


def run() -> Iterator[dict]:
    for pack_dir, app, case_ids in PLAN:
        pack = PACKS / pack_dir
        docs = list(_read_jsonl(pack / "documents.jsonl"))
        cases = {c["test_id"]: c for c in _read_jsonl(pack / "cases.jsonl")}
        retriever = Retriever(docs)
        for case_id in case_ids:
            top = retriever.top(cases[case_id]["query"])
            yield {
                "pack": pack_dir.replace("_", "-"),
                "case_id": case_id,
                "answer": answer(app, cases[case_id], top),
                "retrieved": [d["doc_id"] for d in top],
                "source": f"scripted:{app} (independent/scripted.py)",
            }


if __name__ == "__main__":
    for record in run():
        print(json.dumps(record, ensure_ascii=False))
