"""`ragleaklab report` and `run --FORMAT`: one report, many renderings, written the same way.

Every rendering is a function of report.json alone, so the file `run --junit F` writes and the
one `ragleaklab report report.json --format junit` writes are byte-identical; GitHub Actions
gets workflow commands and a step summary; bad input exits 2 and writes nothing.
"""

from __future__ import annotations

import json

import pytest

from ragleaklab_core.cli.reports import github_annotations
from ragleaklab_core.cli.shorthands import installed_plan
from ragleaklab_core.reporting.outputs import reporter_names
from tests.support.cli import rlk

#: The built-in reporters (pyproject.toml), and those `run` offers a `--NAME FILE` shorthand for:
#: every one but the text summary, which `run` prints on stdout anyway.
RENDERINGS = ("html", "junit", "markdown", "sarif", "text")
WRITTEN = ("html", "junit", "markdown", "sarif")

#: A small run of every built-in pack that fails (the smoke selection of the reference target).
SMOKE = ("run", "--smoke")


def test_every_format_is_registered_and_offered_by_run_but_the_one_it_prints(tmp_path):
    assert set(RENDERINGS) <= set(reporter_names())
    plan = installed_plan({"--out", "-o"})
    assert {s.reporter for s in plan.offered} == set(WRITTEN)  # no --text FILE
    assert plan.refused == ()
    done = rlk("run", "--help", cwd=tmp_path, ok=(0,))
    for fmt in RENDERINGS:
        assert (f"--{fmt} FILE" in done.stdout) is (fmt in WRITTEN), fmt
    assert "--report NAME=FILE" in done.stdout


def test_run_writes_each_format_as_report_renders_it_byte_for_byte(tmp_path):
    written_formats = sorted(WRITTEN)
    flags = [arg for fmt in written_formats for arg in (f"--{fmt}", f"r/out.{fmt}")]
    done = rlk(*SMOKE, "-o", "out", *flags, cwd=tmp_path)
    assert done.returncode == 1, done.stderr  # the smoke run fails: renderings are still written
    for fmt in written_formats:
        written = (tmp_path / "r" / f"out.{fmt}").read_bytes()
        assert written, fmt
        assert f"wrote r/out.{fmt}" in done.stdout
        again = rlk("report", "out/report.json", "--format", fmt, "-o", f"a.{fmt}", cwd=tmp_path)
        assert again.returncode == 0, again.stderr
        assert (tmp_path / f"a.{fmt}").read_bytes() == written, fmt
        shown = rlk("report", "out/report.json", "--format", fmt, cwd=tmp_path)
        assert shown.stdout.encode("utf-8") == written, fmt


