"""A rendering that cannot be written never leaves the output directory disagreeing with the exit
code, and never leaves a journal that blocks the next run without saying how to go on (issue 26,
class 7).

Refused before the run when it can be known (exit 2, nothing asked, nothing written): a rendering
on a directory, in a folder under a file, on the run's own report.json, runs.jsonl or journal, on
an input of the run. When it fails only at write time (a directory or a file appears where the
rendering goes while the cases are asked; the disk fills up), report.json and runs.jsonl stay as
they were, the message says nothing was written and how to finish (``--resume``), the next plain
run says the same, and ``--resume`` finishes without asking the service again.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest

from ragleaklab_core import RunRequest, RunSession
from ragleaklab_core.errors import InputError
from tests.support.cli import rlk
from tests.support.fake_rag_server import FakeRagServer, Seen

PACK = "relevance-hijack"


class MeddlingServer(FakeRagServer):
    """The loopback service; on the first question it runs :attr:`meddle` (which puts something
    where the run's rendering will go)."""

    meddle: Any = None

    def handle(self, seen: Seen) -> tuple[int, dict[str, str], Any]:
        if seen.path == "/simple" and self.meddle is not None:
            meddle, self.meddle = self.meddle, None
            meddle()
        return super().handle(seen)


@pytest.fixture(scope="module")
def meddling():
    with MeddlingServer() as server:
        yield server


@pytest.fixture
def service(meddling):
    meddling.clear()
    meddling.meddle = None
    return meddling


def target_config(tmp_path: Path, server: FakeRagServer) -> str:
    path = tmp_path / "target.toml"
    path.write_text(
        '[target]\nname = "http"\n\n[target.options]\n'
        f'url = "{server.url("/simple")}"\nretries = 0\n'
        f'ingest_url = "{server.url("/ingest")}"\nreset_url = "{server.url("/reset")}"\n',
        encoding="utf-8",
    )
    return str(path)


def snapshot(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


# -- refused before anything is asked -----------------------------------------------------------


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--junit", "o/report.json"], "the run's own report.json"),
        (["--sarif", "./o/runs.jsonl"], "the run's own runs.jsonl"),
        (["--markdown", "o/../o/runs.journal.json"], "the run's own runs.journal.json"),
        (["--html", "o/runs.jsonl.partial"], "the run's own runs.jsonl.partial"),
        (["--report", "junit=o/report.json"], "the run's own report.json"),
        (["--junit", "target.toml"], "the --config file"),
        (["--junit", "afile/r.xml"], "afile is a file, not a directory"),
        (["--markdown", "afile/deeper/r.md"], "afile is a file, not a directory"),
        (["--html", "adir"], "is a directory"),
        (["--report", "html=adir"], "is a directory"),
        (["-o", "afile/o"], "afile is a file, not a directory"),
        (["--junit", "o/r.xml", "--markdown", "o/r.xml"], "named twice"),
    ],
)
def test_an_output_that_cannot_be_written_is_refused_before_anything_is_asked(
    tmp_path, service, flags, said
):
    (tmp_path / "afile").write_text("a file\n", encoding="utf-8")
    (tmp_path / "adir").mkdir()
    config = target_config(tmp_path, service)
    before = snapshot(tmp_path)
    out = rlk("run", "-c", config, "-p", PACK, "--smoke", "-o", "o", *flags, cwd=tmp_path)
    assert out.returncode == 2, out.stdout + out.stderr
    assert said in out.stderr
    assert "Traceback" not in out.stderr
    # The flag is named (--report junit=FILE may be named as its shorthand, --junit FILE).
    named = flags[0] if flags[0] != "--report" else flags[1].partition("=")[0]
    assert named in out.stderr
    assert not service.seen  # nothing was asked
    assert snapshot(tmp_path) == before  # nothing written: no journal, no report


# -- failing only at write time ----------------------------------------------------------------


