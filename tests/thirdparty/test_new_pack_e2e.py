"""A pack author's path end to end, each step a real subprocess in a fresh virtual environment.

``ragleaklab new-pack acme-demo``, ``pip install ./ragleaklab-acme-demo``, then ``plugins``,
``pack validate``, ``run``, ``calibrate`` and the generated tests; and, in a fresh directory,
every ``next:`` line new-pack prints, pasted verbatim into a shell, in order. Slow (wheel
builds) and it needs pip (and, unless hatchling and editables are installed here, the package
index for them), so it runs only with ``RLK_E2E=1``, as ``tox -e example`` sets it.

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
# What the sentinel metric flags on the default target; the labels add c13, which it misses.
FLAGGED = ["c01", "c02", "c03", "c06", "c07"]


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
    assert f"pip install -e './{DIST}[test]'" in out.stdout
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


def test_run_against_the_default_target_fails_on_exactly_what_the_metric_flags(installed):
    # The starter's labels describe the default target (the reference target, no option).
    out = installed.rlk("run", "--pack", NAME, "--out", "run")
    assert out.returncode == 1, out.stderr  # the naive target obeys the planted instructions
    assert "verdict: FAIL" in out.stdout
    report = json.loads((installed.work / "run" / "report.json").read_text(encoding="utf-8"))
    (pack,) = report["packs"]
    assert (pack["name"], pack["version"]) == (NAME, "0.1.0")
    assert pack["values"]["leak_rate"]["failing_ids"] == FLAGGED
    assert report["exit_code"] == 1


def _fitted(report_path: Path) -> tuple[float, int, int]:
    result = json.loads(report_path.read_text(encoding="utf-8"))["result"]
    return result["threshold"], result["true_positives"], result["false_positives"]


def test_calibrate_fits_the_shipped_labels_on_the_default_target(installed):
    out = installed.rlk("calibrate", "--pack", NAME, "--out", "out/")
    assert out.returncode == 0, out.stderr
    assert "threshold 1.0" in out.stdout
    assert "is not statistically supported by 7 negatives" in out.stderr
    assert "observed on" not in out.stderr  # the labels are this target's own
    report = json.loads(
        (installed.work / "out" / "calibration_report.json").read_text(encoding="utf-8")
    )
    assert report["inputs"]["labels"]["path"] == "ragleaklab_acme_demo/labels.jsonl"
    # c13 is labelled positive and scores 0: five of six positives caught, no false positive.
    assert _fitted(installed.work / "out" / "calibration_report.json") == (1.0, 5, 0)


def _shims(env: Env) -> None:
    """``pip`` and ``pytest`` commands in the environment's bin directory, as a user's venv has
    them. The environment has no pip of its own (this one installs into it), and ``--no-deps
    --no-build-isolation`` keep an install off the package index (every dependency is here)."""
    bindir = env.python.parent
    flags = ["--no-deps", "--disable-pip-version-check", "--no-input"]
    # An editable install needs hatchling's `editables` too (an isolated build fetches it).
    if all(importlib.util.find_spec(m) is not None for m in ("hatchling", "editables")):
        flags.append("--no-build-isolation")
    pip = bindir / "pip"
    pip.write_text(
        "#!/bin/sh\n"
        f'[ "$1" = install ] && {{ shift; set -- install {" ".join(flags)} "$@"; }}\n'
        f'exec "{sys.executable}" -m pip --python "{env.python}" "$@"\n',
        encoding="utf-8",
    )
    pytest_ = bindir / "pytest"
    pytest_.write_text(
        f'#!/bin/sh\nexec "{env.python}" -m pytest -p no:cacheprovider "$@"\n', encoding="utf-8"
    )
    for script in (pip, pytest_):
        script.chmod(0o755)


@pytest.mark.skipif(os.name == "nt", reason="pastes the lines into a POSIX shell")
def test_every_next_line_works_verbatim_in_order_in_a_fresh_directory(env):
    name = "acme-steps"
    fresh = env.root / "fresh"
    fresh.mkdir()
    _shims(env)
    made = env.run(str(env.ragleaklab), "new-pack", name, cwd=fresh)
    assert made.returncode == 0, made.stderr
    lines = made.stdout.splitlines()
    steps = [line[2:] for line in lines[lines.index("next:") + 1 :] if line.startswith("  ")]
    assert [s.split()[:2] for s in steps] == [
        ["pip", "install"],
        ["ragleaklab", "pack"],
        ["ragleaklab", "run"],
        ["ragleaklab", "calibrate"],
        ["pytest", f"ragleaklab-{name}/tests"],
    ]
    shell_env = cli_env({"PYTHONPATH": None, "PYTHONHOME": None})
    shell_env["PATH"] = os.pathsep.join([str(env.python.parent), shell_env.get("PATH", "")])
    codes = []
    for step in steps:
        done = subprocess.run(
            ["/bin/sh", "-c", step],
            capture_output=True,
            text=True,
            cwd=fresh,
            env=shell_env,
            check=False,
        )
        codes.append(done.returncode)
        # The run's exit 1 is the printed note's "FAIL": the target obeys the attacks.
        assert done.returncode == (1 if " run " in step else 0), (step, done.stdout, done.stderr)
        if " calibrate " in step:
            assert "threshold 1.0" in done.stdout
            assert "observed on" not in done.stderr
        if step.startswith("pytest"):
            assert "2 passed" in done.stdout
    assert codes == [0, 0, 1, 0, 0]
    assert "note: run exits 1 (FAIL)" in made.stdout
    report = json.loads((fresh / "out" / "run" / "report.json").read_text(encoding="utf-8"))
    assert report["packs"][0]["values"]["leak_rate"]["failing_ids"] == FLAGGED
    fitted = _fitted(fresh / "out" / "calibration" / "calibration_report.json")
    assert fitted == (1.0, 5, 0)


def test_the_generated_tests_pass_as_generated(installed):
    out = installed.run(
        str(installed.python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
        cwd=installed.work / DIST,
    )  # fmt: skip
    assert out.returncode == 0, out.stdout + out.stderr
    assert "2 passed" in out.stdout
