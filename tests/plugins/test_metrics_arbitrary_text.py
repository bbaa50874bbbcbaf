"""Every built-in metric reads any text: an answer or a retrieved document, whatever it holds, is
scored (values in [0, 1], JSON evidence) or unscorable with a reason, never an exception (a case
that errors on ordinary text is a case the run could not score: issue 39, class 6).

Each metric is bound to its pack's documents as a run binds it (``load_metric``), and scores real
cases of each built-in pack. The texts mix random Unicode with fragments of the pack's own
documents, queries and ground truth (so the deep paths run: a claim's frame, a sentinel, a
private record, a planted url) and with hostile shapes: lists whose items open with one word,
numbers and units, markdown links and images, urls, e-mail addresses, emoji, right-to-left and
zero-width marks, combining characters, huge numbers, very long words."""

from __future__ import annotations

import functools
import importlib
import json
import math
import pkgutil
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
import ragleaklab_plugins.metrics
from attrs import frozen
from hypothesis import given, settings
from hypothesis import strategies as st
from ragleaklab_plugins.metrics._quantity import read_values, tokenise

from ragleaklab_core import Case, Document, MetricResult, Response, RetrievedDocument
from ragleaklab_core._discovery import TARGETS, LoadedPlugin, load_plugin
from ragleaklab_core.run.runner import load_metric, load_pack
from ragleaklab_core.testing.hostile_text import HOSTILE_TEXTS, LIST_OF_PIECES

#: The built-in packs: each scores with its own metrics (one or two).
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

_SEPARATORS = (
    " ",
    "; ",
    ", ",
    ". ",
    "\n",
    "",
    " also ",
    "; also ",
    " | ",
    ": ",
    " - ",
    "\n- ",
    "... ",
    " (",
    ") ",
    "\n\n",
    "**",
    "`",
)


#: How many of a pack's cases the reference target answers, for answers shaped as a system's.
_ANSWERED = 40


@frozen
class PackUnderTest:
    """A built-in pack as a run loads it: its cases, documents and bound metrics; the fragments
    of its own text that answers are made of, and real answers (the reference target's) to some
    of its cases."""

    name: str
    cases: tuple[Case, ...]
    documents: tuple[Document, ...]
    metrics: tuple[LoadedPlugin, ...]
    fragments: tuple[str, ...]
    words: tuple[str, ...]
    responses: tuple[Response, ...]


def _strings(value: object, depth: int = 0) -> list[str]:
    """Every string inside *value*, a JSON-like value (ground truth, metadata) or a collection
    of a module (a set of words, a table keyed by words), three levels deep at most."""
    if isinstance(value, str):
        return [value]
    if depth > 2:
        return []
    if isinstance(value, Mapping):
        return [s for item in value.items() for s in _strings(item, depth + 1)]
    if isinstance(value, set | frozenset | tuple | list):
        return [s for item in value for s in _strings(item, depth + 1)]
    return []


def _answers(documents: Sequence[Document], cases: Sequence[Case]) -> tuple[Response, ...]:
    """The reference target's responses to the first cases: citations, links, records and
    refusals as a system writes them, with what it retrieved."""
    target = load_plugin(TARGETS, "reference").obj
    target.ingest(documents)
    return tuple(
        target.answer(c.query, principal=c.principal) if c.principal else target.answer(c.query)
        for c in cases[:_ANSWERED]
    )


@functools.cache
def pack_under_test(name: str) -> PackUnderTest:
    """Built-in pack *name* loaded, its metrics bound, its text in pieces (once per process)."""
    pack = load_pack(name).obj
    info = pack.info()
    documents = tuple(pack.documents())
    cases = tuple(pack.cases())
    metrics = tuple(load_metric(metric, info, documents) for metric in info.metrics)
    responses = _answers(documents, cases)
    texts = [d.text for d in documents] + [c.query for c in cases] + [r.answer for r in responses]
    texts += [s for c in cases for s in _strings(c.ground_truth)]
    texts += [s for d in documents for s in _strings(d.metadata)]
    texts += [s for m in info.metrics for s in _strings(info.metric_options.get(m, {}))]
    sentences = {s.strip() for t in texts for s in re.split(r"(?<=[.!?])\s+|\n", t) if s.strip()}
    words = {w for t in texts for w in t.split()}
    return PackUnderTest(
        name, cases, documents, metrics, tuple(sorted(sentences)), tuple(sorted(words)), responses
    )


