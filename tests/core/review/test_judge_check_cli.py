"""``ragleaklab label judge-check``, end to end: the built-in answers written to steer a judge go
through a judge plugin against a loopback model, and the flip rate decides the exit code.

- an honest model is never steered: the built-in judge and a naive one both pass (exit 0);
- a model that continues its prompt (repeats the last verdict it reads) steers a judge that
  pastes the answer into its prompt (exit 1, flips named) and not the built-in judge, which
  leaves those answers unjudged (exit 0);
- a model that obeys the answer steers any judge: the built-in one fails too (exit 1), unless
  the bar allows it;
- a judge that cannot reach its endpoint, or judges no clean answer right, cannot be checked
  (exit 3)."""

from __future__ import annotations

import json
import socket

import pytest

from ragleaklab_core.review.steering import KINDS, steering_pairs
from tests.support.cli import rlk
from tests.support.fake_rag_server import FakeRagServer
from tests.support.judge_models import (
    NAIVE_JUDGE,
    continuing,
    honest,
    obedient,
    read_request,
    reply,
)


@pytest.fixture
def naive(rlk_fake_dist):
    return rlk_fake_dist(
        "naive-judge",
        entry_points={"ragleaklab.judges": {"naive-inline": "naive_judge:NaiveJudge"}},
        modules={"naive_judge.py": NAIVE_JUDGE},
    )


def check(tmp_path, server, judge="openai-compatible", *more, ok, pythonpath=(), **kwargs):
    return rlk(
        "label",
        "judge-check",
        "--judge",
        judge,
        "-O",
        f"base_url='{server.base_url}/v1'",
        *more,
        cwd=tmp_path,
        ok=ok,
        pythonpath=pythonpath,
        **kwargs,
    )


def test_the_set_is_pairs_of_one_content_with_and_without_steering():
    pairs = steering_pairs()
    assert len({p.name for p in pairs}) == len(pairs) == 44
    assert {p.kind for p in pairs} == set(KINDS)
    assert all(sum(p.kind == k for p in pairs) >= 4 for k in KINDS)
    for pair in pairs:  # the same content, so the same label
        if pair.kind == "in-document":
            assert pair.steered.answer == pair.clean.answer
            clean, steered = pair.clean.retrieved, pair.steered.retrieved
            assert clean[:-1] == steered[:-1] and clean[-1].text in steered[-1].text
            assert clean[-1].text != steered[-1].text
            continue
        assert pair.clean.answer in pair.steered.answer
        assert pair.clean.answer != pair.steered.answer
        assert pair.steered.retrieved == pair.clean.retrieved
    assert {p.label for p in pairs} == {"positive", "negative"}
    preambles = [len(p.steered.answer) for p in pairs if p.kind == "long-preamble"]
    assert min(preambles) > 7_000 and max(preambles) > 20_000  # one above the default cap


def test_an_honest_model_passes_with_every_judge_and_the_json_is_deterministic(tmp_path, naive):
    with FakeRagServer(completion=honest()) as server:
        done = check(tmp_path, server, "openai-compatible", "--json", "a.json", ok=(0,))
        check(tmp_path, server, "openai-compatible", "--json", "b.json", ok=(0,), hashseed="12345")
        inline = check(tmp_path, server, "naive-inline", ok=(0,), pythonpath=[naive])
    assert "PASS: 0 of 44 measured pairs flipped" in done.stdout
    assert "PASS: 0 of 44 measured pairs flipped" in inline.stdout
    a = (tmp_path / "a.json").read_bytes()
    assert a == (tmp_path / "b.json").read_bytes()
    found = json.loads(a)
    assert found["verdict"] == "pass" and found["total"]["flipped"] == 0
    assert found["total"]["flip_rate"]["upper"] == pytest.approx(0.080, abs=0.001)
    # the 30,000-character preamble is above max_answer_chars: left unjudged, never cut
    refused = [p for p in found["pairs"] if p["outcome"] == "refused"]
    assert [p["name"] for p in refused] == ["long-preamble-4"]
    assert "above max_answer_chars 20000" in refused[0]["steered_error"]
    assert [k["kind"] for k in found["kinds"]] == list(KINDS)


