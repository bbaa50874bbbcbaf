"""A real, pip-installed third-party distribution (tests/fixtures/ragleaklab-acme).

Run by ``tox -e thirdparty``, which installs the fixture next to ragleaklab; elsewhere these tests
are skipped, because the distribution is not installed.
"""

from __future__ import annotations

import importlib.metadata
import json
from pathlib import Path

import pytest

from tests.support.cli import rlk

pytestmark = pytest.mark.thirdparty

try:
    importlib.metadata.distribution("ragleaklab-acme")
except importlib.metadata.PackageNotFoundError:
    pytest.skip("ragleaklab-acme is not installed (run tox -e thirdparty)", allow_module_level=True)

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "examples"


def test_listed_with_its_distribution_and_the_broken_one_reported(tmp_path):
    out = rlk("plugins", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = {(r["group"], r["name"]): r for r in json.loads(out.stdout)}
    good = rows[("ragleaklab.fitters", "acme-fixed")]
    assert good["status"] == "ok"
    assert (good["distribution"], good["version"]) == ("ragleaklab-acme", "1.2.0")
    broken = rows[("ragleaklab.fitters", "acme-broken")]
    assert broken["status"] == "failed"
    assert "ragleaklab_acme.broken:Nope" in broken["error"]
    assert "ragleaklab-acme 1.2.0" in broken["error"]
    assert rows[("ragleaklab.fitters", "exact")]["status"] == "ok"


def test_plain_listing_shows_the_failure_and_exits_0(tmp_path):
    out = rlk("plugins", cwd=tmp_path)
    assert out.returncode == 0
    assert "acme-broken" in out.stdout and "failed" in out.stdout
    assert "ModuleNotFoundError" in out.stdout


def test_usable_by_name_and_recorded_in_the_report(tmp_path):
    out = rlk(
        "calibrate",
        "--scores", str(EXAMPLES / "scores.jsonl"),
        "--labels", str(EXAMPLES / "labels.jsonl"),
        "--fitter", "acme-fixed",
        "--fitter-option", "threshold=0.7",
        "--target-fpr", "0.05",
        "--out", "out",
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    report = json.loads((tmp_path / "out" / "calibration_report.json").read_text())
    assert report["fitter"]["name"] == "acme-fixed"
    assert report["fitter"]["provider"] == "ragleaklab-acme 1.2.0"
    assert report["fitter"]["options"] == {"threshold": 0.7}
    assert report["result"]["threshold"] == 0.7


def test_the_broken_plugin_does_not_affect_the_builtin(tmp_path):
    out = rlk(
        "calibrate",
        "--scores", str(EXAMPLES / "scores.jsonl"),
        "--labels", str(EXAMPLES / "labels.jsonl"),
        "--out", "out",
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "acme" not in out.stderr


def test_using_the_broken_plugin_exits_3_naming_its_distribution(tmp_path):
    out = rlk(
        "calibrate",
        "--scores", str(EXAMPLES / "scores.jsonl"),
        "--labels", str(EXAMPLES / "labels.jsonl"),
        "--fitter", "acme-broken",
        "--out", "out",
        cwd=tmp_path,
    )  # fmt: skip
    assert out.returncode == 3
    assert "ragleaklab.fitters:acme-broken" in out.stderr
    assert "ragleaklab-acme 1.2.0" in out.stderr
    assert "Traceback" not in out.stderr
    assert not (tmp_path / "out" / "calibration_report.json").exists()