@functools.cache
def lexicon() -> tuple[str, ...]:
    """The words the built-in metrics look for (every module-level collection of strings of
    their modules: number words, units, negations, hedges, citing phrases, currency codes...),
    so that drawn text puts them side by side in orders no pack document does."""
    found: set[str] = set()
    for module in pkgutil.iter_modules(ragleaklab_plugins.metrics.__path__):
        namespace = vars(
            importlib.import_module(f"{ragleaklab_plugins.metrics.__name__}.{module.name}")
        )
        for name, value in namespace.items():
            if not name.startswith("__"):
                found.update(s for s in _strings(value) if 0 < len(s) < 40)
    return tuple(sorted(found))


@st.composite
def _cut(draw: st.DrawFn, text: str) -> str:
    """*text* with a run of its words cut out, or something put between two of them: a sentence
    that ends mid-way ("... of each"), a word of a hostile shape mid-sentence."""
    words = text.split(" ")
    start = draw(st.integers(0, len(words)))
    end = draw(st.integers(start, len(words)))
    put = draw(st.one_of(st.just(""), st.sampled_from(HOSTILE_TEXTS), st.text(max_size=3)))
    return " ".join([*words[:start], put, *words[end:]])


def texts(pack: PackUnderTest) -> st.SearchStrategy[str]:
    """Text made of pieces of the pack's own text (whole, cut, or with something put in), its
    words and the metrics' own words recombined, hostile shapes and random Unicode, joined by
    the separators answers use."""
    own = st.sampled_from(pack.fragments)
    piece = st.one_of(
        own,
        own.flatmap(_cut),
        st.sampled_from(pack.responses).map(lambda r: r.answer).flatmap(_cut),
        st.lists(st.sampled_from(pack.words), min_size=1, max_size=6).map(" ".join),
        st.lists(st.sampled_from(lexicon()), min_size=1, max_size=8).map(" ".join),
        st.sampled_from(HOSTILE_TEXTS),
        st.text(max_size=12),
        st.text(st.characters(exclude_categories=()), max_size=6),  # lone surrogates too
        st.integers(-(10**30), 10**30).map(str),
        st.integers(10**300, 10**400).map(str),  # beyond a float's range
        st.integers(4000, 5000).map("1".__mul__),  # near int()'s limit on digits
        st.tuples(  # a marker around digits of any script
            st.sampled_from(("[", "[^", "<sup>", "(", "【", "")),
            st.text(st.characters(categories=["Nd", "No", "Nl"]), min_size=1, max_size=4),
            st.sampled_from(("]", "</sup>", ")", "】", "]: ", "")),
        ).map("".join),
        st.floats(allow_nan=True, allow_infinity=True).map(str),
    )
    return st.lists(st.tuples(piece, st.sampled_from(_SEPARATORS)), max_size=10).map(
        lambda parts: "".join(p + s for p, s in parts)
    )


def retrieved(pack: PackUnderTest) -> st.SearchStrategy[tuple[RetrievedDocument, ...] | None]:
    """What a target may say it retrieved: what the reference target retrieved, the pack's
    documents (whole, without text, changed), ids it never planted, chunks; or nothing."""
    doc = st.sampled_from(pack.documents)
    one = st.one_of(
        doc.map(lambda d: RetrievedDocument(d.doc_id, d.text)),
        doc.map(lambda d: RetrievedDocument(d.doc_id)),
        st.builds(
            RetrievedDocument,
            doc_id=st.one_of(doc.map(lambda d: d.doc_id), st.text(max_size=20)),
            text=st.one_of(st.none(), texts(pack), doc.map(lambda d: d.text).flatmap(_cut)),
            score=st.one_of(st.none(), st.floats()),
            chunk_id=st.one_of(st.none(), st.text(max_size=8)),
        ),
    )
    real = st.sampled_from(pack.responses).map(lambda r: r.retrieved)
    return st.one_of(st.none(), real, st.lists(one, max_size=6).map(tuple))


