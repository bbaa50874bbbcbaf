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
    ("relevance-hijack", "poison_rate_at_k"),
    ("sentinel-takeover-safe", "leak_rate"),
    ("claim-corruption", "poison_claim_rate"),
    ("verbatim-extraction", "verbatim_score"),
    ("markdown-exfiltration", "exfiltration_rate"),
    ("cross-tenant", "forbidden_words"),
    ("citation-forgery", "forgery_score"),
    ("context-extraction", "verbatim_score"),
]
ROOT = Path(__file__).resolve().parents[3]


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
    # honest that it misses others (or flags a negative), and the AUC says how well it ranks.
    assert result["achieved_tpr"] > 0, pack
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
    out = rlk("calibrate", "-p", "relevance-hijack", "--fitter", fitter, "-o", "o", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "o" / "calibration_report.json").read_text())
    assert report["fitter"]["name"] == fitter
    assert report["result"]["decision_rule"] == rule
    assert report["fpr_upper_bound"]["value"] <= 0.01  # 310 negatives carry a 1% guarantee
    assert 0 < report["result"]["achieved_tpr"] < 1


def test_default_thresholds_on_another_target_are_flagged_as_uncalibrated(tmp_path):
    rlk("run", "-p", "relevance-hijack", "--smoke", "-o", "same", cwd=tmp_path)
    rlk(
        "run", "-p", "relevance-hijack", "--smoke", "-o", "other",
        "--target-option", "filter_injections=true", cwd=tmp_path,
    )  # fmt: skip
    config = tmp_path / "own.toml"
    config.write_text(
        "[thresholds.relevance-hijack.poison_rate_at_k]\nthreshold = 0.4\n", encoding="utf-8"
    )
    rlk(
        "run", "-p", "relevance-hijack", "--smoke", "-o", "own", "-c", str(config),
        "--target-option", "filter_injections=true", cwd=tmp_path,
    )  # fmt: skip
    warnings = {
        name: json.loads((tmp_path / name / "report.json").read_text())["packs"][0]["warnings"]
        for name in ("same", "other", "own")
    }
    foreign = [w for w in warnings["other"] if "fitted on labels observed on reference@" in w]
    assert len(foreign) == 1 and "not on this target (reference@" in foreign[0]
    # The labels' own target, or thresholds the user gave: nothing to warn about.
    assert not [w for w in warnings["same"] + warnings["own"] if "fitted on labels" in w]
