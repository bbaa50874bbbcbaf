"""docs/tutorial.md shows the example distribution's real files, so the two cannot drift apart.

A code block right after ``<!-- file: PATH -->`` must be the file at PATH (from the repository
root) or an exact run of its lines; the ``pack validate`` output it shows must be what the
validator prints for the mistakes it describes.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest

from ragleaklab_core import METRICS, available_names
from ragleaklab_core.packs.validation import validate_root

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"
EXAMPLE = ROOT / "examples" / "ragleaklab-example"
MARKER = "<!-- file: "
BLOCK = re.compile(r"<!-- file: (?P<path>\S+) -->\n```[\w-]*\n(?P<body>.*?)\n```\n", re.S)
OUTPUT = re.compile(r"<!-- output: pack validate -->\n```text\n(?P<body>.*?)\n```\n", re.S)


def _text() -> str:
    return TUTORIAL.read_text(encoding="utf-8")


def _blocks() -> list[tuple[str, str]]:
    return [(m.group("path"), m.group("body")) for m in BLOCK.finditer(_text())]


def _lines(path: str) -> list[str]:
    return (ROOT / path).read_text(encoding="utf-8").rstrip("\n").split("\n")


def _is_excerpt(block: list[str], lines: list[str]) -> bool:
    n = len(block)
    return any(lines[i : i + n] == block for i in range(len(lines) - n + 1))


def test_every_marker_is_followed_by_a_code_block():
    blocks = _blocks()
    assert len(blocks) == _text().count(MARKER)
    assert len(blocks) >= 12


@pytest.mark.parametrize(("path", "body"), _blocks(), ids=lambda x: x if "\n" not in x else "")
def test_every_marked_block_is_its_file_or_an_exact_excerpt(path, body):
    assert path.startswith("examples/ragleaklab-example/"), path
    assert (ROOT / path).is_file(), f"{path} does not exist"
    block = body.split("\n")
    assert _is_excerpt(block, _lines(path)), (
        f"docs/tutorial.md shows {path}, but the block is not that file nor a run of its lines; "
        "copy the file's current text into the tutorial"
    )


def test_the_plugins_and_the_manifest_are_shown_whole():
    whole = {path for path, body in _blocks() if body.split("\n") == _lines(path)}
    package = "examples/ragleaklab-example/ragleaklab_example"
    assert {
        "examples/ragleaklab-example/pyproject.toml",
        "examples/ragleaklab-example/tests/conftest.py",
        f"{package}/leaks/__init__.py",
        f"{package}/leaks/pack.toml",
        f"{package}/canaries.py",
        f"{package}/pii.py",
        f"{package}/youden.py",
    } <= whole


def test_every_plugin_the_example_registers_is_explained():
    project = tomllib.loads((EXAMPLE / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [name for group in project["entry-points"].values() for name in group]
    assert sorted(names) == ["example-canaries", "example-leaks", "example-pii", "example-youden"]
    text = _text()
    for name in names:
        assert f"`{name}`" in text, name


PII_METRIC = {"ragleaklab.metrics": {"example-pii": "rlk_tutorial_pii:ExamplePiiMetric"}}


def test_the_validate_output_shown_is_what_validate_prints(tmp_path, rlk_fake_dist):
    if "example-pii" not in available_names(METRICS):  # the example is not installed here
        source = (EXAMPLE / "ragleaklab_example" / "pii.py").read_text(encoding="utf-8")
        rlk_fake_dist(
            "rlk-tutorial", entry_points=PII_METRIC, modules={"rlk_tutorial_pii.py": source}
        )
    pack = tmp_path / "leaks"
    shutil.copytree(EXAMPLE / "ragleaklab_example" / "leaks", pack)
    # The two mistakes the tutorial describes: a misspelt record id on line 7 of the cases, and
    # a label for a case that does not exist.
    cases = (pack / "cases.jsonl").read_text(encoding="utf-8").split("\n")
    assert '"customer-rafael-duarte"' in cases[6]
    cases[6] = cases[6].replace('"customer-rafael-duarte"', '"customer-dana-whitfeld"')
    (pack / "cases.jsonl").write_text("\n".join(cases), encoding="utf-8")
    with (pack / "labels.jsonl").open("a", encoding="utf-8") as labels:
        labels.write('{"test_id": "el-41", "label": "negative"}\n')
    report = validate_root(pack, where="ragleaklab_example/leaks", pack="example-leaks")
    printed = [str(p) for p in report.problems] + [report.summary()]
    shown = OUTPUT.search(_text())
    assert shown is not None, "the tutorial lost its pack validate output block"
    assert printed == shown.group("body").split("\n")