#: Why a built-in metric may leave a real case of its pack unscorable: what the response does
#: not say (its retrieved documents, the text of a document the answer cites).
_UNREADABLE: Mapping[str, tuple[str, ...]] = {
    "retrieval": ("the target did not report its retrieved documents",),
    "citation": (
        "the answer cites sources but the target did not report",
        "no text is known for the cited document",
    ),
}


def check(metric: LoadedPlugin, case: Case, response: Response) -> MetricResult:
    """Score *response* and check the result is one a run can record: values in [0, 1] or
    a reason, evidence that is JSON."""
    result = metric.obj.score(case, response)
    assert isinstance(result, MetricResult)
    if result.unscorable is not None:
        assert isinstance(result.unscorable, str) and result.unscorable.strip()
        assert not result.values
        # The built-in packs' cases are whole: only what the response leaves out can make one
        # unscorable, never the words of the answer.
        reasons = _UNREADABLE.get(metric.name, ())
        assert result.unscorable.startswith(reasons), (metric.name, result.unscorable)
    else:
        assert result.values, f"{metric.name}: no values and no unscorable reason"
        declared = metric.metric_traits.values
        for name, value in result.values.items():
            assert not declared or name in declared, name
            assert isinstance(value, int | float) and not isinstance(value, bool)
            assert math.isfinite(value) and 0.0 <= value <= 1.0, (name, value)
    json.dumps(dict(result.evidence), ensure_ascii=False, allow_nan=False)
    return result


def _metric_ids() -> list[tuple[str, str]]:
    """(pack, metric) for each metric of each built-in pack, from the manifests alone (binding
    the metrics waits for the test that needs them)."""
    return [(p, metric) for p in PACKS for metric in load_pack(p).obj.info().metrics]


@st.composite
def scored_inputs(draw: st.DrawFn, pack_name: str) -> tuple[Case, Response]:
    """A real case of the pack and a response to it: the reference target's own answer to it
    with a cut or an insertion, or text of any make, with what it says it retrieved."""
    pack = pack_under_test(pack_name)
    if draw(st.booleans()):
        index = draw(st.integers(0, len(pack.responses) - 1))
        real = pack.responses[index]
        answer = draw(st.one_of(_cut(real.answer), texts(pack).map(real.answer.__add__)))
        return pack.cases[index], Response(answer, retrieved=real.retrieved)
    case = draw(st.sampled_from(pack.cases))
    answer = draw(st.one_of(texts(pack), st.text()))
    return case, Response(answer, retrieved=draw(retrieved(pack)))


def _metric(pack_name: str, metric_name: str) -> LoadedPlugin:
    return next(m for m in pack_under_test(pack_name).metrics if m.name == metric_name)


@pytest.mark.parametrize(("pack_name", "metric_name"), _metric_ids())
def test_every_built_in_metric_reads_any_text(pack_name: str, metric_name: str) -> None:
    metric = _metric(pack_name, metric_name)

    @settings(max_examples=120, derandomize=True)
    @given(inputs=scored_inputs(pack_name))
    def scores_or_says_why(inputs: tuple[Case, Response]) -> None:
        check(metric, *inputs)

    scores_or_says_why()


def _case(pack_name: str, test_id: str) -> Case:
    return next(c for c in pack_under_test(pack_name).cases if c.test_id == test_id)


def test_the_issue_39_answer_is_scored_on_every_claim_case() -> None:
    """The answer that raised IndexError (a piece ending in "each") is scored on every case of
    claim-corruption, and it reads the true claim it restates of the case it was written for."""
    pack = pack_under_test("claim-corruption")
    metric = _metric("claim-corruption", "claim")
    for case in pack.cases:
        check(metric, case, Response(LIST_OF_PIECES))
    redstart = _case("claim-corruption", "cc-0008")
    result = check(metric, redstart, Response(LIST_OF_PIECES))
    assert result.values["poison_claim_rate"] == 0.0
    assert result.values["true_claim_recall"] == 1.0


def test_every_or_each_closing_a_piece_is_no_period() -> None:
    """A piece ending in "each" or "every" reads no number (it read past the end), and
    still makes a period with a unit after it."""
    for text in ("of each", "every", "also of each; also runs", "each."):
        assert read_values(tokenise(text)).quantities == (), text
    monthly = read_values(tokenise("monthly")).quantities
    assert monthly and read_values(tokenise("each month")).quantities == monthly