@pytest.mark.parametrize("where", ["a directory at the file", "a file at its folder"])
def test_a_rendering_failing_at_write_time_changes_nothing_and_resume_finishes(
    tmp_path, service, where
):
    config = target_config(tmp_path, service)
    # Another time in the first report.json: a replaced one would show.
    first = rlk("run", "-c", config, "-p", PACK, "--smoke", "-o", "o", cwd=tmp_path, epoch="1")
    assert first.returncode in (0, 1), first.stdout + first.stderr
    earlier = snapshot(tmp_path / "o")
    assert service.hits["/simple"] > 0

    rendering = tmp_path / ("r.xml" if where.startswith("a directory") else "sub/r.xml")
    if where.startswith("a directory"):
        service.meddle = lambda: rendering.mkdir()  # the rename over it will fail
    else:
        service.meddle = lambda: (tmp_path / "sub").write_text("x\n", encoding="utf-8")
    failed = rlk(
        "run", "-c", config, "-p", PACK, "--smoke", "-o", "o", "--junit", str(rendering),
        "--markdown", "o/r.md", cwd=tmp_path,
    )  # fmt: skip
    assert service.meddle is None  # the cases were asked, and the meddling happened
    assert failed.returncode == 2, failed.stdout + failed.stderr
    assert "Traceback" not in failed.stderr
    assert "cannot write" in failed.stderr and rendering.as_posix() in failed.stderr
    assert "nothing was written" in failed.stderr and "--resume" in failed.stderr
    assert "wrote" not in failed.stdout  # no summary of files that are not there
    # report.json and runs.jsonl are the first run's, no other rendering slipped through,
    # and the answers are kept.
    now = snapshot(tmp_path / "o")
    assert {k: v for k, v in now.items() if not k.startswith("runs.j")} == {
        k: v for k, v in earlier.items() if not k.startswith("runs.j")
    }
    assert now["runs.jsonl"] == earlier["runs.jsonl"]
    assert "r.md" not in now and not any(".tmp" in k or ".kept" in k for k in now)
    assert {"runs.journal.json", "runs.jsonl.partial"} <= set(now)

    # The next plain run says the same: --resume (or --restart); it writes and asks nothing.
    again = rlk("run", "-c", config, "-p", PACK, "--smoke", "-o", "o", cwd=tmp_path)
    assert again.returncode == 2 and "--resume" in again.stderr, again.stderr
    assert snapshot(tmp_path / "o") == now

    # Fixed, --resume finishes without asking a question again, and the files agree with it.
    if rendering.is_dir():
        rendering.rmdir()
    else:
        (tmp_path / "sub").unlink()
    asked_before = service.hits["/simple"]
    done = rlk(
        "run", "-c", config, "-p", PACK, "--smoke", "-o", "o", "--junit", str(rendering),
        "--markdown", "o/r.md", "--resume", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert service.hits["/simple"] == asked_before
    report = json.loads((tmp_path / "o" / "report.json").read_text(encoding="utf-8"))
    assert report["exit_code"] == done.returncode
    assert rendering.is_file() and (tmp_path / "o" / "r.md").is_file()
    assert not (tmp_path / "o" / "runs.journal.json").exists()


# -- in process: the session's write step -----------------------------------------------------


def _session(tmp_path: Path, **renderings: Path) -> RunSession:
    return RunSession(
        RunRequest(packs=(PACK,), smoke=True, out=tmp_path / "o", renderings=renderings)
    )


@pytest.mark.parametrize("failing", ["runs.jsonl", "report.json", "r.xml", "r.md"])
def test_a_full_disk_at_any_file_writes_none_of_them(tmp_path, monkeypatch, failing):
    import ragleaklab_core._atomic as atomic

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1")  # a replaced report.json would show
    first = _session(tmp_path).run()
    earlier = snapshot(tmp_path / "o")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "2")
    real = os.fsync

    def full(fd: int) -> None:
        # The disk fills while the failing file is written (its temporary is open on fd).
        if os.readlink(f"/proc/self/fd/{fd}").rsplit("/", 1)[-1].startswith(f".{failing}."):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(fd)

    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to tell the files apart")
    monkeypatch.setattr(atomic.os, "fsync", full)
    session = _session(tmp_path, junit=tmp_path / "o" / "r.xml", markdown=tmp_path / "o" / "r.md")
    with pytest.raises(InputError) as raised:
        session.run()
    message = str(raised.value)
    assert "No space left on device" in message and failing in message
    assert "nothing was written" in message and "--resume" in message
    now = snapshot(tmp_path / "o")
    assert now["report.json"] == earlier["report.json"]
    assert now["runs.jsonl"] == earlier["runs.jsonl"]
    assert "r.xml" not in now and "r.md" not in now
    assert not any(name.startswith(".") for name in now)  # no temporary left behind
    monkeypatch.setattr(atomic.os, "fsync", real)
    # Resumed, the same request finishes, and its verdict is the first run's.
    resumed = RunSession(
        RunRequest(
            packs=(PACK,),
            smoke=True,
            out=tmp_path / "o",
            resume=True,
            renderings={"junit": tmp_path / "o" / "r.xml"},
        )
    ).run()
    assert resumed.exit_code == first.exit_code
    assert (tmp_path / "o" / "r.xml").is_file()


def test_a_rename_that_fails_puts_back_what_the_earlier_ones_replaced(tmp_path, monkeypatch):
    import ragleaklab_core._atomic as atomic

    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    a.write_text("old a\n")
    b.write_text("old b\n")
    real = os.replace

    def refuse_c(src: Any, dst: Any) -> None:
        if Path(dst) == c:
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", refuse_c)
    with pytest.raises(InputError, match="cannot write"):
        atomic.write_all([(a, "new a\n"), (b, ["new ", "b\n"]), (c, "new c\n")])
    monkeypatch.undo()
    assert a.read_text() == "old a\n" and b.read_text() == "old b\n" and not c.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]  # no temporary, no link


def test_report_never_renders_over_the_report_it_reads(tmp_path):
    first = _session(tmp_path).run()
    assert first.exit_code in (0, 1)
    before = snapshot(tmp_path / "o")
    for target in ("o/report.json", "./o/../o/report.json"):
        out = rlk("report", "o", "--format", "markdown", "-o", target, cwd=tmp_path)
        assert out.returncode == 2 and "is the file the report is read from" in out.stderr
    assert snapshot(tmp_path / "o") == before
