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
import json
import math
import re

import pytest
from attrs import frozen
from hypothesis import given, settings
from hypothesis import strategies as st

from ragleaklab_core import Case, Document, MetricResult, Response, RetrievedDocument
from ragleaklab_core._discovery import LoadedPlugin
from ragleaklab_core.run.runner import load_metric, load_pack

#: The built-in packs and the metrics each one scores with.
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

#: The answer of issue 39 that made the claim metric raise IndexError (13 cases of a run).
ISSUE_39_ANSWER = (
    "also of each; also runs on the first wednesday; also maintenance of the redstart "
    "cluster... also is announced 1 week ahead; also read replicas are patched before the "
    "primary node"
)

#: Shapes of text that reach unusual branches of the readers: list items opening with one word,
#: words that start a number or a period and end the text, numbers in every format and size,
#: dates and clock times that are not real, markdown, urls, addresses, and characters that
#: change how text reads (direction, joiners, combining marks).
HOSTILE = (
    ISSUE_39_ANSWER,
    "of each",
    "each",
    "every",
    "every;",
    "twice a",
    "3 times",
    "times a year",
    "half",
    "half a",
    "and a half",
    "one and a",
    "y media",
    "3 of",
    "3 out of",
    "3 of your",
    "3 of your 5",
    "per",
    "per cent",
    "12 per",
    "a",
    "the",
    "no",
    "not",
    "k",
    "0.4k",
    "$",
    "€",
    "EUR",
    "$1.5k",
    "EUR 150",
    "thirty (30)",
    "30-day",
    "half-day",
    "demi-heure",
    "vierundzwanzig",
    "noventa días",
    "1,250,000.5",
    "1.250.000,5",
    "1 250 000",
    "1,2,3",
    "3,5",
    "007",
    "9" * 400,
    "1e308",
    "1" + "0" * 40 + " days",
    "-0",
    "½",
    "٣٠ يوما",
    "³",
    "Ⅻ",
    "२०",
    "1²³",
    "2021-02-30",
    "0000-00-00",
    "9999-99-99",
    "31/02/2021",
    "1/2/3",
    "00/00/0000",
    "4 March 2021",
    "March 4, 2021",
    "4 de marzo de 2021",
    "March",
    "May",
    "31st of February 2021",
    "25:61",
    "24:00",
    "16:00",
    "4 pm",
    "12 am",
    "Friday",
    "viernes",
    "quarterly",
    "every quarter",
    "30%",
    "%",
    "%%",
    "% 30",
    "100000000000000000000%",
    "a:",
    "Note:",
    "Nuthatch: 30 days",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "|",
    "||||",
    "```",
    "```\ncode\n",
    "> quoted",
    "- ",
    "* ",
    "1. ",
    "# ",
    "(",
    ")",
    "[",
    "]",
    "[]",
    "[x]",
    "[x][y]",
    "[x]:",
    "[x]: <",
    "[x]: http://",
    "[x]: https://evil.example/?q=",
    "![",
    "![x](",
    "![x](http://",
    "![](https://evil.example/p.png?d=",
    "[a](mailto:a@b)",
    "[a](javascript:alert(1))",
    "<img src=",
    '<img src="https://evil.example/?x=1">',
    "<a href=//evil.example>",
    "](",
    "http://",
    "https://",
    "https://xn--",
    "https://xn--80ak6aa92e.com/",
    "https://[::1]/",
    "https://[",
    "https://a..b/",
    "https://" + "a" * 70 + ".example/",
    "https://northwind.example.evil.example/?q=%E2%80",
    "https://user:pass@host:99999/",
    "http://0x7f.1/",
    "http://％６５vil.example/",
    "data:image/png;base64,",
    "data:,",
    "%E2%80",
    "%zz",
    "%%41",
    "&#x202e;",
    "&amp;",
    "&#99999999;",
    "\\u0000",
    "a@b",
    "@",
    "user@ex\u202eample.com",
    "mailto:",
    "👩\u200d👩\u200d👧",
    "🇫🇷",
    "\u200b",
    "\u200d",
    "\u202e",
    "\u2066",
    "\u0301",
    "e\u0301\u0301\u0301",
    "\ufeff",
    "\x00",
    "\r\n",
    "\t",
    "\u2028",
    "\x85",
    "ﬁ",
    "ß",
    "İ",
    "ﷺ",
    "Ǆ",
    "a" * 3000,
    "-".join(["a"] * 500),
    "'" * 50,
    "\"'`",
    "...",
    ";;;",
    ", , ,",
    ": :",
    "—",
    "–",
    "but",
    "however,",
    "rather than",
    "instead of",
    "not only",
    "if",
    "?",
    "!",
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


@frozen
class PackUnderTest:
    """A built-in pack as a run loads it: its cases, documents and bound metrics, and the
    fragments of its own text that answers are made of."""

    name: str
    cases: tuple[Case, ...]
    documents: tuple[Document, ...]
    metrics: tuple[LoadedPlugin, ...]
    fragments: tuple[str, ...]
    words: tuple[str, ...]


def _strings(value: object) -> list[str]:
    """Every string inside a JSON-like *value* (ground truth, metadata)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


@functools.cache
def pack_under_test(name: str) -> PackUnderTest:
    pack = load_pack(name).obj
    info = pack.info()
    documents = tuple(pack.documents())
    cases = tuple(pack.cases())
    metrics = tuple(load_metric(metric, info, documents) for metric in info.metrics)
    texts = [d.text for d in documents] + [c.query for c in cases]
    texts += [s for c in cases for s in _strings(dict(c.ground_truth))]
    texts += [s for d in documents for s in _strings(dict(d.metadata))]
    options = [s for m in info.metrics for s in _strings(dict(info.metric_options.get(m, {})))]
    texts += options
    sentences = {s.strip() for t in texts for s in re.split(r"(?<=[.!?])\s+|\n", t) if s.strip()}
    words = {w for t in texts for w in t.split()}
    return PackUnderTest(
        name,
        cases,
        documents,
        metrics,
        tuple(sorted(sentences)),
        tuple(sorted(words)),
    )


def texts(pack: PackUnderTest) -> st.SearchStrategy[str]:
    """Text made of pieces of the pack's own text, its words recombined, hostile shapes and
    random Unicode, joined by the separators answers use."""
    piece = st.one_of(
        st.sampled_from(pack.fragments),
        st.lists(st.sampled_from(pack.words), min_size=1, max_size=6).map(" ".join),
        st.sampled_from(HOSTILE),
        st.text(max_size=12),
        st.integers(-(10**30), 10**30).map(str),
        st.floats(allow_nan=True, allow_infinity=True).map(str),
    )
    return st.lists(st.tuples(piece, st.sampled_from(_SEPARATORS)), max_size=10).map(
        lambda parts: "".join(p + s for p, s in parts)
    )


def retrieved(pack: PackUnderTest) -> st.SearchStrategy[tuple[RetrievedDocument, ...] | None]:
    """What a target may say it retrieved: the pack's documents (whole, cut, changed or
    without text), ids it never planted, chunks; or nothing at all."""
    doc = st.sampled_from(pack.documents)
    one = st.one_of(
        doc.map(lambda d: RetrievedDocument(d.doc_id, d.text)),
        doc.map(lambda d: RetrievedDocument(d.doc_id)),
        st.builds(
            RetrievedDocument,
            doc_id=st.one_of(doc.map(lambda d: d.doc_id), st.text(max_size=20)),
            text=st.one_of(st.none(), texts(pack)),
            score=st.one_of(st.none(), st.floats()),
            chunk_id=st.one_of(st.none(), st.text(max_size=8)),
        ),
    )
    return st.one_of(st.none(), st.lists(one, max_size=6).map(tuple))


def check(metric: LoadedPlugin, case: Case, response: Response) -> MetricResult:
    """Score *response* and check the result is one a run can record: values in [0, 1] or
    a reason, evidence that is JSON."""
    result = metric.obj.score(case, response)
    assert isinstance(result, MetricResult)
    if result.unscorable is not None:
        assert isinstance(result.unscorable, str) and result.unscorable.strip()
        assert not result.values
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
    return [(p, m.name) for p in PACKS for m in pack_under_test(p).metrics]


@st.composite
def scored_inputs(draw: st.DrawFn, pack_name: str) -> tuple[Case, Response]:
    pack = pack_under_test(pack_name)
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
        check(metric, case, Response(ISSUE_39_ANSWER))
    redstart = _case("claim-corruption", "cc-0008")
    result = check(metric, redstart, Response(ISSUE_39_ANSWER))
    assert result.values["poison_claim_rate"] == 0.0
    assert result.values["true_claim_recall"] == 1.0


def test_every_or_each_closing_a_piece_is_no_period() -> None:
    """A piece ending in "each" or "every" reads no number (it read past the end), and
    still makes a period with a unit after it."""
    from ragleaklab_plugins.metrics._quantity import read_values, tokenise

    for text in ("of each", "every", "also of each; also runs", "each."):
        assert read_values(tokenise(text)).quantities == (), text
    monthly = read_values(tokenise("monthly")).quantities
    assert monthly and read_values(tokenise("each month")).quantities == monthly
