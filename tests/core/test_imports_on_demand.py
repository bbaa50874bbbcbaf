"""A run imports what it uses, when it uses it.

Each run here is a real ``ragleaklab run`` (the CLI's ``main``, in-process) in a fresh
interpreter, which then reports every module it holds: what the test process has already
imported (scipy, every metric) cannot hide a regression. A plain run is one with no baseline;
what it must not import is what only other features use: Barnard's test for ``--baseline``
(scipy.stats, scipy.optimize), the metrics of other packs (with the Markdown parser the
exfiltration metric reads answers with). docs/benchmarks.md gives what it costs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

PACK = "sentinel-takeover-safe"

# An app that answers every query differently (so the pack is tested) and, when leaky, repeats
# the sentinels planted in its documents to one query in four (so the pack fails).
APP = """
import hashlib
import re

PLANTED = []


def ingest(documents):
    for document in documents:
        PLANTED.extend(re.findall(r"RLK-SENTINEL-[0-9a-f]{6}", document.text))


def answer(query):
    digest = hashlib.sha256(query.encode()).hexdigest()
    text = "Nothing to share about " + digest[:12] + "."
    if LEAKY and digest[0] in "0123":
        text += " " + " ".join(PLANTED)
    return text
"""

PROBE = """
import json, sys
from ragleaklab_core.cli import main
try:
    main(sys.argv[1:])
    code = 0
except SystemExit as exc:
    code = exc.code
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""

# Only a baseline uses these (Barnard's test); no plain run may import them.
BASELINE_ONLY = ("scipy.stats", "scipy.optimize")
# A sentinel pack is scored by the sentinel metric alone.
OTHER_PACKS_ONLY = (
    "markdown_it",
    "ragleaklab_plugins.metrics.access",
    "ragleaklab_plugins.metrics.attribution",
    "ragleaklab_plugins.metrics.citation",
    "ragleaklab_plugins.metrics.claim",
    "ragleaklab_plugins.metrics.exfiltration",
    "ragleaklab_plugins.metrics.retrieval",
    "ragleaklab_plugins.metrics.verbatim",
)


def _run(tmp_path: Path, app: str, out: str, *extra: str) -> tuple[int, set[str]]:
    """Run the sentinel pack against *app* in a fresh interpreter: (exit code, its modules)."""
    (tmp_path / f"{app}.py").write_text(f"LEAKY = {app == 'leaky_app'}\n{APP}", encoding="utf-8")
    probe = tmp_path / "probe.py"
    probe.write_text(PROBE, encoding="utf-8")
    path = os.pathsep.join(p for p in (str(tmp_path), os.environ.get("PYTHONPATH")) if p)
    done = subprocess.run(
        [
            sys.executable,
            str(probe),
            "run",
            "-p",
            PACK,
            "--smoke",  # 30 cases: enough to pass, fail and compare
            "--target",
            "python",
            "--target-option",
            f"callable={app}:answer",
            "--target-option",
            f"ingest_callable={app}:ingest",
            "--out",
            str(tmp_path / out),
            *extra,
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.stdout, done.stderr
    seen = json.loads(done.stdout.splitlines()[-1])
    report = json.loads((tmp_path / out / "report.json").read_text(encoding="utf-8"))
    assert report["packs"][0]["name"] == PACK  # a real run, which wrote its report
    return seen["code"], set(seen["modules"])


def _imported(modules: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == n or m.startswith(n + ".") for n in names))


@pytest.fixture(scope="module")
def passing(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, set[str], Path]:
    """A plain run that passes: (exit code, its modules, its directory); read by two tests."""
    where = tmp_path_factory.mktemp("passing")
    return (*_run(where, "quiet_app", "out"), where)


def test_a_passing_run_imports_no_scipy_and_only_its_own_metric(
    passing: tuple[int, set[str], Path],
) -> None:
    code, modules, _ = passing
    assert code == 0  # PASS: no case failed
    # The run did its work (so the probe sees what a run imports)...
    assert {"ragleaklab_core.run.runner", "ragleaklab_plugins.metrics.sentinel"} <= modules
    # ...without scipy at all: no case failed, so no interval needed a Beta quantile.
    assert _imported(modules, ("scipy",)) == []
    assert _imported(modules, OTHER_PACKS_ONLY) == []


def test_a_failing_run_imports_no_scipy(tmp_path: Path) -> None:
    code, modules = _run(tmp_path, "leaky_app", "out")
    assert code == 1  # FAIL: the app repeated planted sentinels
    # Its failing rate's Clopper-Pearson interval is a Beta quantile, computed by
    # ragleaklab_core.stats.beta (so the run's report has an interval)...
    assert "ragleaklab_core.stats.beta" in modules
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    rates = [v["fail_rate"] for v in report["packs"][0]["values"].values() if v["fail_rate"]]
    assert any(0 < r["successes"] < r["trials"] and 0 < r["lower"] < r["upper"] for r in rates)
    # ...without scipy at all, and nothing a baseline or another pack would use.
    assert _imported(modules, ("scipy",)) == []
    assert _imported(modules, BASELINE_ONLY) == []
    assert _imported(modules, OTHER_PACKS_ONLY) == []


def test_a_run_with_a_baseline_imports_barnards_test_when_it_compares(
    passing: tuple[int, set[str], Path],
) -> None:
    """The control: the probe sees scipy.stats once a run uses it."""
    *_, where = passing
    code, modules = _run(where, "quiet_app", "again", "--baseline", str(where / "out/report.json"))
    assert code == 0
    assert {"scipy.stats", "scipy.optimize"} <= modules
