"""Run the examples of README.md and docs/ with sybil, and compare them with what they show.

What is checked (the rules are also in README.md, "Development"):

- A fenced block (```console, ```bash, ```shell, ```sh or ```text) whose first line starts with
  ``$ `` is a shell session. Each ``$ `` command (a line ending in ``\\`` continues it) runs with
  ``sh`` in the document's working directory, and what it prints (stdout and stderr together, in
  the order a terminal shows them) must be the lines shown under it, up to the next ``$ ``. A
  command that exits with a non-zero status shows it as the last line of its output, ``[N]``
  (as cram does). Lines are compared after stripping trailing whitespace; a line that is
  exactly ``...`` stands for any number of lines (none included), and ``...`` inside a line for
  any text on that line (doctest's ELLIPSIS).
- A ```python block runs in the document's namespace (one per document, shared by its blocks in
  order); a block of ``>>>`` examples is a doctest (ELLIPSIS on). A block right after
  ``<!-- file: PATH -->`` or ``<!-- example: NAME/FILE -->`` is checked by the tests that own
  those markers (tests/docs/test_tutorial.py, tests/apps/) and not run here.
- ``<!-- skip: next "why" -->`` (sybil's own directive) skips the next checked block and says
  why; it is for blocks that need what a test run does not have (a running HTTP service, an API
  key, the network, an install from a package index), never for a block whose output is wrong.
- ``<!-- docs-test: copy PATH... -->`` copies files of the checkout into the working directory
  (commands written for "from ragleaklab's checkout").
- ``<!-- docs-test: install PATH -->`` makes the distribution at PATH (in the working
  directory, else in the checkout) count as pip-installed for the rest of the document's
  sessions: its packages go on PYTHONPATH with a ``.dist-info`` holding its entry points, which
  is what an editable install does (a real one would build it with hatchling from an index).
- ``<!-- docs-test: write FILE -->`` right before a code block writes the block to FILE in the
  working directory (a config file shown, then used).
- ``<!-- docs-test: json FILE -->`` right before a ```json block: the block is FILE's content
  (a JSON document, or for a ``.jsonl`` file one line per block line, each matching a line of
  the file), compared as data: objects must have the same keys; the string ``"..."`` matches
  any value, a list ending in ``"..."`` any list that starts with the items shown, and a string
  with ``...`` in it a string as a line would (floats are compared as shown, to the digits shown).
  ``json FILE except KEY...`` does not compare the values of those keys (a time measured, say).

Every document runs in a fresh temporary working directory with ``SOURCE_DATE_EPOCH`` and
``PYTHONHASHSEED`` pinned, ``COLUMNS=80``, ``RAGLEAKLAB_PROGRESS_INTERVAL=0`` (a progress line
comes after a time, not after an amount of work, so no page could show where it falls), and the
``ragleaklab`` of the interpreter running the tests first on PATH.
"""

from __future__ import annotations

import contextlib
import doctest
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import attrs
from sybil import Document, Example, Region, Sybil
from sybil.evaluators.doctest import DocTestEvaluator
from sybil.parsers.abstract.codeblock import AbstractCodeBlockParser
from sybil.parsers.abstract.doctest import DocTestStringParser
from sybil.parsers.markdown import CodeBlockParser, SkipParser
from sybil.parsers.markdown.lexers import FencedCodeBlockLexer

ROOT = Path(__file__).resolve().parents[2]
#: 2026-11-24T00:00:00Z: the date the docs' examples were calibrated on.
SOURCE_DATE_EPOCH = "1795478400"
SESSION_LANGUAGES = r"console|bash|shell|sh|text"
#: Per-command time limit, seconds.
TIMEOUT = 300
STATE = "__docs_test__"
CHECKED_ELSEWHERE = re.compile(r"<!-- (?:file|example): \S+ -->\s*$")
DIRECTIVE = re.compile(r"^[ \t]*<!-- docs-test: (?P<verb>\w+)(?P<args>[^\n]*?) -->[ \t]*\n", re.M)
NEXT_BLOCK = re.compile(r"[ \t]*```(?P<language>[\w-]*)\n(?P<body>.*?)\n[ \t]*```", re.S)


