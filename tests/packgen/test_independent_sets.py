"""The independent answer sets (``ragleaklab_packgen/independent/<pack>.jsonl``) are well formed.

Each set holds answers the reference target did not write, labelled by a person. These checks
keep them usable as a measurement: every line is a record of the documented shape, names a case
and documents the pack really holds, both labels occur in every class of answer (a class with one
label cannot show whether a metric tells the harmful form from its benign neighbour), and the
answers recorded as scripted are exactly what the script in the folder prints.
"""

from __future__ import annotations

import ast
import json
from collections import defaultdict
from pathlib import Path

import pytest

from tests.support.packgen import packgen

ROOT = Path(__file__).resolve().parents[2]
FOLDER = ROOT / "ragleaklab_packgen" / "independent"
PACKS = ROOT / "plugins" / "ragleaklab_plugins" / "packs"
SETS = {
    "relevance-hijack": "rh",
    "claim-corruption": "cc",
    "markdown-exfiltration": "mx",
    "cross-tenant": "ct",
    "citation-forgery": "cf",
    "context-extraction": "ce",
}
KEYS = ["id", "case_id", "answer", "retrieved", "label", "class", "source", "judged_by", "note"]
#: The packs whose answers come with the retriever's ranking (the metrics read it).
WITH_RETRIEVED = {"relevance-hijack", "citation-forgery", "cross-tenant"}
JUDGE = "ragleaklab maintainer (hand-labelled)"


def _records(pack: str) -> list[dict]:
    lines = (FOLDER / f"{pack}.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def _ids(pack: str, name: str, key: str) -> set[str]:
    path = PACKS / pack.replace("-", "_") / name
    return {json.loads(line)[key] for line in path.read_text(encoding="utf-8").splitlines()}


def test_there_is_one_set_per_pack_and_nothing_else() -> None:
    assert sorted(p.stem for p in FOLDER.glob("*.jsonl")) == sorted(SETS)


@pytest.mark.parametrize("pack", sorted(SETS))
def test_every_record_has_the_documented_shape(pack: str) -> None:
    records = _records(pack)
    assert 60 <= len(records) <= 90
    for number, record in enumerate(records, 1):
        assert list(record) == KEYS, record["id"]
        assert record["id"] == f"{SETS[pack]}-ind-{number:04d}"
        assert record["label"] in {"positive", "negative"}
        assert record["class"].isidentifier() and record["class"] == record["class"].lower()
        assert isinstance(record["answer"], str) and record["answer"].strip()
        assert record["judged_by"] == JUDGE
        assert record["note"].strip() and "\n" not in record["note"]
        source = record["source"]
        assert source == "hand-written" or source.startswith("scripted:"), source


@pytest.mark.parametrize("pack", sorted(SETS))
def test_cases_and_documents_exist_in_the_pack(pack: str) -> None:
    cases = _ids(pack, "cases.jsonl", "test_id")
    docs = _ids(pack, "documents.jsonl", "doc_id")
    for record in _records(pack):
        assert record["case_id"] in cases, record["id"]
        retrieved = record["retrieved"]
        if pack in WITH_RETRIEVED:
            assert isinstance(retrieved, list) and 1 <= len(retrieved) <= 5, record["id"]
        if retrieved is not None:
            assert len(set(retrieved)) == len(retrieved), record["id"]
            assert set(retrieved) <= docs, (record["id"], sorted(set(retrieved) - docs))


@pytest.mark.parametrize("pack", sorted(SETS))
def test_both_labels_in_the_pack_and_in_every_hand_written_class(pack: str) -> None:
    labels: dict[str, set[str]] = defaultdict(set)
    for record in _records(pack):
        labels[record["class"]].add(record["label"])
    assert {lab for seen in labels.values() for lab in seen} == {"positive", "negative"}
    assert len(labels) >= 8
    # A scripted app says what it says; only the hand-written classes were planned as pairs.
    one_sided = {c: s for c, s in labels.items() if len(s) < 2 and not c.startswith("scripted_")}
    assert one_sided == {}


@pytest.mark.parametrize("pack", sorted(SETS))
def test_labels_are_roughly_balanced(pack: str) -> None:
    records = _records(pack)
    positives = sum(r["label"] == "positive" for r in records)
    assert 0.35 <= positives / len(records) <= 0.65


def test_the_sets_do_not_repeat_an_answer_for_the_same_case_and_ranking() -> None:
    # The same answer may recur under another ranking (cited document retrieved or not).
    for pack in SETS:
        seen = [(r["case_id"], r["answer"], str(r["retrieved"])) for r in _records(pack)]
        assert len(seen) == len(set(seen)), pack


def test_scripted_answers_are_what_the_script_prints() -> None:
    scripted = packgen("independent.scripted")
    produced = {(r["pack"], r["case_id"]): r for r in scripted.run()}
    recorded = {
        (pack, r["case_id"]): r
        for pack in SETS
        for r in _records(pack)
        if r["source"].startswith("scripted:")
    }
    assert recorded.keys() == produced.keys()
    for key, record in recorded.items():
        run = produced[key]
        assert (record["answer"], record["retrieved"], record["source"]) == (
            run["answer"],
            run["retrieved"],
            run["source"],
        ), key


def test_nothing_in_the_folder_imports_a_metric() -> None:
    for path in sorted(FOLDER.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            assert not any("metrics" in name or "ragleaklab_plugins" in name for name in names)
