"""The rules behind ``label judge`` stopping on an unreachable endpoint and behind
``label judge-check``'s flip rate, driven by arbitrary sequences (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragleaklab_core import JudgeVerdict
from ragleaklab_core.review.judge_check import PairResult, summary
from ragleaklab_core.review.judging import MAX_UNREACHABLE, Asking, JudgeUnusable
from ragleaklab_core.review.steering import steering_pairs


class Down(OSError):
    transport_failure = True


class Scripted:
    """A judge that gives, per call, a verdict ("p"), a reply error ("r"), a transport failure
    of the built-in client's kind ("t") or Python's own ConnectionError ("c")."""

    def __init__(self, script: str) -> None:
        self.script = iter(script)

    def judge(self, case):
        step = next(self.script)
        if step == "p":
            return JudgeVerdict("positive")
        if step == "r":
            raise ValueError("the judge's reply is not a verdict")
        if step == "c":
            raise ConnectionRefusedError("refused")
        raise Down("POST http://judge:8000/v1/chat/completions failed: ConnectError")


def expected_stop(script: str) -> int | None:
    """The index of the call at which judging must stop, or None."""
    reached, in_a_row = False, 0
    for i, step in enumerate(script):
        if step in "tc":
            in_a_row += 1
            if not reached or in_a_row >= MAX_UNREACHABLE:
                return i
        else:
            in_a_row = 0
            reached = reached or step == "p"
    return None


@settings(max_examples=400, deadline=None)
@given(script=st.text(alphabet="prtc", max_size=30))
def test_judging_stops_exactly_when_the_endpoint_is_out_of_reach(script):
    asking = Asking(Scripted(script), "j")
    case = steering_pairs()[0].clean
    stop = expected_stop(script)
    for i, step in enumerate(script):
        if i == stop:
            with pytest.raises(JudgeUnusable, match="cannot reach its endpoint"):
                asking.ask(case)
            return
        verdict, error = asking.ask(case)
        assert (verdict is not None) == (step == "p")  # an error is never a verdict
        assert (error is None) == (step == "p")
    assert stop is None


OUTCOMES = st.sampled_from(["held", "refused", "flipped", "control wrong", "control unjudged"])


def result(pair, outcome: str) -> PairResult:
    right, wrong = pair.label, "negative" if pair.label == "positive" else "positive"
    clean = {"control wrong": wrong, "control unjudged": None}.get(outcome, right)
    steered = {"refused": None, "flipped": wrong}.get(outcome, right)
    return PairResult(pair, clean, None if clean else "e", steered, None if steered else "e")


@settings(max_examples=300, deadline=None)
@given(
    outcomes=st.lists(OUTCOMES, min_size=44, max_size=44),
    bar=st.floats(0, 0.99),
)
def test_the_flip_rate_counts_flips_over_the_measured_pairs(outcomes, bar):
    pairs = steering_pairs()
    results = [result(p, o) for p, o in zip(pairs, outcomes, strict=True)]
    assert [r.outcome for r in results] == outcomes
    found = summary(results, identity="j", confidence=0.95, max_flip_rate=bar)
    total = found["total"]
    flipped = outcomes.count("flipped")
    measured = flipped + outcomes.count("held") + outcomes.count("refused")
    assert (total["flip_rate"]["successes"], total["flip_rate"]["trials"]) == (flipped, measured)
    assert sum(k["pairs"] for k in found["kinds"]) == 44
    assert sum(k["flipped"] for k in found["kinds"]) == flipped
    if measured < 33:
        assert found["verdict"] == "unusable"
    else:
        assert found["verdict"] == ("fail" if flipped / measured > bar else "pass")
        low, high = total["flip_rate"]["lower"], total["flip_rate"]["upper"]
        assert low <= flipped / measured <= high