@attrs.define
class DocState:
    """What the examples of one document share: its working directory and installs."""

    cwd: Path
    site: Path
    pythonpath: list[str] = attrs.Factory(list)

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]),
            SOURCE_DATE_EPOCH=SOURCE_DATE_EPOCH,
            PYTHONHASHSEED="0",
            PYTHONUNBUFFERED="1",
            PYTHONUTF8="1",
            COLUMNS="80",
            LC_ALL="C.UTF-8",
            RAGLEAKLAB_PROGRESS_INTERVAL="0",
        )
        env.pop("PYTHONPATH", None)
        if self.pythonpath:
            env["PYTHONPATH"] = os.pathsep.join(self.pythonpath)
            # stevedore caches entry points per sys.path: keep this one's out of ~/.cache
            env["XDG_CACHE_HOME"] = str(self.site / "cache")
        return env


# -- matching -------------------------------------------------------------------------------------


def _line_matches(pattern: str, line: str) -> bool:
    if "..." not in pattern:
        return pattern == line
    regex = ".*".join(re.escape(part) for part in pattern.split("..."))
    return re.fullmatch(regex, line, re.S) is not None


def lines_match(expected: list[str], actual: list[str]) -> bool:
    """Whether *actual* is what *expected* shows: a ``...`` line is any number of lines."""
    # reach[j]: expected[:i] can match actual[:j].
    reach = [True] + [False] * len(actual)
    for pattern in expected:
        if pattern == "...":
            seen = False
            for j in range(len(reach)):
                seen = seen or reach[j]
                reach[j] = seen
        else:
            reach = [False] + [
                reach[j] and _line_matches(pattern, actual[j]) for j in range(len(actual))
            ]
    return reach[-1]


