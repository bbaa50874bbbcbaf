"""What only a built wheel can get wrong: a module, a data file or an entry point left out of it,
and the installed ``ragleaklab`` script. ``tox -e dist`` runs these tests (and only these)
against the wheel, with ``RLK_WHEEL=1``; they also pass against an editable install, where the
checkout is what is installed.

Each check compares the installed distribution with the checkout it was built from (the tests
run from it), so a file added to the source tree and missed by the build fails here, with its
name.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.resources
import importlib.util
import json
import os
import sysconfig
import tomllib
from pathlib import Path

import pytest

from ragleaklab_core._discovery import GROUPS
from ragleaklab_core.run.runner import load_pack
from ragleaklab_core.testing import assert_plugin_contract
from tests.support.cli import rlk

ROOT = Path(__file__).resolve().parents[2]
DIST = importlib.metadata.distribution("ragleaklab")
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
#: The wheel's top-level packages and where each lives in the checkout.
PACKAGES = {
    Path(path).name: ROOT / path
    for path in PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
}
#: Modules that need an extra, by the import the extra provides: found but not imported when
#: it is not installed (``tox -e inspect`` imports them from the wheel with the extra).
NEEDS_EXTRA = {"ragleaklab._inspect": "inspect_ai"}
IN_WHEEL = os.environ.get("RLK_WHEEL") == "1"


def checkout_files(package: str) -> list[str]:
    """Every file of *package* in the checkout, relative to it (no caches, no hidden files)."""
    root = PACKAGES[package]
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file()
        and "__pycache__" not in p.parts
        and not any(part.startswith(".") for part in p.relative_to(root).parts)
        and p.suffix not in (".pyc", ".pyo")
    )


def module_names(package: str) -> list[str]:
    names = []
    for rel in checkout_files(package):
        if rel.endswith(".py"):
            parts = rel[: -len(".py")].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.append(".".join([package, *parts]))
    return names


def entry_points_declared() -> list[tuple[str, str, str]]:
    """(group, name, value) of every entry point and script pyproject.toml declares."""
    project = PYPROJECT["project"]
    declared = [("console_scripts", n, v) for n, v in project["scripts"].items()]
    for group, entries in project["entry-points"].items():
        declared += [(group, name, value) for name, value in entries.items()]
    return declared


def test_the_installed_distribution_is_the_one_under_test():
    assert DIST.metadata["Name"] == PYPROJECT["project"]["name"]
    assert DIST.version == PYPROJECT["project"]["version"]
    for package in PACKAGES:
        where = Path(importlib.import_module(package).__file__ or "").resolve()
        if IN_WHEEL:  # imported from the installed wheel, never from the checkout's sources
            assert not where.is_relative_to(PACKAGES[package]), f"{package} from the checkout"
            site = Path(sysconfig.get_path("purelib")).resolve()
            assert where.is_relative_to(site), f"{package} imported from {where}, not {site}"
        else:
            assert where.is_relative_to(PACKAGES[package]), where


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_module_of_the_checkout_imports_from_the_installed_package(package):
    names = module_names(package)
    assert f"{package}.__main__" in names or package == "ragleaklab_plugins"
    for name in names:
        extra = next((imp for pre, imp in NEEDS_EXTRA.items() if name.startswith(pre)), None)
        if name.endswith(".__main__") or (extra and not importlib.util.find_spec(extra)):
            # __main__ runs the command; an extra's module needs the extra: found, not run
            assert importlib.util.find_spec(name) is not None, f"{name} is not installed"
            continue
        try:
            importlib.import_module(name)
        except ImportError as exc:
            raise AssertionError(f"{name} does not import: {exc}") from exc


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_every_data_file_of_the_checkout_is_installed_and_readable(package):
    installed = importlib.resources.files(package)
    data = [rel for rel in checkout_files(package) if not rel.endswith(".py")]
    missing, different = [], []
    for rel in checkout_files(package):
        resource = installed.joinpath(*rel.split("/"))
        if not resource.is_file():
            missing.append(rel)
        elif rel in data and resource.read_bytes() != (PACKAGES[package] / rel).read_bytes():
            different.append(rel)
    assert not missing, f"not installed with {package}: {missing}"
    assert not different, f"installed with other contents: {different}"
    if package != "ragleaklab":
        assert data, f"{package} ships no data files: the walk is broken"


def test_the_new_pack_templates_are_installed():
    templates = importlib.resources.files("ragleaklab_core.packs").joinpath("templates", "new_pack")
    names = {t.name for t in templates.iterdir()}
    assert {"pyproject.toml.tmpl", "README.md.tmpl", "package", "tests"} <= names
    pack_toml = templates.joinpath("package", "pack.toml.tmpl").read_text(encoding="utf-8")
    assert "{{" in pack_toml  # a template, with its placeholders


@pytest.mark.parametrize(
    ("group", "name", "value"),
    entry_points_declared(),
    ids=[f"{g}:{n}" for g, n, _ in entry_points_declared()],
)
def test_every_declared_entry_point_is_installed_and_loads(group, name, value):
    installed = {(ep.group, ep.name): ep for ep in DIST.entry_points}
    assert (group, name) in installed, f"{group}:{name} is not installed"
    ep = installed[(group, name)]
    assert ep.value == value
    if group in GROUPS:  # through ragleaklab's own loader and checks
        assert assert_plugin_contract(group, name).name == name
    else:
        module = value.partition(":")[0].partition(".")[0]
        if group == "inspect_ai":
            pytest.importorskip("inspect_ai", reason="the inspect extra is not installed")
        assert ep.load() is not None, module


def test_nothing_is_installed_that_pyproject_does_not_declare():
    declared = {(g, n) for g, n, _ in entry_points_declared()}
    assert {(ep.group, ep.name) for ep in DIST.entry_points} == declared


@pytest.mark.parametrize("name", sorted(PYPROJECT["project"]["entry-points"]["ragleaklab.packs"]))
def test_every_builtin_pack_reads_its_installed_data(name):
    pack = load_pack(name)
    cases = list(pack.obj.cases())
    documents = list(pack.obj.documents())
    assert cases and documents
    assert len({c.test_id for c in cases}) == len(cases)
    where = importlib.resources.files(type(pack.obj).__module__)
    labels = where.joinpath("labels.jsonl").read_text(encoding="utf-8").splitlines()
    assert {json.loads(line)["test_id"] for line in labels} == {c.test_id for c in cases}


def test_the_installed_script_runs_reports_and_calibrates(tmp_path):
    """The console script end to end: a smoke run of one pack, its report rendered, and a
    calibration of the same pack."""
    version = rlk("--version", cwd=tmp_path, script=True, ok=(0,))
    assert DIST.version in version.stdout

    run = rlk(
        "run", "-p", "relevance-hijack", "--smoke", "-o", "out", "--junit", "out/junit.xml",
        cwd=tmp_path, script=True, ok=(0, 1),
    )  # fmt: skip
    assert "Traceback" not in run.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert report["target"]["provider"] == f"ragleaklab {DIST.version}"
    assert [p["name"] for p in report["packs"]] == ["relevance-hijack"]
    assert report["exit_code"] == run.returncode
    assert (tmp_path / "out" / "junit.xml").read_text(encoding="utf-8").startswith("<?xml")

    shown = rlk(
        "report", "out/report.json", "--format", "markdown", "-o", "report.md",
        cwd=tmp_path, script=True, ok=(0,),
    )  # fmt: skip
    assert shown.stdout == ""
    assert "relevance-hijack" in (tmp_path / "report.md").read_text(encoding="utf-8")

    rlk(
        "calibrate", "--pack", "relevance-hijack", "-o", "cal",
        cwd=tmp_path, script=True, ok=(0,),
    )  # fmt: skip
    calibration = json.loads((tmp_path / "cal" / "calibration_report.json").read_text("utf-8"))
    assert calibration["inputs"]["target"]["name"] == "reference"
    assert calibration["result"]["n_negative"] > 0
