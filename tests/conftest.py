"""ragleaklab's own tests use the testing kit it ships for plugin authors."""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator

import pytest
from hypothesis import settings

from ragleaklab_core import _log
from tests.support.fake_rag_server import FakeRagServer

pytest_plugins = ["ragleaklab_core.testing"]

# No deadline on property tests: a deadline is a timed test, and speed is measured by the
# benchmarks (benchmarks/), as ratios in one run. On a loaded 2-core machine an example that
# took 274 ms against the default 200 ms failed a correct test.
settings.register_profile("ragleaklab", deadline=None)
settings.load_profile("ragleaklab")


@pytest.fixture(scope="module")
def shared_server() -> Iterator[FakeRagServer]:
    """A loopback RAG service (tests/support/fake_rag_server.py), one per test module."""
    with FakeRagServer() as server:
        yield server


@pytest.fixture
def server(shared_server: FakeRagServer) -> FakeRagServer:
    """The module's RAG service, with what earlier tests asked of it forgotten."""
    shared_server.clear()
    return shared_server


@pytest.fixture(autouse=True)
def _collect_garbage_after_each_test() -> Iterator[None]:
    """Collect after every test, so that an unclosed socket, file or event loop is reported
    (as an error: ``filterwarnings = error``) by the test that leaked it, not by whichever test
    the garbage collector happens to run in: the suite runs in random order.

    Then freeze what survived, so the next collection scans only what the next test allocates
    (a full collection after each of 1,500 tests over every imported module and cached pack
    would add minutes to the suite)."""
    yield
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def _restore_logging_the_cli_took_over() -> Iterator[None]:
    """A CLI command run in-process owns logging as an application does (root handler, level,
    structlog processors). Give them back after each test, so a library-logging test does not
    depend on which CLI test its worker ran before it (random order, several workers)."""
    root = logging.getLogger()
    handlers, level, processors = root.handlers[:], root.level, _log._PROCESSORS[:]
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    _log._PROCESSORS[:] = processors
