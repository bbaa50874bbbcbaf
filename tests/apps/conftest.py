"""Real RAG apps (LangChain, LlamaIndex) wired to the python target and run through the real CLI.

The libraries are test dependencies only (the ``apps`` dependency group; ``tox -e apps``). When
they are missing these tests are skipped, except under ``RLK_APPS=1`` (set by the tox env),
where a missing library is an error: the env that exists to run them must never pass having run
nothing. The app modules (``rlk_app_*.py``) are imported by the tests and by ``ragleaklab run``
in a subprocess, with this directory on the path.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

APPS = Path(__file__).resolve().parent
NEEDED = ("langchain_core", "langchain_community", "rank_bm25", "llama_index.core")


def _missing() -> list[str]:
    missing = []
    for name in NEEDED:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:  # the parent package of a dotted name is missing
            found = False
        if not found:
            missing.append(name)
    return missing


MISSING = _missing()
if MISSING and os.environ.get("RLK_APPS") == "1":
    raise ImportError(
        f"RLK_APPS=1 but {', '.join(MISSING)} cannot be imported: install the 'apps' dependency "
        "group (tox -e apps does), or unset RLK_APPS to skip these tests"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not MISSING:
        return
    skip = pytest.mark.skip(reason=f"needs {', '.join(MISSING)} (tox -e apps)")
    for item in items:
        if APPS in item.path.parents:
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def _apps_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(APPS))
