"""Test helpers for plugin authors: an opt-in pytest plugin.

Enable it in your plugin's test suite with ``pytest_plugins = ["ragleaklab_core.testing"]`` in
``conftest.py`` (it is not registered under ``pytest11``: it costs nothing unless asked for). It
gives you:

- :func:`assert_plugin_contract`: load an installed plugin by name exactly as ``ragleaklab`` does
  (same loader, same checks) and return it, failing with the loader's own message;
- the ``rlk_fake_dist`` fixture: a factory that fakes an installed distribution with entry points
  and modules, for tests of discovery that must not pip-install anything.
"""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from ragleaklab_core._discovery import GROUPS, LoadedPlugin, load_plugin
from ragleaklab_core.manifest import _load_package

FakeDist = Callable[..., Path]


def assert_plugin_contract(
    group: str, name: str, options: Mapping[str, Any] | None = None
) -> LoadedPlugin:
    """Load *name* from *group* through ragleaklab's own loader and return it.

    Fails the test (``pytest.fail``) with the loader's message when the plugin is missing, does
    not import, is not an attrs class/dataclass, cannot be built from *options* or lacks a method
    of its interface.

    .. versionadded:: 0.1
    """
    from ragleaklab_core.errors import RagleaklabError

    try:
        return load_plugin(group, name, options)
    except RagleaklabError as exc:
        pytest.fail(f"{group}:{name} does not honour the plugin contract:\n{exc}", pytrace=False)


def _reset_stevedore_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    # stevedore memoises entry points for the life of the process (per namespace on the manager
    # class, and per sys.path tuple in its cache); a faked dist would stay invisible without this.
    from stevedore import ExtensionManager, _cache

    monkeypatch.setattr(ExtensionManager, "ENTRY_POINT_CACHE", {})
    monkeypatch.setattr(_cache._c, "_internal", {})


@pytest.fixture
def rlk_fake_dist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeDist]:
    """A factory that fakes an installed distribution for the length of one test.

    ``rlk_fake_dist(name, entry_points={group: {ep_name: "module:attr"}}, modules={...},
    version="1.0")`` writes ``<name>.dist-info`` (METADATA and entry_points.txt) and the given
    modules (``{"pkg/mod.py": source}``) into a directory put first on ``sys.path``, and returns
    that directory. Everything is undone after the test, including imported modules.
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
    ) -> Path:
        unknown = sorted(set(entry_points) - set(GROUPS))
        if unknown:
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
        _reset_stevedore_cache(monkeypatch)
        _load_package.cache_clear()  # manifests are cached per package name
        return root

    yield make
    _load_package.cache_clear()
    for mod in set(sys.modules) - before:
        file = getattr(sys.modules[mod], "__file__", None) or ""
        if file.startswith(str(root)):
            del sys.modules[mod]


__all__ = ["assert_plugin_contract", "rlk_fake_dist"]
