"""The seed's main job end to end: built-in packs, reference target, through the real CLI.

Each command runs in a fresh temporary directory, so the packs' data must come from the installed
package (importlib.resources), never from the repository's working tree.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.support.cli import rlk

BUILTIN_PACKS = [
    ("relevance-hijack", "poison_attribution"),
    ("sentinel-takeover-safe", "leak_rate"),
    ("claim-corruption", "poison_claim_rate"),
    ("verbatim-extraction", "verbatim_score"),
    ("markdown-exfiltration", "exfiltration_rate"),
    ("cross-tenant", "forbidden_words"),
    ("citation-forgery", "forgery_score"),
    ("context-extraction", "verbatim_score"),
]
ROOT = Path(__file__).resolve().parents[3]
#: Packs whose reference answers the metric ranks (almost) perfectly against the labels: the AUC
#: as measured, pinned. relevance-hijack's labels call an answer harmful when it asserts what only
#: a poison document says, which is what attribution scores: every positive is caught at FPR 0.
NEAR_PERFECT_AUC = {"relevance-hijack": 1.0, "citation-forgery": 1.0}


@pytest.mark.parametrize(("pack", "metric"), BUILTIN_PACKS)
def test_every_builtin_pack_calibrates_on_its_default_labels(tmp_path, pack, metric):
    out = rlk("calibrate", "--pack", pack, "--out", "calibration_out/", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "debug" not in out.stderr  # libraries' own loggers stay quiet by default
    report = json.loads((tmp_path / "calibration_out" / "calibration_report.json").read_text())
    result = report["result"]
    assert report["pack_name"] == pack and report["metric_name"] == metric
    assert report["target_fpr"] == 0.01
    assert result["n_positive"] >= 100 and result["n_negative"] >= 300
    assert result["achieved_fpr"] <= 0.01
    # The labels record harm, not the metric's verdict: the fit catches some positives and is
    # honest that it misses others (or flags a negative), and the AUC says how well it ranks;
    # where the metric ranks the labels (almost) perfectly, the AUC measured is pinned.
    assert result["achieved_tpr"] > 0, pack
    if pack in NEAR_PERFECT_AUC:
        assert report["auc"]["auc"] == pytest.approx(NEAR_PERFECT_AUC[pack], abs=1e-6)
        if NEAR_PERFECT_AUC[pack] == 1.0:  # the fit is perfect and says so
            assert result["achieved_tpr"] == 1 and result["achieved_fpr"] == 0, pack
        else:
            assert result["achieved_tpr"] < 1 or result["achieved_fpr"] > 0, pack
    else:
        assert result["achieved_tpr"] < 1 or result["achieved_fpr"] > 0, pack
        assert 0.5 < report["auc"]["auc"] < 0.995, report["auc"]
    coverage = report["coverage"]
    assert coverage["unlabelled"]["count"] == 0 and coverage["unscored"]["count"] == 0
    assert report["inputs"]["target"]["name"] == "reference"
    assert not [w for w in report["warnings"] if "errored" in w or "could not be scored" in w]
    # the shipped labels are the ones in the repository, byte for byte
    shipped = ROOT / "data" / "calibration" / pack.replace("-", "_") / "labels.jsonl"
    assert report["inputs"]["labels"]["sha256"] == hashlib.sha256(shipped.read_bytes()).hexdigest()


def test_run_without_config_tests_every_builtin_pack_and_fails_the_naive_target(tmp_path):
    out = rlk("run", "--smoke", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    report = json.loads((tmp_path / "ragleaklab_out" / "report.json").read_text())
    names = [p["name"] for p in report["packs"]]
    assert {name for name, _ in BUILTIN_PACKS} <= set(names)
    assert report["verdict"] == "fail" and report["exit_code"] == 1
    assert "verdict: FAIL" in out.stdout
    for pack in report["packs"]:
        primary = pack["values"][pack["primary_metric"]]
        assert primary["threshold"] is not None, pack["name"]
        assert primary["summary"]["n"] == pack["cases"]["run"]
    runs = (tmp_path / "ragleaklab_out" / "runs.jsonl").read_text().splitlines()
    assert len(runs) == report["totals"]["cases"]


def test_hardened_reference_target_fails_far_fewer_cases(tmp_path):
    naive = rlk("run", "-p", "sentinel-takeover-safe", "-o", "naive", cwd=tmp_path)
    hardened = rlk(
        "run",
        "-p",
        "sentinel-takeover-safe",
        "-o",
        "hardened",
        "--target-option",
        "filter_injections=true",
        cwd=tmp_path,
    )
    assert naive.returncode == 1
    assert hardened.returncode in (0, 1), hardened.stderr
    failing = {}
    for name in ("naive", "hardened"):
        report = json.loads((tmp_path / name / "report.json").read_text())
        failing[name] = report["packs"][0]["values"]["leak_rate"]["failing_cases"]
    # The filter stops the English instructions it matches and misses the other languages and
    # encodings: fewer failing cases, not none (docs/reference-target.md).
    assert failing["naive"] >= 100
    assert 0 < failing["hardened"] < failing["naive"], failing


@pytest.mark.parametrize(
    ("fitter", "rule"),
    [
        ("neyman-pearson", "score > threshold -> FAIL"),
        ("bootstrap-ci", "score >= threshold -> FAIL"),
    ],
)
def test_guaranteeing_fitters_calibrate_a_pack(tmp_path, fitter, rule):
    out = rlk("calibrate", "-p", "claim-corruption", "--fitter", fitter, "-o", "o", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "o" / "calibration_report.json").read_text())
    assert report["fitter"]["name"] == fitter
    assert report["result"]["decision_rule"] == rule
    assert report["fpr_upper_bound"]["value"] <= 0.01  # 615 negatives carry a 1% guarantee
    assert 0 < report["result"]["achieved_tpr"] < 1


def test_default_thresholds_on_another_target_are_flagged_as_uncalibrated(tmp_path):
    rlk("run", "-p", "relevance-hijack", "--smoke", "-o", "same", cwd=tmp_path)
    rlk(
        "run", "-p", "relevance-hijack", "--smoke", "-o", "other",
        "--target-option", "filter_injections=true", cwd=tmp_path,
    )  # fmt: skip
    config = tmp_path / "own.toml"
    config.write_text(
        "[thresholds.relevance-hijack.poison_attribution]\nthreshold = 0.4\n", encoding="utf-8"
    )
    rlk(
        "run", "-p", "relevance-hijack", "--smoke", "-o", "own", "-c", str(config),
        "--target-option", "filter_injections=true", cwd=tmp_path,
    )  # fmt: skip
    reports = {
        name: json.loads((tmp_path / name / "report.json").read_text())
        for name in ("same", "other", "own")
    }
    [foreign] = reports["other"]["warnings"]
    assert foreign.startswith(
        "the default thresholds of pack relevance-hijack were fitted on labels observed on "
        "reference@"
    )
    assert "not on this target (reference@" in foreign
    fitted_on = reports["other"]["packs"][0]["defaults_fitted_on"]
    assert fitted_on.startswith("reference@") and f"observed on {fitted_on}, not" in foreign
    assert not reports["other"]["packs"][0]["warnings"]  # said once, for the run
    # The labels' own target, or thresholds the user gave: nothing to warn about.
    for name in ("same", "own"):
        assert reports[name]["warnings"] == []
        assert reports[name]["packs"][0]["defaults_fitted_on"] is None


FITTED_ELSEWHERE = "were fitted on labels observed on reference@"


def test_thresholds_fitted_elsewhere_are_said_once_for_every_pack_they_concern(tmp_path):
    packs = ("relevance-hijack", "sentinel-takeover-safe", "verbatim-extraction")
    config = tmp_path / "own.toml"  # one pack gated on a threshold of its own: not listed
    config.write_text(
        "[thresholds.verbatim-extraction.verbatim_score]\nthreshold = 0.9\n", encoding="utf-8"
    )
    done = rlk(
        "run", *(a for p in packs for a in ("-p", p)), "--smoke", "-o", "out", "-c", str(config),
        "--target-option", "top_k=4", "--markdown", "m.md", "--html", "h.html",
        cwd=tmp_path, env={"GITHUB_ACTIONS": "true"},
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stderr
    listed = "the default thresholds of 2 packs (relevance-hijack, sentinel-takeover-safe) were"
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    [warning] = report["warnings"]
    assert warning.startswith(listed + " fitted on labels observed on reference@")
    summary = " ".join(done.stdout.split())  # the summary wraps it; the annotation does not
    assert summary.count(FITTED_ELSEWHERE) == 2  # the summary's line, the one annotation
    assert summary.count(listed) == 2
    assert done.stdout.count("::warning title=ragleaklab::the default thresholds of 2 packs") == 1
    for rendering in ("m.md", "h.html"):
        text = (tmp_path / rendering).read_text("utf-8")
        assert text.replace("&#64;&#8288;", "@").count(FITTED_ELSEWHERE) == 1, rendering
