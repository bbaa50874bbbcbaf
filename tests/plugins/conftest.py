"""Fixtures for the built-in plugins' tests."""

from __future__ import annotations

import sys

import pytest


@pytest.fixture(autouse=True)
def _restore_sys_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The python target puts the current directory on sys.path; keep that from leaking."""
    monkeypatch.setattr(sys, "path", list(sys.path))
