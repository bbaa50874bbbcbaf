"""`ragleaklab run --baseline ... --fail-on ...` and `--max-fail-rate`: real pairs of runs
through the CLI, and the gate's decision against a brute-force exact test."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ragleaklab_core.cli.reports import github_annotations
from ragleaklab_core.errors import InputError
from ragleaklab_core.gate import allowed_failures, decide
from tests.core.gate.test_comparison import _brute_p_value
from tests.support import reports
from tests.support.workspace import Workspace

PACK = "verbatim-extraction"
VALUE = "verbatim_score"


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def ws(tmp_path_factory, copy_runs) -> Workspace:
    """Base runs of the whole verbatim pack (tests/core/gate/conftest.py): naive, and hardened
    by cutting long quotes (46 failing cases instead of 57: fewer, but not significantly) or by
    paraphrasing (none)."""
    space = Workspace(tmp_path_factory.mktemp("baseline"))
    copy_runs(space.root, naive="naive", quotes="quotes", paraphrase="paraphrase")
    return space


def _gated_run(ws: Workspace, out: str, base: str, *args: str, ok=(0, 1)):
    done = ws.cli("run", "-p", PACK, "-o", out, "--baseline", f"{base}/report.json", *args, ok=ok)
    return done, _load(ws.root / out / "report.json")


def test_each_rule_decides_the_same_pair_of_runs_its_own_way(ws):
    """quotes -> naive: more failing cases, some of them new, but no significant regression.
    Each rule gives its own answer, and the report says which decided."""
    runs = {}
    for rule in ("verdict", "regression", "new-failures"):
        # Another target (quotes cut -> not cut): what a baseline judges, no --force needed.
        runs[rule] = _gated_run(ws, f"new-{rule}", "quotes", "--fail-on", rule)
    done, report = runs["verdict"]
    assert done.returncode == 1 and report["verdict"] == "fail"  # its thresholds fail
    assert report["gate"]["baseline"]["diff"]["values"][0]["regressed"] is False
    done, report = runs["regression"]
    assert done.returncode == 0, done.stdout
    assert report["verdict"] == "pass" and report["exit_code"] == 0
    assert report["gate"]["thresholds_verdict"] == "fail" and report["gate"]["reasons"] == []
    assert done.stdout.splitlines()[-2] == (
        "verdict: PASS (--fail-on regression; 1 of 1 packs failed their thresholds)"
    )
    done, report = runs["new-failures"]
    assert done.returncode == 1
    (value,) = report["gate"]["baseline"]["diff"]["values"]
    naive = _load(ws.root / "naive/report.json")["packs"][0]
    quotes = _load(ws.root / "quotes/report.json")["packs"][0]
    passed_before = (
        set(quotes["cases"]["ids"])
        - set(quotes["values"][VALUE]["all_failing_ids"])
        - set(quotes["values"][VALUE]["unscored_ids"])
    )
    expected = sorted(set(naive["values"][VALUE]["all_failing_ids"]) & passed_before)
    assert expected and value["newly_failing"] == expected
    (reason,) = report["gate"]["reasons"]
    assert reason.startswith(f"newly failing: {PACK} {VALUE}: {len(expected)} cases passed")


def test_a_significant_regression_fails_and_an_unchanged_run_passes(ws):
    done, report = _gated_run(ws, "regressed", "paraphrase", "--fail-on", "regression")
    assert done.returncode == 1 and report["verdict"] == "fail"
    (reason,) = report["gate"]["reasons"]
    assert reason.startswith(f"regressed: {PACK} {VALUE}: failing ") and "p = <0.0001" in reason
    baseline = report["gate"]["baseline"]
    assert baseline["path"] == "paraphrase/report.json" and baseline["forced"] is False
    # The defence switched off is named in report.json's gate and in the summary.
    (change,) = baseline["diff"]["target_changes"]
    assert "paraphrase true -> false" in change
    assert "target changed from the baseline: the target is reference@" in done.stdout
    assert len(baseline["sha256"]) == 64
    # The same run as its baseline: thresholds fail as before, nothing is worse.
    done, report = _gated_run(ws, "same", "naive", "--fail-on", "regression")
    assert done.returncode == 0 and report["gate"]["baseline"]["forced"] is False
    # A stricter level does not turn "no change" into a regression, and a report is
    # byte-identical when run again.
    again, _ = _gated_run(ws, "same2", "naive", "--fail-on", "regression")
    first = (ws.root / "same/report.json").read_text(encoding="utf-8")
    second = (ws.root / "same2/report.json").read_text(encoding="utf-8")
    assert first == second and again.returncode == 0


def test_a_baseline_of_another_pack_version_is_refused_before_anything_runs(ws, tmp_path):
    report = _load(ws.root / "naive/report.json")
    report["packs"][0]["version"] = "0.9.0"
    old = tmp_path / "old.json"
    old.write_text(json.dumps(report), encoding="utf-8")
    done = ws.cli("run", "-p", PACK, "-o", "bumped", "--baseline", str(old), ok=(2,))
    assert f"pack {PACK} is version 0.9.0 in the base, 1.0.0 now" in done.stderr
    assert "--force-baseline" in done.stderr and "Traceback" not in done.stderr
    assert not (ws.root / "bumped").exists()  # nothing written, nothing asked
    forced = ws.cli("run", "-p", PACK, "-o", "bumped", "--baseline", str(old), "--force-baseline")
    assert forced.returncode == 1
    assert "compared with --force-baseline although: pack verbatim-extraction is version 0.9.0" in (
        " ".join(forced.stdout.split())
    )


def test_a_baseline_of_other_metric_options_is_refused_after_the_run_and_resume_finishes_it(
    ws, tmp_path
):
    report = _load(ws.root / "naive/report.json")
    report["packs"][0]["metrics"][0]["options"]["min_words"] = 4
    other = tmp_path / "other-metric.json"
    other.write_text(json.dumps(report), encoding="utf-8")
    done = ws.cli("run", "-p", PACK, "-o", "other", "--baseline", str(other), ok=(2,))
    assert done.stderr.startswith(f"error: {other.as_posix()}: --baseline: these runs did not")
    assert "metric verbatim options differ: min_words 4 -> 8" in done.stderr
    assert "--resume" in done.stderr
    assert not (ws.root / "other/report.json").exists()
    kept = (ws.root / "other/runs.jsonl.partial").read_text(encoding="utf-8").splitlines()
    assert len(kept) == _load(ws.root / "naive/report.json")["totals"]["cases"]
    resumed = ws.cli(
        "run", "-p", PACK, "-o", "other", "--baseline", str(other),
        "--force-baseline", "--resume",
    )  # fmt: skip
    assert resumed.returncode == 1
    assert _load(ws.root / "other/report.json")["gate"]["baseline"]["forced"] is True


def test_what_the_baseline_measured_and_this_run_did_not_is_untested_never_a_pass(ws):
    ws.cli("run", "--smoke", "-p", "relevance-hijack", "-p", "claim-corruption", "-o", "two")
    done = ws.cli(
        "run", "--smoke", "-p", "relevance-hijack", "-o", "one",
        "--baseline", "two/report.json", "--fail-on", "regression", ok=(3,),
    )  # fmt: skip
    report = _load(ws.root / "one/report.json")
    # Untested, not passed (exit 3): nothing measured is worse, and nothing is known of the rest.
    assert done.returncode == 3 and report["verdict"] == "error"
    assert report["gate"]["reasons"] == ["not measured again: claim-corruption"]


def test_errored_cases_still_fail_a_run_gated_on_its_baseline(ws):
    """The same broken target twice: nothing regressed, but errored cases are no measurement."""
    common = ("run", "--smoke", "-p", "relevance-hijack", "--target", "broken")
    ws.cli(*common, "-o", "broken-base")
    done = ws.cli(
        *common, "-o", "broken-new", "--baseline", "broken-base/report.json",
        "--fail-on", "regression",
    )  # fmt: skip
    report = _load(ws.root / "broken-new/report.json")
    assert done.returncode == 1, done.stdout
    assert report["packs"][0]["verdict_without_thresholds"] == "fail"
    assert report["gate"]["reasons"][-1].startswith("relevance-hijack is fail apart from its")
    tolerated = ws.cli(
        *common, "-o", "broken-ok", "--tolerate-errors", "--baseline",
        "broken-base/report.json", "--fail-on", "regression", ok=(3,),
    )  # fmt: skip
    # Tolerated, but about half the cases errored: under the bound of tolerated errors (90%
    # scored) the pack is not tested (tests/core/run/test_degenerate_systems.py), baseline or not.
    assert tolerated.returncode == 3, tolerated.stdout
    assert "of the 30 selected cases were asked and scored" in tolerated.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-on", "regression"], "--fail-on compares with a baseline: give --baseline"),
        (["--force-baseline"], "--force-baseline compares with a baseline"),
        (["--baseline", "nowhere.json"], "nowhere.json: no such file"),
        (
            ["--baseline", "bad.json"],
            "bad.json: not a report.json this ragleaklab can read: required field missing @ $.tool",
        ),
        (["--max-fail-rate", "1.5"], "expected RATE or PACK=RATE with RATE in [0, 1]"),
        (["--max-fail-rate", "=0.1"], "expected RATE or PACK=RATE"),
        (["--max-fail-rate", "no-such-pack=0.1"], "no installed pack is named 'no-such-pack'"),
    ],
)
def test_bad_gate_options_exit_2_and_write_nothing(ws, args, message):
    (ws.root / "bad.json").write_text('{"verdict": "pass"}', encoding="utf-8")
    done = ws.cli("run", "--smoke", "-p", "relevance-hijack", "-o", "nothing", *args, ok=(2,))
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not (ws.root / "nothing").exists()


def test_max_fail_rate_per_pack_and_for_all(ws, tmp_path):
    """sentinel-takeover-safe's smoke cases: k of n fail; a rate allowing exactly k passes it,
    one allowing k - 1 does not; a pack's own rate wins over the rate for all (0.4, which
    allows relevance-hijack's 12 failing smoke cases of 30, and would allow k of n)."""
    base = ("run", "--smoke", "-p", "sentinel-takeover-safe", "-p", "relevance-hijack")
    first = ws.cli(*base, "-o", "strict")
    pack = _load(ws.root / "strict/report.json")["packs"][0]
    assert pack["name"] == "sentinel-takeover-safe" and first.returncode == 1
    k, n = pack["values"]["leak_rate"]["failing_cases"], pack["values"]["leak_rate"]["summary"]["n"]
    assert 1 < k < n
    exact, short = f"{k / n:.6f}", f"{(k - 1) / n:.6f}"
    allowing = Fraction(exact) * n
    if allowing < k:  # rounded down below k/n: one more millionth
        exact = f"{k / n + 1e-6:.6f}"
    assert k / n < 0.4
    every = ("--max-fail-rate", "0.4")
    done = ws.cli(
        *base, *every, "-o", "loose", "--max-fail-rate", f"sentinel-takeover-safe={exact}"
    )
    report = _load(ws.root / "loose/report.json")
    assert done.returncode == 0, done.stdout
    assert [p["max_fail_rate"] for p in report["packs"]] == [float(exact), 0.4]
    assert report["settings"]["max_fail_rates"] == {"sentinel-takeover-safe": float(exact)}
    done = ws.cli(
        *base, *every, "-o", "short", "--max-fail-rate", f"sentinel-takeover-safe={short}"
    )
    assert done.returncode == 1 and f"at most {k - 1} allowed" in done.stdout
    # The rate for all, overridden for one pack, from a config file and the command line.
    config = tmp_path / "c.toml"
    config.write_text(
        f"[run]\nmax_fail_rate = 0.99\n[run.max_fail_rates]\nsentinel-takeover-safe = {short}\n",
        encoding="utf-8",
    )
    done = ws.cli(*base, "-o", "cfg", "-c", str(config))
    assert done.returncode == 1
    done = ws.cli(
        *base, "-o", "cfg2", "-c", str(config), "--max-fail-rate", f"sentinel-takeover-safe={exact}"
    )
    assert done.returncode == 0
    assert [p["max_fail_rate"] for p in _load(ws.root / "cfg2/report.json")["packs"]] == [
        float(exact),
        0.99,
    ]


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 6), st.integers(0, 5_000))
def test_the_allowed_count_is_the_decimal_rate_times_the_cases(digits, places, scored):
    assume(digits <= 10**places)
    rate = float(f"{digits / 10**places:.{places}f}")
    # Brute force in integers: the most k with k / scored <= digits / 10**places.
    expected = max(k for k in range(scored + 1) if k * 10**places <= digits * scored)
    assert allowed_failures(rate, scored) == expected


