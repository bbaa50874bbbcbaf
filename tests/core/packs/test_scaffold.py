"""``ragleaklab new-pack``: the files it writes, the names it accepts, what it refuses.

The generated distribution is checked in-process here (its pack validates, and its labels are
sound calibration data that the metric does not mirror); tests/thirdparty/test_new_pack_e2e.py
pip-installs it for real.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from ragleaklab_core import InputError, load_plugin
from ragleaklab_core.calibration.labelling import target_identity
from ragleaklab_core.cli.packs import new_pack_command, next_steps
from ragleaklab_core.packs.scaffold import PackNames, check_pack_name, new_pack, pack_files, render
from ragleaklab_core.packs.validation import validate_directory
from ragleaklab_core.testing import assert_labels_are_sound, assert_pack_contract

FILES = [
    "README.md",
    "pyproject.toml",
    "ragleaklab_acme_demo/__init__.py",
    "ragleaklab_acme_demo/cases.jsonl",
    "ragleaklab_acme_demo/documents.jsonl",
    "ragleaklab_acme_demo/labels.jsonl",
    "ragleaklab_acme_demo/pack.toml",
    "tests/conftest.py",
    "tests/test_pack.py",
]


def test_the_distribution_has_every_file_with_every_placeholder_filled():
    files = dict(pack_files(PackNames.of("acme-demo")))
    assert sorted(files) == FILES
    for rel, text in files.items():
        assert "{{" not in text and "}}" not in text, rel
        if rel.endswith(".py"):
            compile(text, rel, "exec")  # generated code is valid Python


def test_the_pyproject_registers_the_pack_and_ships_its_package():
    files = dict(pack_files(PackNames.of("acme-demo")))
    pyproject = tomllib.loads(files["pyproject.toml"])
    project = pyproject["project"]
    assert project["name"] == "ragleaklab-acme-demo"
    assert project["dependencies"][0].startswith("ragleaklab>=")
    assert "ragleaklab" in project["keywords"]
    assert project["entry-points"] == {
        "ragleaklab.packs": {"acme-demo": "ragleaklab_acme_demo:AcmeDemoPack"}
    }
    assert pyproject["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"] == [
        "ragleaklab_acme_demo"
    ]
    assert pyproject["build-system"]["build-backend"] == "hatchling.build"
    manifest = tomllib.loads(files["ragleaklab_acme_demo/pack.toml"])
    assert manifest["name"] == "acme-demo"
    assert "class AcmeDemoPack(ManifestPack):" in files["ragleaklab_acme_demo/__init__.py"]
    assert 'PACK = "acme-demo"' in files["tests/test_pack.py"]
    assert 'pytest_plugins = ["ragleaklab_core.testing"]' in files["tests/conftest.py"]


@pytest.mark.parametrize(
    ("name", "distribution", "package", "class_name"),
    [
        ("a", "ragleaklab-a", "ragleaklab_a", "APack"),
        ("acme", "ragleaklab-acme", "ragleaklab_acme", "AcmePack"),
        ("acme-demo-2", "ragleaklab-acme-demo-2", "ragleaklab_acme_demo_2", "AcmeDemo2Pack"),
        ("x1-y", "ragleaklab-x1-y", "ragleaklab_x1_y", "X1YPack"),
    ],
)
def test_names_derived_from_a_valid_pack_name(name, distribution, package, class_name):
    assert PackNames.of(name) == PackNames(name, distribution, package, class_name)


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("Acme", "use lowercase letters, digits and single hyphens"),
        ("1acme", "starting with a letter"),
        ("acme_demo", "single hyphens"),
        ("acme--demo", "single hyphens"),
        ("acme-", "single hyphens"),
        ("-acme", "starting with a letter"),
        ("", "starting with a letter"),
        ("acme demo", "single hyphens"),
        ("ácme", "lowercase letters"),
        ("a" * 51, "at most 50 characters, got 51"),
        ("core", "would shadow ragleaklab's"),
        ("plugins", "would shadow ragleaklab's"),
    ],
)
def test_invalid_names_are_refused_with_the_rule(name, fragment):
    with pytest.raises(InputError) as info:
        check_pack_name(name)
    assert f"invalid pack name {name!r}" in str(info.value)
    assert fragment in str(info.value)


def test_an_unknown_placeholder_is_an_error_never_left_in_the_output():
    assert render("{{name}}-x", {"name": "a"}) == "a-x"
    with pytest.raises(InputError, match=r"unknown template token \{\{nmae\}\}"):
        render("{{nmae}}", {"name": "a"}, source="t.tmpl")


def test_new_pack_writes_exactly_the_rendered_files(tmp_path):
    target, files = new_pack("acme-demo", tmp_path / "made" / "here")
    assert target == tmp_path / "made" / "here" / "ragleaklab-acme-demo"
    assert files == FILES
    written = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if p.is_file())
    assert written == FILES
    for rel, text in pack_files(PackNames.of("acme-demo")):
        assert (target / rel).read_text(encoding="utf-8") == text
    assert sorted(p.name for p in target.parent.iterdir()) == ["ragleaklab-acme-demo"]


@pytest.mark.parametrize("existing", ["empty directory", "full directory", "file"])
def test_new_pack_refuses_to_overwrite_anything(tmp_path, existing):
    target = tmp_path / "ragleaklab-acme-demo"
    if existing == "file":
        target.write_text("mine", encoding="utf-8")
    else:
        target.mkdir()
        if existing == "full directory":
            (target / "pyproject.toml").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match="already exists; refusing to overwrite it"):
        new_pack("acme-demo", tmp_path)
    if existing == "file":
        assert target.read_text(encoding="utf-8") == "mine"
    else:
        assert [p.name for p in target.iterdir()] == (
            ["pyproject.toml"] if existing == "full directory" else []
        )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ragleaklab-acme-demo"]


def test_a_failed_write_leaves_nothing_behind(tmp_path, monkeypatch):
    calls = []
    real = Path.write_text

    def flaky(self, *args, **kwargs):
        calls.append(self.name)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", flaky)
    with pytest.raises(InputError, match="cannot write: No space left on device"):
        new_pack("acme-demo", tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_the_generated_pack_validates(tmp_path):
    target, _ = new_pack("acme-demo", tmp_path)
    report = validate_directory(target / "ragleaklab_acme_demo")
    assert report.problems == () and report.warnings == ()  # it says who judged its labels
    assert report.summary() == "valid: 12 documents, 13 cases, 6 positive / 7 negative labels"


def test_the_generated_labels_are_sound_and_not_the_metric(tmp_path, rlk_fake_dist):
    target, files = new_pack("acme-demo", tmp_path)
    package = {
        rel: (target / rel).read_text(encoding="utf-8")
        for rel in files
        if rel.startswith("ragleaklab_acme_demo/")
    }
    rlk_fake_dist(
        "ragleaklab-acme-demo",
        entry_points={"ragleaklab.packs": {"acme-demo": "ragleaklab_acme_demo:AcmeDemoPack"}},
        modules=package,
    )
    pack = assert_pack_contract("acme-demo")
    # The labels describe the default target: the reference target with no option given.
    check = assert_labels_are_sound("acme-demo", target_fpr=0.2, target="reference")
    provenance = check.provenance
    assert (provenance.label_source, check.n_positive, check.n_negative) == (
        "instrumentation",
        6,
        7,
    )
    default = load_plugin("ragleaklab.targets", "reference", {}).provenance()
    assert provenance.label_target == target_identity(default)
    assert check.run is not None
    leaked = [r.test_id for r in check.run.results if r.values["leak_rate"] == 1.0]
    assert leaked == ["c01", "c02", "c03", "c06", "c07"]
    # c13 is a hard positive: the target obeyed, the metric misses it; so no mirror warning.
    assert check.agreement == (12, 13)
    assert [c.test_id for c in pack.cases() if "smoke" in c.tags] == ["c01", "c04", "c06", "c08"]


def test_the_command_prints_the_files_and_the_next_steps(tmp_path):
    runner = CliRunner()
    out = runner.invoke(new_pack_command, ["acme-demo", "--dir", str(tmp_path)])
    assert out.exit_code == 0, out.output
    shown = (tmp_path / "ragleaklab-acme-demo").as_posix()
    assert out.output.splitlines()[0] == f"wrote {shown}/ (9 files):"
    assert f"  {shown}/ragleaklab_acme_demo/pack.toml" in out.output.splitlines()
    lines = out.output.splitlines()
    # Each line pastes as printed (tests/thirdparty runs them); calibrate on the default
    # target needs no option, since the starter's labels describe that target.
    assert lines[lines.index("next:") + 1 :] == [
        f"  pip install -e {shown}'[test]'".replace(f"{shown}'", f"'{shown}"),
        "  ragleaklab pack validate acme-demo",
        "  ragleaklab run --pack acme-demo -o out/run",
        "  ragleaklab calibrate --pack acme-demo -o out/calibration",
        f"  pytest {shown}/tests",
        "note: run exits 1 (FAIL): the reference target obeys the starter's planted "
        "instructions; calibrate fits the threshold on the labels, which record what it did",
    ]
    again = runner.invoke(new_pack_command, ["acme-demo", "--dir", str(tmp_path)])
    assert again.exit_code == 2
    assert f"error: {shown}: already exists; refusing to overwrite it" in again.output
    bad = runner.invoke(new_pack_command, ["Acme"])
    assert bad.exit_code == 2 and "error: invalid pack name 'Acme'" in bad.output


def test_the_next_steps_quote_a_directory_a_shell_would_split():
    assert next_steps("acme-demo", Path("my packs/ragleaklab-acme-demo")) == [
        "pip install -e './my packs/ragleaklab-acme-demo[test]'",
        "ragleaklab pack validate acme-demo",
        "ragleaklab run --pack acme-demo -o out/run",
        "ragleaklab calibrate --pack acme-demo -o out/calibration",
        "pytest 'my packs/ragleaklab-acme-demo/tests'",
    ]


def test_the_command_warns_when_the_name_is_already_installed(tmp_path):
    out = CliRunner().invoke(new_pack_command, ["relevance-hijack", "--dir", str(tmp_path)])
    assert out.exit_code == 0
    assert "warning: a pack named 'relevance-hijack' is already installed" in out.output