def test_github_actions_gets_annotations_and_a_step_summary(tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    done = rlk(*SMOKE, "-o", "out", cwd=tmp_path, env=env)
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    failing = [p for p in report["packs"] if p["verdict"] != "pass"]
    assert failing
    errors = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert len(errors) == len(failing)
    for pack, line in zip(failing, errors, strict=True):
        assert line.startswith(f"::error title=ragleaklab {pack['name']} {pack['version']}::")
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n")  # appended, never replaced
    markdown = rlk("report", "out/report.json", "--format", "markdown", cwd=tmp_path).stdout
    assert text == "earlier step\n" + markdown
    # Outside GitHub Actions: no workflow commands.
    plain = rlk(*SMOKE, "-o", "out2", cwd=tmp_path)
    assert "::error" not in plain.stdout and "::warning" not in plain.stdout


def test_annotations_escape_what_would_end_or_split_a_workflow_command():
    report = {
        "packs": [
            {
                "name": "evil:pack,1",
                "version": "1",
                "verdict": "fail",
                "tested": True,
                "reasons": ["50% fail\nsecond line\r"],
                "warnings": [],
            },
            {"name": "ok", "version": "2", "verdict": "pass", "tested": True, "warnings": ["w"]},
        ]
    }
    assert github_annotations(report) == [
        "::error title=ragleaklab evil%3Apack%2C1 1::50%25 fail%0Asecond line%0D",
        "::warning title=ragleaklab ok 2::w",
    ]


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "$: not JSON"),
        ("[1, 2]", "$: the report must be a JSON object"),
    ],
)
def test_a_bad_report_exits_2_naming_the_file(tmp_path, content, says):
    (tmp_path / "report.json").write_text(content, encoding="utf-8")
    fmt = sorted(RENDERINGS)[0]
    done = rlk("report", "report.json", "--format", fmt, "-o", "x", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: report.json") and says in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "x").exists()


def test_a_missing_report_exits_2(tmp_path):
    done = rlk("report", "nope.json", "--format", sorted(RENDERINGS)[0], cwd=tmp_path)
    assert done.returncode == 2 and "nope.json: no such file" in done.stderr


def test_a_rendering_path_that_is_a_directory_is_refused_before_anything_is_written(tmp_path):
    (tmp_path / "d").mkdir()
    fmt = sorted(RENDERINGS)[0]
    done = rlk(*SMOKE, "-o", "out", f"--{fmt}", "d", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()


def test_the_html_report_shows_a_calibration_report_given_to_report(tmp_path):
    done = rlk(*SMOKE, "-o", "out", "--html", "plain.html", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    cal = rlk("calibrate", "--pack", "relevance-hijack", "--out", "cal", cwd=tmp_path)
    assert cal.returncode == 0, cal.stderr
    args = ("report", "out/report.json", "--format", "html", "-o", "with.html")
    shown = rlk(*args, "--calibration", "cal/calibration_report.json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    plain = (tmp_path / "plain.html").read_text(encoding="utf-8")
    rich = (tmp_path / "with.html").read_text(encoding="utf-8")
    assert "<polyline" in rich and "<polyline" not in plain
    refused = rlk(
        *args[:3], "markdown", "--calibration", "cal/calibration_report.json", cwd=tmp_path
    )
    assert refused.returncode == 2 and "--calibration is shown by html only" in refused.stderr


#: What a ragleaklab before the one per-case list wrote: failing cases in failing_details, and
#: case_results without their kind and detail.
OLDER_REPORT = {
    "verdict": "fail",
    "packs": [
        {
            "name": "x", "version": "1", "verdict": "fail", "tested": True, "values": {},
            "failing_details": [{"test_id": "c1", "kind": None, "query": "q", "answer": "a"}],
            "case_results": [
                {
                    "test_id": "c1", "outcome": "fail", "values": {"v": 1.0}, "failing": ["v"],
                    "error": None, "unscorable": {}, "evidence": {},
                }
            ],
        }
    ],
}  # fmt: skip


@pytest.mark.parametrize("fmt", sorted(RENDERINGS))
def test_a_report_without_per_case_results_exits_2_naming_the_file(tmp_path, fmt):
    (tmp_path / "old.json").write_text('{"packs": [{"name": "x"}]}', encoding="utf-8")
    done = rlk("report", "old.json", "--format", fmt, "-o", "x", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("error: old.json: $.packs[0]: report.json has no case_results")
    assert "Traceback" not in done.stderr and not (tmp_path / "x").exists()


@pytest.mark.parametrize("fmt", ["html", "markdown"])
def test_a_report_an_older_ragleaklab_wrote_exits_2_naming_the_file(tmp_path, fmt):
    """Markdown and HTML show the kind and detail of failing cases, which an older report keeps
    elsewhere: they say so instead of raising a KeyError or showing no failing case."""
    (tmp_path / "old.json").write_text(json.dumps(OLDER_REPORT), encoding="utf-8")
    done = rlk("report", "old.json", "--format", fmt, cwd=tmp_path)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(
        "error: old.json: $.packs[0].case_results[0]: no kind, detail (an older ragleaklab wrote"
    ), done.stderr
    assert "Traceback" not in done.stderr


def test_run_report_reaches_any_reporter_and_report_reads_the_run_directory(tmp_path):
    done = rlk(
        *SMOKE, "-o", "out", "--report", "text=r/summary.txt", "--report", "junit=r/j.xml",
        cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert "wrote r/summary.txt" in done.stdout and "wrote r/j.xml" in done.stdout
    summary = (tmp_path / "r" / "summary.txt").read_text(encoding="utf-8")
    assert summary.startswith(done.stdout[: len(summary)])  # the summary run printed, as a file
    # RUN may be the run's output directory: its report.json is rendered.
    again = rlk("report", "out", "--format", "junit", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout.encode("utf-8") == (tmp_path / "r" / "j.xml").read_bytes()


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (("--report", "jnuit=a.xml"), "--report jnuit=a.xml: no reporter named 'jnuit' (did you"),
        (("--report", "junit"), "--report junit: expected NAME=FILE"),
        (("--report", "junit=a.xml", "--report", "sarif=./a.xml"), "a.xml is named twice"),
        (("--junit", "a.xml", "--report", "junit=b.xml"), "'junit' is already written to a.xml"),
    ],
)
def test_a_bad_report_flag_exits_2_before_anything_runs(tmp_path, flags, says):
    done = rlk(*SMOKE, "-o", "out", *flags, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert says in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "a.xml").exists()


def test_an_unknown_format_exits_2_with_a_suggestion_and_the_installed_reporters(tmp_path):
    (tmp_path / "report.json").write_text('{"packs": []}', encoding="utf-8")
    done = rlk("report", "report.json", "--format", "markdwon", "-o", "x", cwd=tmp_path)
    assert done.returncode == 2
    assert "no reporter named 'markdwon' (did you mean 'markdown'?)" in done.stderr
    installed = done.stderr.split("installed reporters: ", 1)[1].splitlines()[0].split(", ")
    assert installed == reporter_names() and set(RENDERINGS) <= set(installed)
    assert "Traceback" not in done.stderr and not (tmp_path / "x").exists()


def test_the_markdown_cap_is_set_by_flag_or_config_and_the_step_summary_honours_it(tmp_path):
    summary = tmp_path / "summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)}
    done = rlk(
        *SMOKE, "-o", "out", "--markdown", "m.md", "--markdown-max-chars", "4000",
        cwd=tmp_path, env=env,
    )  # fmt: skip
    assert done.returncode == 1, done.stderr
    capped = (tmp_path / "m.md").read_text("utf-8")
    assert len(capped) <= 4000 and "this summary was cut to stay under 4000 characters" in capped
    assert summary.read_text("utf-8") == capped  # the step summary is cut alike
    # `report` gives the same text with the same cap, and the whole with 0.
    again = rlk(
        "report", "out", "--format", "markdown", "--markdown-max-chars", "4000", cwd=tmp_path
    )
    assert again.stdout == capped
    whole = rlk("report", "out", "--format", "markdown", "--markdown-max-chars", "0", cwd=tmp_path)
    assert len(whole.stdout) > 4000 and "was cut" not in whole.stdout
    assert whole.stdout.startswith(capped.split("\n> **Note:**", 1)[0])  # the verdict, kept
    # The same cap from a config file.
    (tmp_path / "cap.toml").write_text("[run]\nmarkdown_max_chars = 4000\n", "utf-8")
    rlk(*SMOKE, "-o", "out2", "-c", "cap.toml", "--markdown", "c.md", cwd=tmp_path, ok=(1,))
    # The same text, but for the config file the first line names.
    named = capped.replace(", no config file", ", config cap.toml", 1)
    assert named != capped and (tmp_path / "c.md").read_text("utf-8") == named


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            (*SMOKE, "-o", "out", "--markdown-max-chars", "100"),
            "--markdown-max-chars: 'markdown_max_chars' must be 0 (no cap) or at least 2000",
        ),
        (
            ("report", "r.json", "--format", "markdown", "--markdown-max-chars", "-1"),
            "--markdown-max-chars must be 0 (no cap) or at least 2000",
        ),
        (
            ("report", "r.json", "--format", "junit", "--markdown-max-chars", "5000"),
            "--markdown-max-chars caps markdown only, not junit",
        ),
    ],
)
def test_a_bad_markdown_cap_exits_2_naming_the_flag(tmp_path, args, says):
    (tmp_path / "r.json").write_text("{}", "utf-8")
    done = rlk(*args, cwd=tmp_path, ok=(2,))
    assert says in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