def _report(base_k: int, new_k: int, n: int, *, verdict: str = "fail") -> tuple[dict, dict]:
    ids = [f"c{i:02d}" for i in range(n)]

    def run(k: int, failing: list[str]) -> dict:
        pack = reports.pack("p", failing, ids, verdict=verdict if k else "pass")
        return reports.report([pack], target=None, verdict=pack["verdict"])

    return run(base_k, ids[:base_k]), run(new_k, ids[-new_k:] if new_k else [])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 12), st.integers(0, 12), st.integers(1, 12))
def test_the_regression_gate_rejects_exactly_when_the_brute_force_test_does(bk, nk, n):
    assume(bk <= n and nk <= n)
    brute = _brute_p_value(nk, n, bk, n)
    assume(abs(brute - 0.05) > 1e-3)  # the brute force's grid is approximate at the edge
    base, new = _report(bk, nk, n)
    gate = decide(new, fail_on="regression", baseline=base)
    assert (gate.exit_code == 1) == (brute <= 0.05)
    assert gate.thresholds_verdict == new["verdict"]
    # new-failures: the new run's failing cases are the last ones, the base's the first ones.
    failures = decide(new, fail_on="new-failures", baseline=base)
    newly = set(range(n - nk, n)) - set(range(bk)) if nk else set()
    assert (failures.exit_code == 1) == bool(newly)


