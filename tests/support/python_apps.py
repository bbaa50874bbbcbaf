"""A throwaway module for python target tests to fill with apps (``callable = "MODULE:NAME"``)."""

from __future__ import annotations

import sys
import types
from typing import Any

import pytest
from ragleaklab_plugins.targets.python import PythonTarget


def app_module(monkeypatch: pytest.MonkeyPatch, name: str) -> types.ModuleType:
    """An empty module importable as *name* for one test."""
    module = types.ModuleType(name)
    monkeypatch.setitem(sys.modules, name, module)
    return module


def build(module: types.ModuleType, apps: dict[str, Any], **options: Any) -> PythonTarget:
    """Put *apps* into *module* as attributes, then build the target from *options*."""
    for name, value in apps.items():
        setattr(module, name, value)
    return PythonTarget(**options)


class FakeDoc:
    """What a LangChain Document looks like: page_content, metadata and maybe an id."""

    def __init__(self, text: str, metadata: dict[str, Any], id: str | None = None) -> None:
        self.page_content = text
        self.metadata = metadata
        self.id = id