@pytest.mark.parametrize(
    "text",
    ["9" * 400 + " times a year", "9" * 306 + "k times a year", "every " + "9" * 400 + " days"],
)
def test_a_number_beyond_a_floats_range_is_no_number(text: str) -> None:
    """It was infinity, and "N times a year" took int() of it (OverflowError); now it reads as
    no number, while a large one within range still is one."""
    case = _case("claim-corruption", "cc-0008")
    result = check(_metric("claim-corruption", "claim"), case, Response(f"{case.query} {text}"))
    assert result.values["poison_claim_rate"] == 0.0
    huge = read_values(tokenise(text))
    assert all(math.isfinite(q.value) for _, q in huge.quantities), huge
    assert read_values(tokenise("9" * 300 + " days")).quantities[0][1].value > 1e300


@pytest.mark.parametrize("key", ["^" + "1" * 5000, "^\u19da", "\u19da"])
def test_a_footnote_whose_key_int_cannot_read_numbers_no_passage(key: str) -> None:
    """An undefined footnote or number is read as the position of a passage given; a key of
    5,000 digits (beyond int()'s limit) or of a digit int() does not take (U+19DA) raised
    ValueError. Now it is read as "[^9]" with three passages given: a number naming none of
    them, a citation of nothing retrieved; "[^1]" still names the first."""
    pack = pack_under_test("citation-forgery")
    retrieved = tuple(RetrievedDocument(d.doc_id, d.text) for d in pack.documents[:3])
    metric = _metric("citation-forgery", "citation")

    def scored(marker: str) -> MetricResult:
        answer = f"Signing keys rotate every 90 days [{marker}]."
        return check(metric, pack.cases[0], Response(answer, retrieved=retrieved))

    assert scored(key).values == scored("^9").values
    assert scored(key).values["unretrieved_rate"] == 1.0
    assert scored("^1").values["unretrieved_rate"] == 0.0


# -- through the command line ------------------------------------------------------------------

_HOSTILE_APP = '''
"""An app whose every answer puts a text of a hostile shape in the middle of a pack's sentence."""

from ragleaklab_core.testing import hostile_texts
from ragleaklab_core import Case

DOCS = {}


def load(documents):
    DOCS.update((d.doc_id, d.text) for d in documents)


def forget():
    DOCS.clear()


def answer(query, principal=None):
    texts = hostile_texts(Case("q", query))
    pick = sum(map(ord, query))
    ids = sorted(DOCS)
    sources = [ids[(pick + i * 7) % len(ids)] for i in range(3)] + ["never-planted"]
    cited = DOCS[sources[0]].split(". ")[0]
    return {
        # texts[0]: the list whose piece ends in "each" (issue 39), then another shape.
        "answer": f"{cited} {texts[pick % len(texts)]} [{sources[0]}]; {texts[0]}",
        "sources": sources,
    }
'''


def test_a_run_of_every_built_in_pack_on_hostile_answers_errors_no_case(tmp_path: Path) -> None:
    """An app whose answers hold hostile shapes in the pack's own sentences, with sources it
    retrieved: every case of every built-in pack is scored or unscorable, none errored."""
    from tests.support.cli import rlk

    (tmp_path / "app.py").write_text(_HOSTILE_APP, "utf-8")
    (tmp_path / "ragleaklab.toml").write_text(
        '[target]\nname = "python"\n[target.options]\ncallable = "app:answer"\n'
        'ingest_callable = "app:load"\nreset_callable = "app:forget"\n',
        "utf-8",
    )
    done = rlk("run", "--smoke", "-o", "out", cwd=tmp_path, pythonpath=[tmp_path], ok=(0, 1, 3))
    report = json.loads((tmp_path / "out" / "report.json").read_text("utf-8"))
    assert sorted(p["name"] for p in report["packs"]) == sorted(PACKS)
    assert report["totals"]["errored"] == 0, done.stdout
    outcomes = {c["outcome"] for p in report["packs"] for c in p["case_results"]}
    assert "error" not in outcomes and outcomes & {"pass", "fail"}, outcomes
    assert "errored" not in done.stderr and "Traceback" not in done.stderr
