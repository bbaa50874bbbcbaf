"""A pack author's path end to end, each step a real subprocess in a fresh virtual environment.

``ragleaklab new-pack acme-demo``, ``pip install ./ragleaklab-acme-demo``, then ``plugins``,
``pack validate``, ``run``, ``calibrate`` and the generated tests. Slow (two wheel builds) and it
needs pip (and, unless hatchling is installed here, the package index for it), so it runs only
with ``RLK_E2E=1``, as ``tox -e example`` sets it.

The fresh environment sees this interpreter's packages through a ``.pth`` file, so its
dependencies (numpy, bm25s, pytest...) are not installed again; ragleaklab itself is built from
this checkout and installed into it, with the console script a user gets.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.support.cli import cli_env

pytestmark = pytest.mark.skipif(
    os.environ.get("RLK_E2E") != "1", reason="set RLK_E2E=1 to run (tox -e example does)"
)

ROOT = Path(__file__).resolve().parents[2]
NAME = "acme-demo"
DIST = f"ragleaklab-{NAME}"
POSITIVES = ["c01", "c02", "c03", "c04", "c05"]  # what the metric flags; c13 it misses


def _parent_paths() -> list[str]:
    """Where this interpreter finds installed packages (site-packages and what .pth files add)."""
    # The base interpreter's standard library (in a venv, "platstdlib" is the venv's own lib/,
    # which holds site-packages: it must not be used here).
    stdlib = Path(sysconfig.get_path("stdlib")).resolve()
    paths = []
    for entry in sys.path:
        path = Path(entry).resolve() if entry else None
        if path is None or not path.is_dir() or path == ROOT or path.is_relative_to(stdlib):
            continue
        paths.append(entry)
    return list(dict.fromkeys(paths))


class Env:
    """A virtual environment and the directory the author works in."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.work = root / "work"
        self.work.mkdir()
        self.dir = root / "venv"
        venv.EnvBuilder(with_pip=False).create(self.dir)
        bindir = self.dir / ("Scripts" if os.name == "nt" else "bin")
        self.python = bindir / ("python.exe" if os.name == "nt" else "python")
        self.ragleaklab = bindir / ("ragleaklab.exe" if os.name == "nt" else "ragleaklab")
        purelib = self.run(
            str(self.python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"
        ).stdout.strip()
        (Path(purelib) / "_rlk_parent.pth").write_text(
            "\n".join(_parent_paths()) + "\n", encoding="utf-8"
        )

    def run(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        env = cli_env({"PYTHONPATH": None, "PYTHONHOME": None})  # the venv's own paths only
        return subprocess.run(
            args, capture_output=True, text=True, cwd=cwd or self.work, env=env, check=False
        )

    def pip_install(self, *targets: str) -> subprocess.CompletedProcess[str]:
        flags = ["--no-deps", "--disable-pip-version-check", "--no-input"]
        if importlib.util.find_spec("hatchling") is not None:
            flags.append("--no-build-isolation")  # the build backend is already here
        return self.run(
            sys.executable, "-m", "pip", "--python", str(self.python), "install", *flags, *targets
        )

    def rlk(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run(str(self.ragleaklab), *args)


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Env:
    e = Env(tmp_path_factory.mktemp("e2e"))
    out = e.pip_install(str(ROOT))
    assert out.returncode == 0, out.stdout + out.stderr
    return e


@pytest.fixture(scope="module")
def installed(env: Env) -> Env:
    out = env.rlk("new-pack", NAME)
    assert out.returncode == 0, out.stderr
    assert f"wrote {DIST}/ (9 files)" in out.stdout
    assert f"pip install ./{DIST}" in out.stdout
    out = env.pip_install(f"./{DIST}")
    assert out.returncode == 0, out.stdout + out.stderr
    return env


def test_new_pack_refuses_to_overwrite_and_bad_names(installed):
    again = installed.rlk("new-pack", NAME)
    assert again.returncode == 2
    assert f"error: {DIST}: already exists; refusing to overwrite it" in again.stderr
    bad = installed.rlk("new-pack", "Acme_Demo")
    assert bad.returncode == 2 and "invalid pack name 'Acme_Demo'" in bad.stderr


def test_plugins_lists_the_pack_with_its_distribution(installed):
    out = installed.rlk("plugins", "--json")
    assert out.returncode == 0, out.stderr
    rows = {(r["group"], r["name"]): r for r in json.loads(out.stdout)}
    mine = rows[("ragleaklab.packs", NAME)]
    assert mine["status"] == "ok", mine["error"]
    assert (mine["distribution"], mine["version"]) == (DIST, "0.1.0")
    assert mine["target"] == "ragleaklab_acme_demo:AcmeDemoPack"


def test_pack_validate_by_name_passes(installed):
    out = installed.rlk("pack", "validate", NAME)
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout == "valid: 12 documents, 13 cases, 6 positive / 7 negative labels\n"


def test_run_against_the_reference_target_fails_on_exactly_the_positives(installed):
    # The starter's labels describe the reference target's literal behaviour (its README).
    out = installed.rlk(
        "run", "--pack", NAME, "--target-option", "behaviour=literal", "--out", "run"
    )
    assert out.returncode == 1, out.stderr  # the naive target obeys the planted instructions
    assert "verdict: FAIL" in out.stdout
    report = json.loads((installed.work / "run" / "report.json").read_text(encoding="utf-8"))
    (pack,) = report["packs"]
    assert (pack["name"], pack["version"]) == (NAME, "0.1.0")
    assert pack["values"]["leak_rate"]["failing_ids"] == POSITIVES
    assert report["exit_code"] == 1


def test_calibrate_fits_the_shipped_labels(installed):
    out = installed.rlk(
        "calibrate", "--pack", NAME, "--target-option", "behaviour=literal", "--out", "out/"
    )
    assert out.returncode == 0, out.stderr
    assert "threshold 1.0" in out.stdout
    assert "is not statistically supported by 7 negatives" in out.stderr
    report = json.loads(
        (installed.work / "out" / "calibration_report.json").read_text(encoding="utf-8")
    )
    result = report["result"]
    assert (result["threshold"], result["true_positives"], result["false_positives"]) == (1.0, 5, 0)
    assert report["inputs"]["labels"]["path"] == "ragleaklab_acme_demo/labels.jsonl"


def test_the_generated_tests_pass_as_generated(installed):
    out = installed.run(
        str(installed.python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
        cwd=installed.work / DIST,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout
