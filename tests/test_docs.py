"""Every built-in plugin is documented; the README opens with the two commands CI relies on."""

from __future__ import annotations

import importlib.metadata
import re
from pathlib import Path

import pytest

from ragleaklab_core import GROUPS

ROOT = Path(__file__).resolve().parents[1]


def _builtin(group: str) -> list[importlib.metadata.EntryPoint]:
    return [
        ep
        for ep in importlib.metadata.entry_points(group=group)
        if ep.dist is not None and ep.dist.metadata["Name"] == "ragleaklab"
    ]


@pytest.mark.parametrize("group", GROUPS)
def test_every_builtin_is_documented(group):
    text = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    for ep in _builtin(group):
        row = f"| `{group}` | `{ep.name}` | `{ep.value}` |"
        assert row in text, f"{group}:{ep.name} is missing from docs/plugins.md"


def test_readme_opens_with_install_and_test_commands_and_ci_runs_the_second():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```bash\n(.*?)\n```", readme, flags=re.S)
    assert "ragleaklab calibrate" in blocks[0] and "pip install" in blocks[0]
    assert "tox" in blocks[1]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert blocks[1].strip() in ci


def test_relative_links_in_the_docs_point_at_files_that_exist():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    broken = []
    for page in pages:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if "://" in target:
                continue
            if not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, broken
