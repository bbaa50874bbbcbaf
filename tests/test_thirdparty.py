"""A real, pip-installed third-party distribution (tests/fixtures/ragleaklab-acme).

Run by ``tox -e thirdparty``, which installs the fixture next to ragleaklab; elsewhere these tests
are skipped, because the distribution is not installed.
"""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.thirdparty

try:
    importlib.metadata.distribution("ragleaklab-acme")
except importlib.metadata.PackageNotFoundError:
    pytest.skip("ragleaklab-acme is not installed (run tox -e thirdparty)", allow_module_level=True)

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "examples"


def rlk(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ragleaklab_core.cli", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
    )


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


TYPO_NOTE = "metric 'acme-typo' has 'reads_answers': did you mean 'reads_answer'?"


def test_a_misspelt_optional_member_is_listed_with_the_right_name(tmp_path):
    out = rlk("plugins", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = {(r["group"], r["name"]): r for r in json.loads(out.stdout)}
    typo = rows[("ragleaklab.metrics", "acme-typo")]
    assert typo["status"] == "ok"  # reported, not refused: it still loads and scores
    assert typo["misspelt"] == [{"attribute": "reads_answers", "suggestions": ["reads_answer"]}]
    assert typo["notes"] == [TYPO_NOTE]
    assert rows[("ragleaklab.fitters", "acme-fixed")]["misspelt"] == []
    assert "reads_answers" not in out.stderr  # the listing says it once, in its output

    table = rlk("plugins", cwd=tmp_path)
    lines = table.stdout.splitlines()
    row = next(
        i for i, line in enumerate(lines) if line.split()[:2] == ["ragleaklab.metrics", "acme-typo"]
    )
    assert lines[row + 1].strip() == f"warning: {TYPO_NOTE}"


def test_a_misspelt_optional_member_is_logged_when_the_plugin_is_loaded(tmp_path):
    code = (
        "from ragleaklab_core import METRICS, load_plugin\n"
        "from ragleaklab_core._log import configure_cli_logging\n"
        "configure_cli_logging()\n"
        "loaded = load_plugin(METRICS, 'acme-typo')\n"
        "load_plugin(METRICS, 'acme-typo')\n"
        "print(loaded.metric_traits.reads_answer)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "True"  # the misspelt declaration was not read
    assert out.stderr.count(TYPO_NOTE) == 1  # once per process
    assert "Traceback" not in out.stderr