def test_decide_refuses_a_baseline_rule_without_a_baseline_and_unknown_rules():
    base, new = _report(1, 1, 3)
    with pytest.raises(ValueError, match="give one"):
        decide(new, fail_on="regression")
    with pytest.raises(ValueError, match="fail_on"):
        decide(new, fail_on="worse", baseline=base)
    other = {**base, "packs": [{**base["packs"][0], "version": "2"}]}
    with pytest.raises(InputError, match="version 2 in the base, 1 now"):
        decide(new, fail_on="regression", baseline=other)
    assert decide(new, fail_on="verdict").exit_code == 1


def test_github_annotations_follow_the_gate_not_the_thresholds(ws):
    """Under --fail-on regression a pack failing its thresholds as in the baseline is a warning
    and the gate's reasons are the errors; without a regression no ::error is printed."""
    done = ws.cli(
        "run", "-p", PACK, "-o", "gha", "--baseline", "naive/report.json",
        "--fail-on", "regression", env={"GITHUB_ACTIONS": "true"}, ok=(0,),
    )  # fmt: skip
    commands = [line for line in done.stdout.splitlines() if line.startswith("::")]
    assert commands and all(line.startswith("::warning ") for line in commands)
    report = _load(ws.root / "naive/report.json")  # gated on its thresholds: an error
    assert github_annotations(report)[0].startswith("::error title=ragleaklab verbatim-extraction")
    regressed = (
        _load(ws.root / "regressed/report.json") if (ws.root / "regressed").exists() else None
    )
    if regressed is not None:
        errors = [a for a in github_annotations(regressed) if a.startswith("::error ")]
        assert errors and "--fail-on regression" in errors[-1] and "regressed: " in errors[-1]


SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def test_every_rendering_of_a_run_gated_on_a_baseline_is_valid_and_shows_the_comparison(ws):
    """quotes -> naive under --fail-on new-failures: SARIF (valid against the OASIS schema)
    marks a finding failing in the baseline too as unchanged and every other as new; JUnit
    validates; Markdown and HTML say what the baseline changed."""
    import html5lib
    import jsonschema
    import xmlschema

    files = {fmt: f"gated/r.{fmt}" for fmt in ("sarif", "junit", "markdown", "html")}
    done = ws.cli(
        "run", "-p", PACK, "-o", "gated", "--baseline", "quotes/report.json",
        "--fail-on", "new-failures",
        *[arg for fmt, path in files.items() for arg in (f"--{fmt}", path)],
    )  # fmt: skip
    assert done.returncode == 1
    report = _load(ws.root / "gated/report.json")
    (value,) = report["gate"]["baseline"]["diff"]["values"]
    still, newly = set(value["still_failing"]), set(value["newly_failing"])
    quotes = _load(ws.root / "quotes/report.json")["packs"][0]["values"][VALUE]["all_failing_ids"]
    assert still == set(quotes) & set(report["packs"][0]["values"][VALUE]["all_failing_ids"])
    sarif = json.loads((ws.root / files["sarif"]).read_text(encoding="utf-8"))
    schema = json.loads((SCHEMAS / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator(schema).validate(sarif)
    states = {
        r["locations"][0]["logicalLocations"][0]["name"]: r["baselineState"]
        for r in sarif["runs"][0]["results"]
    }
    assert {tid for tid, state in states.items() if state == "unchanged"} == still
    assert newly <= {tid for tid, state in states.items() if state == "new"}
    xmlschema.XMLSchema(str(SCHEMAS / "junit-10.xsd")).validate(str(ws.root / files["junit"]))
    markdown = (ws.root / files["markdown"]).read_text(encoding="utf-8")
    assert (
        "- compared with baseline quotes/report.json (one-sided level 0.05); --fail-on "
        "new-failures: FAIL (by its thresholds alone: FAIL)"
    ) in markdown
    assert f"{len(newly)} newly failing, {len(value['no_longer_failing'])} no longer" in markdown
    page = (ws.root / files["html"]).read_text(encoding="utf-8")
    html5lib.HTMLParser(strict=True).parse(page)
    # + the target changed (max_quote_words 8 -> null), named without --force
    assert page.count('<p class="gate">') == 3 + len(report["gate"]["reasons"])
    assert "target changed from the baseline" in markdown
    # A run without a baseline has no baselineState: SARIF's comparison is not claimed.
    plain = ws.root / "naive/report.json"
    from ragleaklab_core.reporting import sarif as sarif_rendering

    results = json.loads(sarif_rendering.render(_load(plain)))["runs"][0]["results"]
    assert results and all("baselineState" not in r for r in results)


def test_a_pack_or_value_the_baseline_lacks_is_gated_on_its_own_thresholds():
    """Nothing to compare with is no pass: a failing pack added to the suite fails the run
    under every rule, a passing one does not, and neither does a failing value that is not new."""
    base, new = _report(2, 2, 10)
    added = {**new["packs"][0], "name": "added"}
    with_failing = {**new, "packs": [new["packs"][0], added]}
    for rule in ("regression", "new-failures"):
        gate = decide(with_failing, fail_on=rule, baseline=base)
        assert gate.exit_code == 1, rule
        assert "not in the baseline, so gated on its thresholds: added fails them" in gate.reasons
    passing = {**added, "verdict": "pass"}
    gate = decide({**new, "packs": [new["packs"][0], passing]}, fail_on="regression", baseline=base)
    assert gate.exit_code == 0 and gate.reasons == ()
    # A gated value only the new run has, failing its threshold.
    pack = copy.deepcopy(new["packs"][0])
    pack["values"]["w"] = {**pack["values"]["v"], "passed": False}
    gate = decide({**new, "packs": [pack]}, fail_on="regression", baseline=base)
    assert gate.exit_code == 1
    assert gate.reasons == ("not in the baseline, so gated on its threshold: p w fails it",)


def test_a_case_failing_now_that_the_baseline_never_measured_fails_new_failures():
    """It errored in the baseline (no value): it neither passed nor failed there, so nothing
    says it is not new. Under new-failures its threshold decides; the regression test, which
    compares rates over the scored cases, is unchanged by it."""
    base, new = _report(1, 1, 6)  # base fails c00, new fails c05
    base["packs"][0]["values"]["v"]["unscored_ids"] = ["c05"]
    base["packs"][0]["values"]["v"]["fail_rate"]["trials"] = 5
    gate = decide(new, fail_on="new-failures", baseline=base)
    assert gate.exit_code == 1
    assert gate.reasons == ("failing and not measured in the baseline: p v: 1 cases: c05",)
    assert decide(new, fail_on="regression", baseline=base).exit_code == 0
