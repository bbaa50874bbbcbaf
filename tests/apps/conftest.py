"""Real RAG apps (LangChain, LlamaIndex) wired to the python target and run through the real CLI.

The libraries are test dependencies only (the ``apps`` dependency group; ``tox -e apps``). When
they are missing these tests are skipped, except under ``RLK_APPS=1`` (set by the tox env),
where a missing library is an error: the env that exists to run them must never pass having run
nothing. The app modules (``rlk_app_*.py``) are imported by the tests and by ``ragleaklab run``
in a subprocess, with this directory on the path.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.optional import require, skip_folder

APPS = Path(__file__).resolve().parent
NEEDED = ("langchain_core", "langchain_community", "rank_bm25", "llama_index.core")
MISSING = require(NEEDED, flag="RLK_APPS", group="apps")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    skip_folder(APPS, MISSING, "apps", items)


@pytest.fixture(autouse=True)
def _apps_importable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(APPS))
