"""The docs say what the tool does: every example of README.md and docs/ runs as shown (sybil,
the rules in tests/support/doc_sessions.py), every built-in plugin is documented, and the README
opens with the two commands CI relies on."""

from __future__ import annotations

import importlib.metadata
import re
import textwrap
import unittest
from pathlib import Path

import pytest

from ragleaklab_core import GROUPS
from tests.support import doc_sessions

ROOT = Path(__file__).resolve().parents[2]


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


def test_the_development_section_names_every_environment_tox_runs():
    """The README says which tox environments CI runs: exactly tox.ini's env_list."""
    import configparser

    tox = configparser.ConfigParser()
    tox.read(ROOT / "tox.ini", encoding="utf-8")
    envs = set()
    for entry in re.findall(r"\w*\{[^}]*\}|[\w-]+", tox["tox"]["env_list"]):
        factors = re.fullmatch(r"(\w*)\{([\w, ]+)\}", entry)
        if factors:
            envs |= {factors.group(1) + f.strip() for f in factors.group(2).split(",")}
        else:
            envs.add(entry)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    sentence = re.search(
        r"`tox` runs every environment CI runs: (.*?)\. `tox -e bench`", readme, re.S
    )
    assert sentence is not None, "the README lost its list of tox environments"
    assert set(re.findall(r"`([\w-]+)`", sentence.group(1))) == envs


# -- every example runs as shown (sybil; the rules are in tests/support/doc_sessions.py) ----------

DOCUMENTS = doc_sessions.documents()


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_the_examples_run_as_shown(path, tmp_path, monkeypatch):
    """Every ``$ `` session and Python block of the page, in order, in one working directory."""
    document = doc_sessions.parse(path)
    state = doc_sessions.DocState(cwd=tmp_path / "work", site=tmp_path / "site")
    state.cwd.mkdir()
    document.namespace[doc_sessions.STATE] = state
    monkeypatch.setenv("SOURCE_DATE_EPOCH", doc_sessions.SOURCE_DATE_EPOCH)
    failures = []
    for example in document.examples():
        try:
            example.evaluate()
        except unittest.SkipTest:
            continue
        except Exception as exc:  # every failing block is reported, not only the first
            failures.append(f"{path.relative_to(ROOT)}:{example.line}: {exc}")
    assert not failures, "\n\n".join(failures)


def test_a_skip_directive_is_followed_by_a_checked_block():
    """``<!-- skip: next -->`` skips the next *checked* block: one before a block that is not
    checked would silently skip a later one."""
    fence = re.compile(r"^[ \t]*```(\w*)\n(.*?)^[ \t]*```", re.S | re.M)
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        for skip in re.finditer(r"^[ \t]*<!-- skip: next", text, flags=re.M):
            block = fence.search(text, skip.end())
            assert block is not None, f"{path.name}: a skip directive with no block after it"
            language, body = block.groups()
            # A block inside a list item is indented; Sybil reads it dedented, as here.
            checked = language == "python" or textwrap.dedent(body).startswith("$ ")
            assert checked, f"{path.name}: the block after {text[skip.start() : skip.end() + 40]!r}"


# -- the matching rule itself ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shown", "printed", "matches"),
    [
        (["a", "b"], ["a", "b"], True),
        (["a"], ["a", "b"], False),
        (["a", "..."], ["a", "b", "c"], True),
        (["a", "...", "c"], ["a", "c"], True),  # ... is any number of lines, none included
        (["...", "c"], ["a", "b"], False),
        (["x ... z"], ["x y z"], True),  # ... inside a line is any text on that line
        (["x ... z"], ["x y", "z"], False),
        (["[1]"], ["[1]"], True),
        ([], [], True),
        ([], ["a"], False),
    ],
)
def test_a_session_output_matches_by_the_documented_rule(shown, printed, matches):
    assert doc_sessions.lines_match(shown, printed) is matches


def test_a_session_is_its_commands_with_the_output_under_each():
    source = "$ echo a \\\n    b\na b\n$ false\n[1]\n"
    commands = doc_sessions.parse_session(source)
    assert [(c.command, c.expected) for c in commands] == [
        ("echo a \\\n    b", ["a b"]),
        ("false", ["[1]"]),
    ]


@pytest.mark.parametrize(
    ("shown", "actual", "problems"),
    [
        ({"a": 1, "b": "..."}, {"a": 1, "b": [1, 2]}, 0),
        ({"a": 1}, {"a": 1, "b": 2}, 1),  # a key not shown is a difference
        ({"a": [1, "..."]}, {"a": [1, 2, 3]}, 0),
        ({"a": [1, "..."]}, {"a": [2, 3]}, 1),
        ({"a": 0.3942}, {"a": 0.39416330243650466}, 0),  # to the digits shown
        ({"a": 0.3941}, {"a": 0.39416330243650466}, 1),
        ({"a": 1.0}, {"a": 1}, 1),
        ({"a": "x: ..."}, {"a": "x: y"}, 0),
    ],
)
def test_a_json_block_matches_by_the_documented_rule(shown, actual, problems):
    assert len(doc_sessions.json_matches(shown, actual)) == problems


def test_json_except_leaves_a_key_unchecked_but_present():
    shown, actual = {"id": "q1", "elapsed_ms": 1.5}, {"id": "q1", "elapsed_ms": 6.48}
    assert doc_sessions.json_matches(shown, actual, unchecked=frozenset({"elapsed_ms"})) == []
    assert doc_sessions.json_matches(shown, actual) != []
    assert doc_sessions.json_matches({"id": "q1"}, actual, unchecked=frozenset({"elapsed_ms"}))


def test_the_reporter_docs_plugins_md_shows_is_the_distribution_tox_installs():
    """docs/plugins.md shows the third-party reporter's files whole, so a reader who copies them
    has what `tox -e thirdparty` installs and tests/thirdparty/test_thirdparty.py runs."""
    text = (ROOT / "docs" / "plugins.md").read_text(encoding="utf-8")
    blocks = re.findall(r"<!-- file: (\S+) -->\n```[\w-]*\n(.*?)\n```\n", text, flags=re.S)
    fixture = "tests/fixtures/ragleaklab-acme-reporter/"
    assert sorted(path for path, _ in blocks) == [
        fixture + "pyproject.toml",
        fixture + "ragleaklab_acme_reporter/__init__.py",
    ]
    for path, body in blocks:
        assert body == (ROOT / path).read_text(encoding="utf-8").rstrip("\n"), path
