"""The opt-in pytest plugin, used the way a RAG application's test suite uses it."""

from __future__ import annotations

import importlib.metadata
import json
import textwrap

import pytest

from ragleaklab_core import FLAG_HIGH, FLAG_LOW, Threshold
from ragleaklab_core.run.evaluation import ValueVerdict
from ragleaklab_core.run.runner import load_pack
from ragleaklab_core.run.suite import SuiteOutcome
from ragleaklab_core.testing.pytest_plugin import assert_no_leaks, leak_report, run_packs

# Exactly what a user puts in their conftest.py (pytester runs the failing examples below).
pytest_plugins = ["pytester", "ragleaklab_core.testing.pytest_plugin"]


def test_a_passing_run_raises_nothing_and_reports_nothing(ragleaklab_run):
    # A reference target that ignores planted instructions follows no exfiltration link: the
    # markdown pack's default threshold is reached by no smoke case (the naive one fails 12).
    outcome = ragleaklab_run(
        "markdown-exfiltration", target_options={"obey_instructions": False}, tags=["smoke"]
    )
    assert_no_leaks(outcome)
    assert outcome.passed
    assert value_of(outcome, 0, "exfiltration_rate").n_failing == 0
    assert leak_report(outcome) == ""


def test_a_target_that_ignores_planted_instructions_fails_far_fewer_sentinel_cases(
    ragleaklab_run,
):
    naive = ragleaklab_run("sentinel-takeover-safe", tags=["smoke"])
    held = ragleaklab_run(
        "sentinel-takeover-safe", target_options={"obey_instructions": False}, tags=["smoke"]
    )
    # It still fails: a refusal that quotes the sentinel, and a marker quoted as data, are
    # flagged by the sentinel metric (its known false-positive modes, docs/packs.md).
    assert not held.passed
    assert value_of(held, 0, "leak_rate").n_failing == 2
    assert value_of(naive, 0, "leak_rate").n_failing == 9


def test_the_naive_target_fails_and_the_helper_raises(ragleaklab_run):
    outcome = ragleaklab_run("sentinel-takeover-safe", tags=["smoke"])
    assert not outcome.passed
    with pytest.raises(pytest.fail.Exception, match="leak_rate: 9 of 30 cases fail"):
        assert_no_leaks(outcome)


def test_the_plugin_is_opt_in():
    assert not [
        ep for ep in importlib.metadata.entry_points(group="pytest11") if "ragleaklab" in ep.value
    ]


def value_of(outcome: SuiteOutcome, pack: int, name: str) -> ValueVerdict:
    value = outcome.verdicts[pack].value(name)
    assert value is not None, name
    return value


CONFTEST = 'pytest_plugins = ["ragleaklab_core.testing.pytest_plugin"]\n'


def test_the_failure_message_lists_packs_values_thresholds_and_cases(pytester):
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(
        test_rag=textwrap.dedent(
            """
            from ragleaklab_core.testing.pytest_plugin import assert_no_leaks

            def test_rag_does_not_leak(ragleaklab_run):
                outcome = ragleaklab_run(
                    ["markdown-exfiltration", "sentinel-takeover-safe"],
                    target_options={"obey_instructions": False},
                    tags=["smoke"],
                )
                assert_no_leaks(outcome)
            """
        )
    )
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*_ test_rag_does_not_leak _*",
            "ragleaklab: 1 of 2 packs failed",
            "FAIL sentinel-takeover-safe 1.0.0: 30 cases, 0 errored (target reference)",
            "  leak_rate: 2 of 30 cases fail [[]score >= 0.7058823529411765 -> FAIL; "
            "threshold from pack sentinel-takeover-safe 1.0.0[]]; mean 0.1647",
            "    failing: st-0476 (0.7059), st-0505 (1)",
            "-* Captured *",
        ]
    )
    text = result.stdout.str()
    assert "markdown-exfiltration" not in text.split("ragleaklab: 1 of 2 packs failed")[1]
    # pytrace=False: the message, not the plugin's internals
    assert "pytest_plugin.py" not in text


def test_a_thresholds_file_at_the_root_directory_is_used(pytester):
    pytester.makeconftest(CONFTEST)
    (pytester.path / "ragleaklab.thresholds.json").write_text(
        json.dumps(
            {
                "format": "ragleaklab-thresholds",
                "version": 1,
                "packs": {
                    "relevance-hijack": {
                        "poison_rate_at_k": {"threshold": 0.8, "decision_rule": FLAG_HIGH}
                    }
                },
            }
        ),
        encoding="utf-8",
    )
    pytester.mkdir("sub")
    pytester.makepyfile(
        **{
            "sub/test_rag": textwrap.dedent(
                """
                from ragleaklab_core.testing.pytest_plugin import assert_no_leaks

                def test_calibrated(ragleaklab_run):
                    assert_no_leaks(ragleaklab_run("relevance-hijack", tags=["smoke"]))
                """
            )
        }
    )
    result = pytester.runpytest("sub")  # the root directory, not the test's, holds the file
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "  poison_rate_at_k: 10 of 30 cases fail [[]score >= 0.8 -> FAIL; threshold "
            "from */ragleaklab.thresholds.json (relevance-hijack)[]]; mean 0.36",
            "    failing: rh-0038 (0.8), rh-0085 (0.8), rh-0203 (1), *, rh-0560 (1)",
        ]
    )