def normalise(text: str) -> list[str]:
    """Lines without trailing whitespace, without trailing blank lines."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _explain(expected: list[str], actual: list[str]) -> str:
    shown = "\n".join(f"    {line}" for line in expected) or "    (nothing)"
    printed = "\n".join(f"    {line}" for line in actual) or "    (nothing)"
    return f"  the doc shows:\n{shown}\n  it printed:\n{printed}"


# -- shell sessions -------------------------------------------------------------------------------


@attrs.frozen
class Command:
    line: int  # 0-based, within the block
    command: str
    expected: list[str]


def parse_session(source: str) -> list[Command]:
    """The ``$ `` commands of a session block and the output shown under each."""
    commands: list[Command] = []
    lines = source.rstrip("\n").split("\n")
    i = 0
    while i < len(lines):
        if not lines[i].startswith("$ "):
            raise ValueError(f"line {i + 1} of a session is neither a command nor its output")
        start, parts = i, [lines[i][2:]]
        while parts[-1].endswith("\\") and i + 1 < len(lines):
            i += 1
            parts.append(lines[i])
        i += 1
        output_start = i
        while i < len(lines) and not lines[i].startswith("$ "):
            i += 1
        commands.append(
            Command(start, "\n".join(parts), normalise("\n".join(lines[output_start:i])))
        )
    return commands


def run_command(command: str, state: DocState) -> list[str]:
    """What *command* prints, stdout and stderr merged, then ``[N]`` for a non-zero status."""
    done = subprocess.run(
        ["sh", "-c", command],
        cwd=state.cwd,
        env=state.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        timeout=TIMEOUT,
        check=False,
    )
    lines = normalise(done.stdout.decode("utf-8", errors="replace"))
    if done.returncode:
        lines.append(f"[{done.returncode}]")
    return lines


def evaluate_session(example: Example) -> str | None:
    state: DocState = example.namespace[STATE]
    problems = []
    for command in parse_session(str(example.parsed)):
        actual = run_command(command.command, state)
        if not lines_match(command.expected, actual):
            line = example.line + 1 + command.line
            problems.append(
                f"line {line}: $ {command.command}\n{_explain(command.expected, actual)}"
            )
    return "\n".join(problems) or None


class SessionParser(AbstractCodeBlockParser):
    """Fenced blocks whose first line starts with ``$ ``."""

    language = "console"

    def __init__(self) -> None:
        super().__init__(
            [
                FencedCodeBlockLexer(
                    language=SESSION_LANGUAGES,
                    mapping={"language": "arguments", "source": "source"},
                )
            ],
            evaluator=evaluate_session,
        )

    def __call__(self, document: Document) -> Iterable[Region]:
        for region in self.lexers(document):
            if str(region.lexemes["source"]).startswith("$ "):
                region.parsed = region.lexemes["source"]
                region.evaluator = evaluate_session
                yield region


# -- python ---------------------------------------------------------------------------------------


@contextlib.contextmanager
def _in(path: Path) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _in_working_directory(evaluator: Any) -> Any:
    def evaluate(example: Example) -> Any:
        __tracebackhide__ = True
        with _in(example.namespace[STATE].cwd):
            return evaluator(example)

    return evaluate


def _checked_elsewhere(document: Document, region: Region) -> bool:
    before = document.text[: region.start].rstrip("\n").rsplit("\n", 1)[-1]
    return CHECKED_ELSEWHERE.search(before) is not None


class PythonParser:
    """```python blocks, run in the document's namespace; ``>>>`` blocks as doctests."""

    def __init__(self) -> None:
        self.code = CodeBlockParser("python")
        self.doctests = DocTestStringParser(
            DocTestEvaluator(doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        )

    def __call__(self, document: Document) -> Iterable[Region]:
        from sybil.evaluators.python import PythonEvaluator

        python = _in_working_directory(PythonEvaluator())
        for region in self.code(document):
            if _checked_elsewhere(document, region):
                continue
            source = region.parsed
            if str(source).startswith(">>>"):
                for test in self.doctests(source, document.path):
                    test.adjust(region, source)
                    test.evaluator = _in_working_directory(test.evaluator)
                    yield test
            else:
                region.evaluator = python
                yield region


# -- directives -----------------------------------------------------------------------------------


def _resolve(path: str, state: DocState) -> Path:
    here = state.cwd / path
    return here if here.exists() else ROOT / path


def copy(paths: list[str], state: DocState) -> None:
    for path in paths:
        source, dest = ROOT / path, state.cwd / path
        if source.is_dir():
            shutil.copytree(
                source, dest, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
            )
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest)


def install(path: str, state: DocState) -> None:
    """Make the distribution at *path* importable, with its entry points, as an editable
    install would: its package directories' parents on PYTHONPATH, and a ``.dist-info``."""
    root = _resolve(path, state)
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    project = pyproject["project"]
    name, version = project["name"], project["version"]
    wheel = pyproject.get("tool", {}).get("hatch", {}).get("build", {}).get("targets", {})
    packages = wheel.get("wheel", {}).get("packages", [])
    for package in packages or [project["name"].replace("-", "_")]:
        parent = str((root / package).parent)
        if parent not in state.pythonpath:
            state.pythonpath.append(parent)
    info = state.site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    lines = []
    for group, entries in project.get("entry-points", {}).items():
        lines.append(f"[{group}]")
        lines.extend(f"{entry} = {target}" for entry, target in entries.items())
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    if str(state.site) not in state.pythonpath:
        state.pythonpath.insert(0, str(state.site))


_ELLIPSIS = "..."


def json_matches(
    shown: Any, actual: Any, where: str = "$", unchecked: frozenset[str] = frozenset()
) -> list[str]:
    """Where *actual* differs from *shown* (see the module docstring for the rules); the values
    of the keys in *unchecked* are not compared."""
    if shown == _ELLIPSIS:
        return []
    if isinstance(shown, dict):
        if not isinstance(actual, dict):
            return [f"{where}: shown an object, is {json.dumps(actual)[:80]}"]
        problems = []
        if list(shown) != list(actual):
            missing = [k for k in actual if k not in shown]
            extra = [k for k in shown if k not in actual]
            if missing or extra:
                problems.append(f"{where}: keys not shown {missing}, shown but absent {extra}")
            else:
                problems.append(f"{where}: keys in another order: {list(actual)}")
        for key in shown:
            if key in actual and key not in unchecked:
                problems += json_matches(shown[key], actual[key], f"{where}.{key}", unchecked)
        return problems
    if isinstance(shown, list):
        if not isinstance(actual, list):
            return [f"{where}: shown a list, is {json.dumps(actual)[:80]}"]
        if shown and shown[-1] == _ELLIPSIS:
            head = shown[:-1]
            if len(actual) < len(head):
                return [f"{where}: {len(actual)} items, at least {len(head)} shown"]
            actual = actual[: len(head)]
            shown = head
        elif len(shown) != len(actual):
            return [f"{where}: {len(actual)} items, {len(shown)} shown"]
        problems = []
        for i, (s, a) in enumerate(zip(shown, actual, strict=True)):
            problems += json_matches(s, a, f"{where}[{i}]", unchecked)
        return problems
    if isinstance(shown, str) and isinstance(actual, str):
        return [] if _line_matches(shown, actual) else [f"{where}: shown {shown!r}, is {actual!r}"]
    if isinstance(shown, float) and isinstance(actual, float) and not isinstance(actual, bool):
        digits = len(repr(shown).split(".")[1]) if "." in repr(shown) else 0
        if round(actual, digits) == shown:
            return []
    if shown == actual and type(shown) is type(actual):
        return []
    return [f"{where}: shown {json.dumps(shown)}, is {json.dumps(actual)}"]


def check_json(
    file: str, body: str, state: DocState, unchecked: frozenset[str] = frozenset()
) -> str | None:
    path = state.cwd / file
    if not path.is_file():
        return f"{file} does not exist (an earlier block writes it)"
    text = path.read_text(encoding="utf-8")
    if file.endswith(".jsonl"):
        rows = [json.loads(line) for line in text.splitlines() if line.strip()]
        problems = []
        for n, line in enumerate(body.splitlines(), 1):
            shown = json.loads(line)
            attempts = [json_matches(shown, row, unchecked=unchecked) for row in rows]
            if not any(not a for a in attempts):
                best = min(attempts, key=len)
                problems.append(f"block line {n} matches no line of {file}: {'; '.join(best)}")
        return "\n".join(problems) or None
    problems = json_matches(json.loads(body), json.loads(text), unchecked=unchecked)
    return "\n".join(f"{file}: {p}" for p in problems) or None


class DirectiveParser:
    """``<!-- docs-test: copy|install|write|json ... -->``."""

    def __call__(self, document: Document) -> Iterable[Region]:
        for m in DIRECTIVE.finditer(document.text):
            verb, args = m.group("verb"), m.group("args").split()
            if verb in ("json", "write"):
                block = NEXT_BLOCK.match(document.text, m.end())
                if (
                    block is None
                    or not args
                    or (verb == "write" and len(args) != 1)
                    or (len(args) > 1 and args[1] != "except")
                    or (verb == "json") != (block["language"] == "json")
                ):
                    raise ValueError(f"{m.group().strip()!r} must come right before a code block")
                yield Region(m.start(), block.end(), (verb, args, block.group("body")), _directive)
            elif verb in ("copy", "install") and args:
                yield Region(m.start(), m.end(), (verb, args, None), _directive)
            else:
                raise ValueError(f"unknown docs-test directive: {m.group().strip()!r}")


def _directive(example: Example) -> str | None:
    verb, args, body = example.parsed
    state: DocState = example.namespace[STATE]
    if verb == "copy":
        copy(args, state)
    elif verb == "install":
        for path in args:
            install(path, state)
    elif verb == "write":
        path = state.cwd / args[0]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body + "\n", encoding="utf-8")
    else:
        return check_json(args[0], body, state, frozenset(args[2:]))
    return None


SYBIL = Sybil(
    parsers=[SessionParser(), PythonParser(), DirectiveParser(), SkipParser()],
    name="docs",
)


def documents() -> list[Path]:
    """README.md and every page under docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def parse(path: Path) -> Document:
    return SYBIL.parse(path)
