"""Progress while packs run: a bar on a terminal, a plain line at a steady interval elsewhere.

The interval logic runs on a fake clock (no sleeping): when lines come, what they say, that a
run shorter than the interval prints none. One real run checks the whole path: the environment
variable, lines on stderr only, the summary on stdout unchanged.
"""

from __future__ import annotations

import io
import json
import re
import time
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragleaklab_core.cli._progress import (
    DEFAULT_INTERVAL,
    INTERVAL_ENV,
    ProgressLines,
    TerminalBar,
    duration,
    interval_from,
    progress_for,
)
from ragleaklab_core.errors import ConfigError
from ragleaklab_core.reporting import console
from tests.support.cli import rlk

LINE = re.compile(
    r"^progress: (?P<pack>\S+) (?P<done>\d+)/(?P<total>\d+) answers, (?P<rate>[\d.]+)/s, "
    r"(?P<errors>\d+) errored, (?P<elapsed>\S+) elapsed$"
)


class Clock:
    """A monotonic clock the test moves."""

    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def pack(name: str) -> SimpleNamespace:
    return SimpleNamespace(name=name)


def record(error: bool = False, resumed: bool = False) -> SimpleNamespace:
    return SimpleNamespace(error={"message": "x"} if error else None, resumed=resumed)


def reporter(interval: float = 10.0) -> tuple[ProgressLines, Clock, io.StringIO]:
    clock, stream = Clock(), io.StringIO()
    return ProgressLines(interval, stream=stream, clock=clock, ticker=False), clock, stream


def test_a_run_shorter_than_the_interval_prints_nothing():
    lines, clock, stream = reporter(10.0)
    lines.start(pack("a"), 100)
    for _ in range(100):
        clock.now += 0.099  # 9.9 s in all
        lines.advance(record())
    lines.finish()
    assert stream.getvalue() == ""


def test_a_line_says_the_pack_answers_rate_errors_and_elapsed_time():
    lines, clock, stream = reporter(10.0)
    lines.start(pack("first"), 4)
    clock.now += 6
    for error in (False, True, False, False):
        lines.advance(record(error))
    lines.start(pack("second"), 700)
    for n in range(50):
        clock.now += 0.125  # the first beat (10 s after the run began) comes at its 32nd answer
        lines.advance(record(error=n in (3, 7)))
    assert stream.getvalue() == "progress: second 32/700 answers, 8.0/s, 2 errored, 10s elapsed\n"
    lines.finish()
    lines.tick()
    assert stream.getvalue().count("\n") == 1  # nothing after finish


def test_lines_keep_a_steady_beat_and_skip_the_beats_missed():
    lines, clock, stream = reporter(10.0)
    lines.start(pack("p"), 1000)
    clock.now += 10
    lines.tick()  # on the beat
    clock.now += 9.5
    lines.tick()  # not yet
    clock.now += 0.5
    lines.advance(record())  # 20 s
    clock.now += 35  # 55 s: one line, not the three beats missed
    lines.tick()
    lines.tick()
    clock.now += 5  # 60 s: the next beat of the grid, not 65 s
    lines.tick()
    elapsed = [LINE.match(line)["elapsed"] for line in stream.getvalue().splitlines()]
    assert elapsed == ["10s", "20s", "55s", "1m00s"]


def test_answers_taken_from_an_interrupted_run_are_counted_but_not_in_the_rate():
    lines, clock, stream = reporter(1.0)
    lines.start(pack("p"), 10)
    for _ in range(6):
        lines.advance(record(resumed=True))
    clock.now += 2
    lines.advance(record())
    line = LINE.match(stream.getvalue().strip())
    assert (line["done"], line["rate"]) == ("7", "0.5")


