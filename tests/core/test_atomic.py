"""write_atomic: the whole new content or the old file, never a partial file or a stray temp."""

from __future__ import annotations

import os
import stat

import pytest

from ragleaklab_core import _atomic
from ragleaklab_core._atomic import write_atomic


def _names(directory) -> list[str]:
    return sorted(p.name for p in directory.iterdir())


def test_creates_a_new_file(tmp_path):
    target = tmp_path / "report.json"
    write_atomic(target, b'{"a": 1}\n')
    assert target.read_bytes() == b'{"a": 1}\n'
    assert _names(tmp_path) == ["report.json"]


def test_replaces_content_and_leaves_no_temp_file(tmp_path):
    target = tmp_path / "report.json"
    target.write_bytes(b"old content that is longer than the new one\n")
    write_atomic(target, b"new\n")
    assert target.read_bytes() == b"new\n"
    assert _names(tmp_path) == ["report.json"]


def test_empty_and_binary_content(tmp_path):
    target = tmp_path / "blob"
    write_atomic(target, b"")
    assert target.read_bytes() == b""
    data = bytes(range(256)) * 1000
    write_atomic(target, data)
    assert target.read_bytes() == data
    assert _names(tmp_path) == ["blob"]


def test_permissions_follow_the_umask_not_mkstemp(tmp_path):
    target = tmp_path / "report.json"
    old = os.umask(0o022)
    try:
        write_atomic(target, b"x")
    finally:
        os.umask(old)
    assert stat.S_IMODE(target.stat().st_mode) == 0o644


def test_failed_replace_keeps_the_old_file_and_removes_the_temp(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    target.write_bytes(b"old\n")
    seen = []

    def broken_replace(src, dst):
        seen.append((os.fspath(src), os.fspath(dst)))
        assert os.path.exists(src)  # the new content was fully written to the temp file
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(_atomic.os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space left"):
        write_atomic(target, b"new\n")
    [(src, dst)] = seen
    assert dst == os.fspath(target)
    assert os.path.dirname(src) == os.fspath(tmp_path)  # same directory: rename is atomic
    assert not os.path.exists(src)
    assert target.read_bytes() == b"old\n"
    assert _names(tmp_path) == ["report.json"]


def test_failed_write_midway_keeps_the_old_file_and_removes_the_temp(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    target.write_bytes(b"old\n")

    def broken_fsync(fd):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(_atomic.os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="Input/output"):
        write_atomic(target, b"new\n")
    assert target.read_bytes() == b"old\n"
    assert _names(tmp_path) == ["report.json"]


def test_interrupt_keeps_the_old_file_and_removes_the_temp(tmp_path, monkeypatch):
    target = tmp_path / "report.json"
    target.write_bytes(b"old\n")

    def interrupted(src, dst):
        raise KeyboardInterrupt

    monkeypatch.setattr(_atomic.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        write_atomic(target, b"new\n")
    assert target.read_bytes() == b"old\n"
    assert _names(tmp_path) == ["report.json"]


def test_failure_without_an_old_file_leaves_nothing(tmp_path, monkeypatch):
    target = tmp_path / "report.json"

    def broken_replace(src, dst):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(_atomic.os, "replace", broken_replace)
    with pytest.raises(PermissionError):
        write_atomic(target, b"new\n")
    assert _names(tmp_path) == []


def test_missing_directory_is_an_error_not_a_partial_file(tmp_path):
    with pytest.raises(FileNotFoundError):
        write_atomic(tmp_path / "nope" / "report.json", b"x")
    assert _names(tmp_path) == []


# -- write_all: several files, all or nothing --------------------------------------------------


def test_write_all_writes_text_chunks_and_bytes_alike(tmp_path):
    png = bytes(range(256))
    _atomic.write_all(
        [
            (tmp_path / "a.json", "{}\n"),
            (tmp_path / "sub" / "b.txt", iter(["one ", "two\n"])),
            (tmp_path / "c.png", png),
        ]
    )
    assert (tmp_path / "a.json").read_text() == "{}\n"
    assert (tmp_path / "sub" / "b.txt").read_text() == "one two\n"
    assert (tmp_path / "c.png").read_bytes() == png
    assert _names(tmp_path) == ["a.json", "c.png", "sub"]


def test_an_interrupt_between_two_renames_puts_the_first_file_back(tmp_path, monkeypatch):
    (tmp_path / "a").write_bytes(b"old a")
    real_replace = os.replace

    def interrupted(src, dst):
        if os.path.basename(dst) == "b":
            raise KeyboardInterrupt
        return real_replace(src, dst)

    monkeypatch.setattr(_atomic.os, "replace", interrupted)
    with pytest.raises(KeyboardInterrupt):
        _atomic.write_all([(tmp_path / "a", "new a"), (tmp_path / "b", "new b")])
    assert (tmp_path / "a").read_bytes() == b"old a"
    assert _names(tmp_path) == ["a"]  # no b, no temporary, no kept link
