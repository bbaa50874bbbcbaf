"""A directory where the CLI runs, with fake third-party targets installed.

The fakes are a distribution on ``PYTHONPATH`` (a ``.dist-info`` with entry points and one
module), which is what an install makes visible to ``importlib.metadata``: ``broken`` raises on
some queries (errored cases), ``blind`` never says what it retrieved (unscorable cases),
``unreported`` is the reference RAG that never says what it retrieved (its retrieval values
unscorable, its answers judged), ``vetted`` is the reference RAG that never ingests a poison
document (a system that passes relevance-hijack for the right reason), and any extra targets a
test module adds.
"""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

from tests.support.cli import rlk

FAULTY_TARGETS = '''
from attrs import define, field

from ragleaklab_core import Response
from ragleaklab_core.testing import Reply, ScriptedTarget
from ragleaklab_plugins.targets.reference import ReferenceTarget


@define
class Wrapped:
    """The reference RAG as it is; each fake below changes one thing about it."""

    _inner: ReferenceTarget = field(factory=ReferenceTarget, init=False)

    def ingest(self, documents):
        self._inner.ingest(documents)

    def answer(self, query):
        return self._inner.answer(query)


@define
class Broken(Wrapped):
    """Raises on queries of even length, so some cases error."""

    def answer(self, query):
        if len(query) % 2 == 0:
            raise TimeoutError("no answer in 30 s <b>|</b>")
        return super().answer(query)


@define
class Vetted(Wrapped):
    """The reference RAG behind a vetting step that keeps every poison document out."""

    def ingest(self, documents):
        super().ingest([d for d in documents if d.kind != "poison"])


@define
class Unreported(Wrapped):
    """The reference RAG behind an API that returns the answer alone."""

    def answer(self, query):
        return Response(answer=super().answer(query).answer, retrieved=None)


@define
class Blind(ScriptedTarget):
    """Never says what it retrieved, so retrieval metrics cannot score it."""

    default: Reply | None = Reply("no idea", retrieved=None, metadata={"trace": [1, 2]})
'''


class Workspace:
    """*root*, with the fake targets (and *extra* source, files and entry points) installed."""

    def __init__(
        self,
        root: Path,
        *,
        extra_source: str = "",
        extra_entry_points: Mapping[str, Mapping[str, str]] | None = None,
        extra_files: Mapping[str, str] | None = None,
        paths: tuple[Path, ...] = (),
    ) -> None:
        self.root = root
        site = root / "site"
        info = site / "rlk_test_fakes-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: rlk-test-fakes\nVersion: 1.0\n", "utf-8"
        )
        groups: dict[str, dict[str, str]] = {
            "ragleaklab.targets": {
                "broken": "rlk_test_fakes:Broken",
                "blind": "rlk_test_fakes:Blind",
                "vetted": "rlk_test_fakes:Vetted",
                "unreported": "rlk_test_fakes:Unreported",
            }
        }
        for group, entries in (extra_entry_points or {}).items():
            groups.setdefault(group, {}).update(entries)
        lines = []
        for group, entries in groups.items():
            lines.append(f"[{group}]")
            lines.extend(f"{name} = {target}" for name, target in entries.items())
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n", "utf-8")
        (site / "rlk_test_fakes.py").write_text(FAULTY_TARGETS + extra_source, "utf-8")
        for rel, text in (extra_files or {}).items():  # more packages of the fake distribution
            (site / rel).parent.mkdir(parents=True, exist_ok=True)
            (site / rel).write_text(text.lstrip("\n"), "utf-8")
        self.pythonpath = (site, *paths)

    def cli(
        self,
        *args: str,
        ok: tuple[int, ...] = (0, 1),
        env: Mapping[str, str | None] | None = None,
        hashseed: str | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """``ragleaklab ARGS`` in *root* (:func:`tests.support.cli.rlk`, the fakes importable);
        its exit code must be one of *ok*."""
        return rlk(
            *args, cwd=self.root, pythonpath=self.pythonpath, env=env, hashseed=hashseed, ok=ok
        )