@settings(max_examples=200, deadline=None)
@given(
    interval=st.sampled_from([0.5, 1.0, 3.0, 10.0]),
    steps=st.lists(st.integers(min_value=0, max_value=80), max_size=60),
)
def test_one_line_per_beat_reached_by_an_answer(interval, steps):
    """Property: with answers at times t_1 <= t_2 <= ... (quarter seconds, exact in binary),
    the lines printed are one per beat k*interval (k >= 1) that some answer reached, the first
    answer at or after it, in order: never two for one beat, never one before its beat."""
    lines, clock, stream = reporter(interval)
    start = clock.now
    lines.start(pack("p"), len(steps))
    times = []
    for step in steps:
        clock.now += step / 4
        times.append(clock.now - start)
        lines.advance(record())
    beats = sorted({int(t // interval) for t in times if t >= interval})
    printed = stream.getvalue().splitlines()
    assert len(printed) == len(beats)
    # Each line is printed by the first answer at or past a new beat.
    done = [int(LINE.match(line)["done"]) for line in printed]
    expected, last = [], 0
    for n, t in enumerate(times, 1):
        beat = int(t // interval)
        if t >= interval and beat > last:
            expected.append(n)
            last = beat
    assert done == expected


def test_the_ticker_prints_while_no_answer_comes():
    """With the timer thread (real time, a short interval): lines come with no answer at all."""
    stream = io.StringIO()
    lines = ProgressLines(0.02, stream=stream)
    lines.start(pack("stuck"), 5)
    deadline = 200
    while stream.getvalue().count("\n") < 2 and deadline:
        deadline -= 1
        time.sleep(0.01)
    lines.finish()
    printed = stream.getvalue().splitlines()
    assert len(printed) >= 2, printed
    assert all(line.startswith("progress: stuck 0/5 answers, 0.0/s, 0 errored") for line in printed)
    count = len(printed)
    time.sleep(0.1)
    assert len(stream.getvalue().splitlines()) == count  # finish() stopped it


@pytest.mark.parametrize(
    ("value", "interval"),
    [(None, DEFAULT_INTERVAL), ("", DEFAULT_INTERVAL), ("0", 0.0), ("2.5", 2.5), (" 30 ", 30.0)],
)
def test_the_interval_comes_from_the_environment(value, interval):
    environ = {} if value is None else {INTERVAL_ENV: value}
    assert interval_from(environ) == interval


@pytest.mark.parametrize("value", ["soon", "-1", "nan", "inf", "1e999", "10s"])
def test_a_malformed_interval_is_a_config_error_naming_the_variable(value):
    with pytest.raises(ConfigError) as caught:
        interval_from({INTERVAL_ENV: value})
    assert INTERVAL_ENV in str(caught.value) and repr(value) in str(caught.value)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_terminal_gets_a_bar_a_log_gets_lines_or_nothing():
    assert isinstance(progress_for(Terminal(), {INTERVAL_ENV: "0"}), TerminalBar)
    lines = progress_for(io.StringIO(), {})
    assert isinstance(lines, ProgressLines) and lines.interval == DEFAULT_INTERVAL
    assert progress_for(io.StringIO(), {INTERVAL_ENV: "0"}) is None


def test_the_bar_counts_answers_and_errors():
    stream = Terminal()
    bar = TerminalBar(stream)
    bar.start(pack("bar-pack"), 3)
    for error in (False, True, False):
        bar.advance(record(error))
    bar.finish()
    drawn = stream.getvalue().split("\r")[-1]
    assert "bar-pack" in drawn and "3/3" in drawn and "1 errored" in drawn


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0.4, "0s"), (59.9, "59s"), (60, "1m00s"), (3599, "59m59s"), (3720, "1h02m")],
)
def test_durations_read_short(seconds, shown):
    assert duration(seconds) == shown


def test_a_real_run_prints_progress_lines_on_stderr_only(tmp_path):
    done = rlk(
        "run", "-p", "relevance-hijack", "-o", "out", cwd=tmp_path, env={INTERVAL_ENV: "0.05"}
    )
    assert done.returncode == 1, done.stderr
    lines = [LINE.match(line) for line in done.stderr.splitlines()]
    assert lines and all(lines), done.stderr
    assert {m["pack"] for m in lines} == {"relevance-hijack"}
    assert {m["total"] for m in lines} == {"620"}
    done_counts = [int(m["done"]) for m in lines]
    assert done_counts == sorted(done_counts) and done_counts[-1] <= 620
    assert "progress" not in done.stdout
    report = json.loads((tmp_path / "out" / "report.json").read_text("utf-8"))
    kept = "".join(line for line in done.stdout.splitlines(True) if not line.startswith("wrote "))
    assert kept == console.render(report)
    # `calibrate --pack` takes the same callbacks.
    cal = rlk(
        "calibrate", "--pack", "relevance-hijack", "-o", "cal", cwd=tmp_path,
        env={INTERVAL_ENV: "0.05"},
    )  # fmt: skip
    assert cal.returncode == 0, cal.stderr
    assert any(LINE.match(line) for line in cal.stderr.splitlines()), cal.stderr
    # 0 turns them off; a malformed value is refused before anything is written.
    quiet = rlk("run", "-p", "relevance-hijack", "-o", "q", cwd=tmp_path, env={INTERVAL_ENV: "0"})
    assert quiet.returncode == 1 and "progress:" not in quiet.stderr
    bad = rlk("run", "--smoke", "-o", "bad", cwd=tmp_path, env={INTERVAL_ENV: "often"})
    assert bad.returncode == 2 and INTERVAL_ENV in bad.stderr and "Traceback" not in bad.stderr
    assert not (tmp_path / "bad").exists()
