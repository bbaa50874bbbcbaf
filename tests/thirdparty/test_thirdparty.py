"""A real, pip-installed third-party distribution (tests/fixtures/ragleaklab-acme).

Run by ``tox -e thirdparty``, which installs the fixture next to ragleaklab; elsewhere these tests
are skipped, because the distribution is not installed.
"""

from __future__ import annotations

import functools
import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import cli

pytestmark = pytest.mark.thirdparty

# Each command in its own process: what these tests check is what a pip install makes a fresh
# interpreter find (entry points, a broken distribution's import error).
rlk = functools.partial(cli.rlk, own_process=True)

try:
    importlib.metadata.distribution("ragleaklab-acme")
except importlib.metadata.PackageNotFoundError:
    pytest.skip("ragleaklab-acme is not installed (run tox -e thirdparty)", allow_module_level=True)

EXAMPLES = Path(__file__).resolve().parents[2] / "data" / "examples"


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


# -- a third-party reporter (tests/fixtures/ragleaklab-acme-reporter, docs/plugins.md) ----------


def test_the_reporter_is_listed_with_its_distribution(tmp_path):
    out = rlk("plugins", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = {(r["group"], r["name"]): r for r in json.loads(out.stdout)}
    csv = rows[("ragleaklab.reporters", "acme-csv")]
    assert csv["status"] == "ok", csv["error"]
    assert (csv["distribution"], csv["version"]) == ("ragleaklab-acme-reporter", "0.1.0")
    assert csv["target"] == "ragleaklab_acme_reporter:CsvReporter"
    plain = rlk("plugins", cwd=tmp_path)
    assert any(
        line.split()[:3] == ["ragleaklab.reporters", "acme-csv", "ok"]
        for line in plain.stdout.splitlines()
    ), plain.stdout


def test_run_report_and_report_format_render_through_the_third_party_reporter(tmp_path):
    done = rlk("run", "--smoke", "-o", "out", "--report", "acme-csv=r/packs.csv", cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # the smoke run fails; its renderings are written
    assert "wrote r/packs.csv" in done.stdout
    written = (tmp_path / "r" / "packs.csv").read_text(encoding="utf-8")
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    rows = written.splitlines()
    assert rows[0] == "pack,version,verdict,tested,cases,failing"
    expected = [
        f"{p['name']},{p['version']},{p['verdict'].upper()},yes,{len(p['case_results'])},"
        f"{sum(c['outcome'] == 'fail' for c in p['case_results'])}"
        for p in report["packs"]
    ]
    assert rows[1:-1] == expected
    assert rows[-1] == "(run),,FAIL,,,"
    assert any(not row.endswith(",0") for row in expected)  # some pack failed cases
    # The same bytes from the report.json, and from the run's directory, as a file or on stdout.
    for run_path in ("out/report.json", "out"):
        again = rlk("report", run_path, "--format", "acme-csv", "-o", "a.csv", cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert (tmp_path / "a.csv").read_bytes() == (tmp_path / "r" / "packs.csv").read_bytes()
    shown = rlk("report", "out", "--format", "acme-csv", cwd=tmp_path)
    assert shown.stdout == written


def test_a_misspelt_third_party_reporter_is_suggested_and_nothing_runs(tmp_path):
    done = rlk("run", "--smoke", "-o", "out", "--report", "acme-cvs=r.csv", cwd=tmp_path)
    assert done.returncode == 2
    assert "no reporter named 'acme-cvs' (did you mean 'acme-csv'?)" in done.stderr
    assert "acme-csv" in done.stderr.split("installed reporters: ", 1)[1]
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "r.csv").exists()


def test_a_reporter_that_accepts_no_calibration_refuses_one(tmp_path):
    (tmp_path / "report.json").write_text('{"packs": []}', encoding="utf-8")
    (tmp_path / "cal.json").write_text("{}", encoding="utf-8")
    done = rlk(
        "report", "report.json", "--format", "acme-csv", "--calibration", "cal.json",
        "-o", "x.csv", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert "--calibration is shown by html only, not by acme-csv" in done.stderr
    assert not (tmp_path / "x.csv").exists()


TYPO_ERROR = (
    "ragleaklab.metrics:acme-typo (ragleaklab_acme.typo:TypoMetric, from ragleaklab-acme 1.2.0) "
    "could not be used: metric 'acme-typo' has 'reads_answers': did you mean 'reads_answer'? "
    "ragleaklab reads only 'reads_answer', so 'reads_answers' would be ignored: rename it, or make "
    "it private ('_reads_answers') if it is the plugin's own"
)


def test_a_misspelt_optional_member_is_listed_failed_with_the_right_name(tmp_path):
    out = rlk("plugins", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    rows = {(r["group"], r["name"]): r for r in json.loads(out.stdout)}
    typo = rows[("ragleaklab.metrics", "acme-typo")]
    assert typo["status"] == "failed"  # the core would never read the misspelt declaration
    assert typo["error"] == TYPO_ERROR
    assert typo["misspelt"] == [{"attribute": "reads_answers", "suggestions": ["reads_answer"]}]
    assert rows[("ragleaklab.fitters", "acme-fixed")]["misspelt"] == []
    assert rows[("ragleaklab.fitters", "acme-fixed")]["status"] == "ok"
    assert "reads_answers" not in out.stderr  # the listing says it once, in its output

    table = rlk("plugins", cwd=tmp_path)
    lines = table.stdout.splitlines()
    row = next(
        i for i, line in enumerate(lines) if line.split()[:2] == ["ragleaklab.metrics", "acme-typo"]
    )
    assert lines[row].split()[2] == "failed"
    assert lines[row + 1].strip() == TYPO_ERROR


def test_a_misspelt_optional_member_is_refused_when_the_plugin_is_loaded(tmp_path):
    code = (
        "from ragleaklab_core import METRICS, PluginError, load_plugin\n"
        "try:\n"
        "    load_plugin(METRICS, 'acme-typo')\n"
        "except PluginError as exc:\n"
        "    print(exc.exit_code, exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == f"3 {TYPO_ERROR}"
    assert "Traceback" not in out.stderr