def test_a_continuing_model_steers_a_naive_judge_and_not_the_built_in_one(tmp_path, naive):
    with FakeRagServer(completion=continuing()) as server:
        held = check(tmp_path, server, "openai-compatible", "--json", "held.json", ok=(0,))
        flipped = check(
            tmp_path, server, "naive-inline", "--json", "naive.json", ok=(1,), pythonpath=[naive]
        )
    assert "PASS: 0 of 44 measured pairs flipped" in held.stdout
    ours = json.loads((tmp_path / "held.json").read_text())
    assert ours["total"]["refused"] >= 10  # the answers' own verdicts left those unjudged
    for pair in ours["pairs"]:  # an answer's own verdict, or a document's
        if pair["outcome"] == "refused" and pair["kind"] != "long-preamble":
            assert "does not echo this request's marker" in pair["steered_error"]
    theirs = json.loads((tmp_path / "naive.json").read_text())
    assert theirs["verdict"] == "fail"
    by_kind = {k["kind"]: k for k in theirs["kinds"]}
    for kind in ("verdict-text", "fake-json", "fence-break", "chat-template"):
        assert by_kind[kind]["flipped"] >= 3, by_kind[kind]
    assert "FAIL: text the attacker wrote steered the judge" in flipped.stdout
    assert "flipped: fake-json-1: positive without the steering text, negative with it" in (
        flipped.stdout
    )


def test_a_model_that_obeys_the_answer_fails_any_judge_unless_the_bar_allows(tmp_path):
    with FakeRagServer(completion=obedient()) as server:
        failed = check(tmp_path, server, "openai-compatible", "--json", "f.json", ok=(1,))
        allowed = check(tmp_path, server, "openai-compatible", "--max-flip-rate", "0.9", ok=(0,))
        just = check(tmp_path, server, "openai-compatible", "--max-flip-rate", "0.5", ok=(1,))
    found = json.loads((tmp_path / "f.json").read_text())
    flips = found["total"]["flipped"]
    assert flips > 20 and f"{flips} of 44 measured pairs flipped" in failed.stdout
    assert "above --max-flip-rate 0;" in failed.stdout
    assert "PASS" in allowed.stdout and "above --max-flip-rate 0.5" in just.stdout


def test_a_judge_that_cannot_be_used_cannot_be_checked(tmp_path):
    with FakeRagServer(completion=lambda request: "I would rather not say.") as server:
        none = check(tmp_path, server, "openai-compatible", ok=(3,))
        # a judge that calls everything negative flips nothing, and measures nothing either
        server.completion = lambda request: reply(read_request(request), False, "all fine")
        lazy = check(tmp_path, server, "openai-compatible", ok=(3,))
    assert "judged 0 of the 44 clean cases right (at least 33 needed)" in none.stderr
    assert "PASS" not in none.stdout and "FAIL" not in none.stdout
    assert "judged 4 of the 44 clean cases right (at least 33 needed)" in lazy.stderr
    assert "not measured: verdict-text-1: the judge said negative of the clean case" in (
        lazy.stdout
    )
    assert "PASS" not in lazy.stdout
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    gone = rlk(
        "label",
        "judge-check",
        "--judge",
        "openai-compatible",
        "-O",
        f"base_url='http://127.0.0.1:{port}/v1'",
        cwd=tmp_path,
        ok=(3,),
    )
    assert "cannot reach its endpoint (the first answer asked)" in gone.stderr
    assert f"127.0.0.1:{port}" in gone.stderr


def test_a_json_path_that_cannot_be_written_is_refused_before_the_judge_is_asked(tmp_path):
    (tmp_path / "afile").write_text("x")
    with FakeRagServer(completion=honest()) as server:
        for bad, said in (
            ("afile/check.json", "cannot be created: afile is a file, not a directory"),
            (".", "is a directory"),
        ):
            done = check(tmp_path, server, "openai-compatible", "--json", bad, ok=(2,))
            assert said in done.stderr
        assert not server.seen  # nothing was asked
