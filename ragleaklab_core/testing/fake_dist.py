"""The ``rlk_fake_dist`` fixture: fake an installed distribution for one test."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import pytest

from ragleaklab_core._discovery import (
    GROUPS,
)
from ragleaklab_core.packs.manifest import (
    _load_package,
)

if TYPE_CHECKING:
    pass

T = TypeVar("T")

FakeDist = Callable[..., Path]


@pytest.fixture
def rlk_fake_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDist]:
    """A factory that fakes an installed distribution for the length of one test.

    ``rlk_fake_dist(name, entry_points={group: {ep_name: "module:attr"}}, modules={...},
    version="1.0")`` writes ``<name>.dist-info`` (METADATA and entry_points.txt) and the given
    modules (``{"pkg/mod.py": source}``) into a directory put first on ``sys.path``, and returns
    that directory. Everything is undone after the test, including imported modules. A group
    that is not one of ragleaklab's is refused (a typo in a test) unless ``any_group=True`` (a
    test of what ragleaklab says about a distribution registering under a group that is none).
    """
    root = tmp_path / "fake-site"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    before = set(sys.modules)

    def make(
        name: str,
        *,
        entry_points: Mapping[str, Mapping[str, str]],
        modules: Mapping[str, str] | None = None,
        version: str = "1.0",
        any_group: bool = False,
    ) -> Path:
        unknown = sorted(set(entry_points) - set(GROUPS))
        if unknown and not any_group:
            raise ValueError(f"not ragleaklab groups: {unknown}; expected some of {GROUPS}")
        info = root / f"{name.replace('-', '_')}-{version}.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
        )
        lines = []
        for group, eps in entry_points.items():
            lines.append(f"[{group}]")
            lines.extend(f"{ep} = {target}" for ep, target in eps.items())
        (info / "entry_points.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        for rel, source in (modules or {}).items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source), encoding="utf-8")
        importlib.invalidate_caches()
        _load_package.cache_clear()  # manifests are cached per package name
        return root

    yield make
    _load_package.cache_clear()
    for mod in set(sys.modules) - before:
        file = getattr(sys.modules[mod], "__file__", None) or ""
        if file.startswith(str(root)):
            del sys.modules[mod]
