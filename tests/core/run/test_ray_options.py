"""The Ray executor's options and its worker, without a Ray cluster (tests/ray has those):
``[run.ray]`` validation, the flags, the missing extra, an unreachable address, and
:class:`RayWorker` answering exactly as the local executor does, and reporting what its
built target says of principals for the runner's rule to decide."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import attrs
import pytest

from ragleaklab_core._discovery import TARGETS, load_plugin
from ragleaklab_core.errors import ExecutorUnavailable
from ragleaklab_core.run.executor import Ask, LocalExecutor, PackWork, WorkerSpec
from ragleaklab_core.run.principal import principal_support
from ragleaklab_core.run.ray_executor import RayOptions, RayWorker, check_reachable, ingest_scope
from ragleaklab_core.run.runner import RunSettings, load_pack, run_pack
from tests.support.cli import rlk


def cli(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return rlk("run", *args, cwd=cwd, epoch="0", env=env)


def test_bad_ray_options_are_configuration_errors_at_their_path(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text(
        "[run]\nexecutor = 'ray'\n[run.ray]\nworkers = 0\ncpus_per_worker = 0\n"
        "gpus_per_worker = -1\nbatch_size = 0\n",
        encoding="utf-8",
    )
    done = cli("-c", "c.toml", "-o", "out", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    for field in ("workers", "cpus_per_worker", "gpus_per_worker", "batch_size"):
        assert f"@ $.run.ray.{field}" in done.stderr
    assert not (tmp_path / "out").exists()


def test_an_unknown_executor_is_refused(tmp_path: Path) -> None:
    (tmp_path / "c.toml").write_text("[run]\nexecutor = 'dask'\n", encoding="utf-8")
    done = cli("-c", "c.toml", cwd=tmp_path)
    assert done.returncode == 2
    assert "@ $.run.executor" in done.stderr


def test_ray_flags_need_the_ray_executor(tmp_path: Path) -> None:
    done = cli("--ray-workers", "2", "-o", "out", cwd=tmp_path)
    assert done.returncode == 2
    assert "--ray-* options need --executor ray" in done.stderr


def test_without_the_extra_the_ray_executor_says_how_to_install_it(tmp_path: Path) -> None:
    # A `ray` module that cannot be imported stands for Ray not being installed.
    shadow = tmp_path / "shadow"
    shadow.mkdir()
    (shadow / "ray.py").write_text("raise ImportError('No module named ray')\n", encoding="utf-8")
    done = cli(
        "--executor",
        "ray",
        "-p",
        "sentinel-takeover-safe",
        "--smoke",
        "-o",
        "out",
        cwd=tmp_path,
        PYTHONPATH=os.pathsep.join(filter(None, [str(shadow), os.environ.get("PYTHONPATH")])),
    )
    assert done.returncode == 3, done.stderr
    assert "pip install 'ragleaklab[ray]'" in done.stderr
    assert "ragleaklab plugins" not in done.stderr  # the plugin hint would mislead here
    assert not (tmp_path / "out").exists()


def test_an_address_nobody_listens_on_is_refused_within_the_timeout() -> None:
    with socket.socket() as sock:  # a port just freed: nothing listens on it
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(
        ExecutorUnavailable, match=f"cannot reach the Ray cluster at 127.0.0.1:{port}"
    ):
        check_reachable(f"127.0.0.1:{port}", timeout=2)
    with pytest.raises(ExecutorUnavailable):
        check_reachable(f"ray://127.0.0.1:{port}", timeout=2)
    assert time.monotonic() - started < 10
    check_reachable("auto")  # names no socket: left to Ray


def test_options_and_ingest_scope() -> None:
    from ragleaklab_plugins.targets.http import HttpTarget
    from ragleaklab_plugins.targets.reference import ReferenceTarget

    with pytest.raises(ValueError):
        RayOptions(workers=0)
    assert RayOptions().batch_size == 16
    assert ingest_scope(HttpTarget()) == "system"
    assert ingest_scope(ReferenceTarget()) == "process"
    assert ingest_scope(object()) == "process"


def test_a_worker_answers_a_pack_as_the_local_executor_does() -> None:
    pack = load_pack("sentinel-takeover-safe")
    settings = RunSettings(tags=("smoke",))
    local = run_pack(pack, settings=settings, executor=LocalExecutor())
    expected = {(r.test_id, r.epoch): r.to_dict() for r in local.records}
    spec = WorkerSpec(pack.name, "reference", {}, {}, settings)
    worker = RayWorker(spec, ingest=True, record=True, log_level=None)
    assert worker.setup() == ("ok", None)
    cases = [c for c in pack.obj.cases() if "smoke" in c.tags]
    asks = [Ask(i, i, 0, c) for i, c in enumerate(cases)]
    got: dict[tuple[str, int], dict] = {}
    for start in range(0, len(asks), 7):  # in batches, out of order
        records, stopped = worker.answer(list(reversed(asks[start : start + 7])))
        assert stopped is None
        for seq, record, response in records:
            assert record["test_id"] == asks[seq].case.test_id
            assert response is not None and response["answer"] == record["answer"]
            record.pop("elapsed_ms")
            got[(record["test_id"], record["epoch"])] = record
    for record in expected.values():
        record.pop("elapsed_ms")
    assert got == expected
    assert worker.close() == []


def test_a_worker_whose_ingest_fails_says_so_and_one_that_cannot_load_the_pack_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "rlk_broken_ingest.py").write_text(
        "class BrokenIngest:\n"
        "    def ingest(self, documents):\n"
        "        raise RuntimeError('the index is read-only')\n"
        "    def answer(self, query):\n"
        "        raise AssertionError('never asked')\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = WorkerSpec(
        "sentinel-takeover-safe",
        "reference",
        {},
        {},
        RunSettings(),
    )
    worker = RayWorker(spec, ingest=False, record=False, log_level=None)
    assert worker.setup() == ("ok", None)
    assert worker.close() == []
    missing = WorkerSpec("no-such-pack", "reference", {}, {}, RunSettings())
    worker = RayWorker(missing, ingest=True, record=False, log_level=None)
    status, detail = worker.setup()
    assert status == "build" and "no-such-pack" in (detail or "")
    assert worker.close() == []
    broken = WorkerSpec(
        "sentinel-takeover-safe",
        "python",
        {"callable": "rlk_broken_ingest:BrokenIngest"},
        {},
        RunSettings(),
    )
    worker = RayWorker(broken, ingest=True, record=False, log_level=None)
    status, detail = worker.setup()
    assert status == "ingest" and "ingest failed" in (detail or "")
    assert "the index is read-only" in (detail or "")
    worker.close()


ANONYMOUS_APP = (
    "from ragleaklab_plugins.targets.reference import ReferenceTarget\n"
    "class Anonymous:\n"
    "    def __init__(self):\n"
    "        self.inner = ReferenceTarget()\n"
    "    def ingest(self, documents):\n"
    "        self.inner.ingest(documents)\n"
    "    def answer(self, query):\n"
    "        return self.inner.answer(query)\n"
)


def test_a_worker_reports_what_its_built_target_says_and_the_runner_s_rule_decides(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A class given to the python target is a factory: its app, and whether that app takes a
    # principal, exist only once it is built (on the worker, at ingest).
    (tmp_path / "rlk_anonymous_app.py").write_text(ANONYMOUS_APP, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    options = {"callable": "rlk_anonymous_app:Anonymous"}
    settings = RunSettings(tags=("smoke",))
    spec = WorkerSpec("cross-tenant", "python", options, {}, settings)
    target = load_plugin(TARGETS, "python", options)
    assert principal_support(target) is None  # not known when it is loaded
    worker = RayWorker(spec, ingest=True, record=False, log_level=None)
    assert worker.setup() == ("ok", False)
    assert worker.close() == []

    pack = load_pack("cross-tenant")
    work = PackWork(pack, (), target, (), settings, spec, principal_once_built=True)
    reason = work.stop_once_built(False)
    assert reason is not None
    assert reason.startswith("its cases ask as a principal (the first: 'ct-")
    assert "target 'python' cannot ask as one" in reason
    assert "--exclude cross-tenant" in reason
    # A built target that can carry one, or judges per case, is asked.
    assert work.stop_once_built(True) is None and work.stop_once_built(None) is None
    # Nothing to judge: the runner knew when it was loaded (the plan decided), or no selected
    # case asks as a principal.
    assert attrs.evolve(work, principal_once_built=False).stop_once_built(False) is None
    other = attrs.evolve(work, pack=load_pack("relevance-hijack"))
    assert other.stop_once_built(False) is None