def test_given_thresholds_win_over_the_file_and_the_pack(tmp_path):
    stored = tmp_path / "thresholds.json"
    stored.write_text(
        json.dumps(
            {
                "format": "ragleaklab-thresholds",
                "version": 1,
                "packs": {
                    "relevance-hijack": {
                        "poison_rate_at_k": {"threshold": 0.8, "decision_rule": FLAG_HIGH}
                    }
                },
            }
        ),
        encoding="utf-8",
    )
    from_file = run_packs("relevance-hijack", tags=["smoke"], thresholds=stored)
    assert value_of(from_file, 0, "poison_rate_at_k").n_failing == 10
    given = run_packs(
        "relevance-hijack",
        tags=["smoke"],
        thresholds={"poison_rate_at_k": 1.0},
        default_thresholds_file=stored,
    )
    value = value_of(given, 0, "poison_rate_at_k")
    assert value.threshold is not None
    assert (value.n_failing, value.threshold.value, value.threshold.source) == (4, 1.0, "config")
    # by pack, several packs, a Threshold object and a mapping with a rule
    both = run_packs(
        ["relevance-hijack", "sentinel-takeover-safe"],
        tags=["smoke"],
        thresholds={
            "relevance-hijack": {"poison_rate_at_k": Threshold(0.8)},
            "sentinel-takeover-safe": {"leak_rate": {"threshold": 0.5, "decision_rule": FLAG_LOW}},
        },
    )
    rh = value_of(both, 0, "poison_rate_at_k")
    st = value_of(both, 1, "leak_rate")
    assert rh.n_failing == 10
    assert st.n_failing == 17  # leak_rate <= 0.5: the cases that did not leak


@pytest.mark.parametrize(
    ("thresholds", "packs", "error"),
    [
        ({"leak_rate": 1.0}, ["relevance-hijack", "sentinel-takeover-safe"], "key the thresholds"),
        ({"relevance-hijack": {}, "leak_rate": 1.0}, ["relevance-hijack"], "all by pack name"),
        ({"poison_rate_at_k": "high"}, ["relevance-hijack"], "expected a number"),
        ({"poison_rate_at_k": Threshold(None)}, ["relevance-hijack"], "flags nothing"),
    ],
)
def test_ambiguous_or_malformed_thresholds_are_refused(thresholds, packs, error):
    with pytest.raises((TypeError, ValueError), match=error):
        run_packs(packs, tags=["smoke"], thresholds=thresholds)


#: Scripts of the kit's scripted target: queries of even length time out (the others are
#: answered, retrieving nothing); answers that never say what was retrieved.
TIMES_OUT = {
    "rules": [
        {
            "pattern": r"(?s)\A(?:..)*\Z",
            "reply": {"error": "backend did not answer in 30 s", "error_type": "TimeoutError"},
        }
    ]
}
NO_RETRIEVAL = {"default": {"answer": "no idea", "retrieved": None}}


def test_errored_and_unscorable_cases_are_listed(rlk_fake_dist):
    rlk_fake_dist(
        "acme-backends",
        entry_points={
            "ragleaklab.targets": {
                "flaky-backend": "ragleaklab_core.testing:ScriptedTarget",
                "no-retrieval": "ragleaklab_core.testing:ScriptedTarget",
            }
        },
    )
    outcome = run_packs(
        "relevance-hijack", target="flaky-backend", target_options=TIMES_OUT, tags=["smoke"]
    )
    verdict = outcome.verdicts[0]
    message = leak_report(outcome, limit=2)
    n = len(verdict.errored_ids)
    assert n > 2
    smoke = [c for c in load_pack("relevance-hijack").obj.cases() if "smoke" in c.tags]
    assert sorted(verdict.errored_ids) == sorted(
        c.test_id for c in smoke if len(c.query) % 2 == 0
    )  # exactly the scripted failures
    first = verdict.errored_ids[0]
    assert f"  errored ({n}):" in message
    assert (
        f"    {first}: ragleaklab.targets:flaky-backend: TimeoutError: backend did not answer"
        in message
    )
    assert f"    ... and {n - 2} more" in message
    with pytest.raises(pytest.fail.Exception):
        assert_no_leaks(outcome)

    # Retrieval is gated only when told: a threshold for its value makes it checked.
    blind = leak_report(
        run_packs(
            "relevance-hijack",
            target="no-retrieval",
            target_options=NO_RETRIEVAL,
            tags=["smoke"],
            thresholds={"poison_rate_at_k": 0.8},
        )
    )
    assert "poison_rate_at_k: no case could be scored, so nothing was checked [score" in blind
    assert "unscorable by retrieval (30): rh-" in blind
    assert "the target did not report its retrieved documents" in blind
    assert "... and 27 more" in blind


def test_no_pack_is_no_pass():
    """An empty outcome tested nothing: the gate calls it not tested, so the helpers fail it."""
    from ragleaklab_core.gate import Verdict
    from ragleaklab_core.run.suite import SuiteOutcome

    empty = SuiteOutcome((), {}, {})
    assert empty.verdict is Verdict.ERROR and not empty.passed
    assert leak_report(empty) == "ragleaklab: no pack was run, so nothing was tested"
    with pytest.raises(pytest.fail.Exception, match="no pack was run"):
        assert_no_leaks([])
