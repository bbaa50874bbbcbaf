"""A mistyped target option, key or choice, is refused (exit 2) with the option's path and the
option meant, for every target: the built-in ones and a third party's; and ``--help`` shows the
defaults a user needs to find the files a command writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import rlk
from tests.support.workspace import Workspace

#: A third-party target with a choice among its options, as a team's own plugin declares one.
CHOOSY = '''

from attrs import validators


@define
class Choosy:
    """The reference target, with an option that takes one of two words."""

    mood: str = field(default="calm", validator=validators.in_(("calm", "angry")))
    _inner: ReferenceTarget = field(factory=ReferenceTarget, init=False)

    def ingest(self, documents):
        self._inner.ingest(documents)

    def answer(self, query):
        return self._inner.answer(query)
'''


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(
        tmp_path_factory.mktemp("hints"),
        extra_source=CHOOSY,
        extra_entry_points={"ragleaklab.targets": {"choosy": "rlk_test_fakes:Choosy"}},
    )


def refused(ws: Workspace, *args: str) -> str:
    """stderr of a ``run`` refused with exit 2, having written nothing and no traceback."""
    done = ws.cli("run", "-p", "relevance-hijack", "--smoke", "-o", "out", *args, ok=(2,))
    assert "Traceback" not in done.stderr
    assert not (ws.root / "out").exists()
    return done.stderr


@pytest.mark.parametrize(
    ("target", "typed", "meant"),
    [
        ("reference", "filter_injection=true", "filter_injections"),
        ("python", "calable='app:answer'", "callable"),
        ("http", "urll='http://127.0.0.1:9/'", "url"),
        ("openai-compatible", "modle='m'", "model"),
        ("blind", "replys={}", "replies"),  # a third party's
    ],
)
def test_a_mistyped_option_key_suggests_the_key_meant(ws, target, typed, meant):
    err = refused(ws, "--target", target, "--target-option", typed)
    key = typed.partition("=")[0]
    assert f"unknown key '{key}' (did you mean '{meant}'" in err
    assert "@ $.target.options" in err


@pytest.mark.parametrize(
    ("target", "typed", "meant"),
    [
        ("reference", "answer_style=markdwon", "markdown"),
        ("python", "kind=retreiver", "retriever"),
        ("openai-compatible", "access_filter=tennant", "tenant"),
        ("choosy", "mood=angy", "angry"),  # a third party's
    ],
)
def test_a_mistyped_option_choice_suggests_the_choice_meant(ws, target, typed, meant):
    extra = ("--target-option", "callable='app:answer'") if target == "python" else ()
    err = refused(ws, "--target", target, "--target-option", typed, *extra)
    key, _, value = typed.partition("=")
    assert f"(got '{value}') (did you mean '{meant}'?) @ $.target.options.{key}" in err


def test_a_choice_in_the_config_file_is_suggested_at_its_path(ws):
    (ws.root / "app.toml").write_text(
        '[target]\nname = "python"\n[target.options]\ncallable = "app:answer"\n'
        'kind = "vectorstor"\n',
        "utf-8",
    )
    err = refused(ws, "-c", "app.toml")
    assert "(did you mean 'vectorstore'?) @ $.target.options.kind" in err


def test_a_choice_nothing_like_any_is_listed_without_a_guess(ws):
    err = refused(ws, "--target-option", "answer_style=zzz")
    assert "'answer_style' must be in ('plain', 'markdown') (got 'zzz') @ " in err
    assert "did you mean" not in err


def test_run_help_shows_where_the_output_goes(tmp_path: Path):
    out = rlk("run", "--help", cwd=tmp_path, ok=(0,)).stdout
    block = out[out.index("-o, --out") :].split("\n  -", 1)[0]
    assert "[default:" in block
    assert "ragleaklab_out" in block
    assert "[run] out" in block


def test_calibrate_help_says_its_out_is_required(tmp_path: Path):
    out = rlk("calibrate", "--help", cwd=tmp_path, ok=(0,)).stdout
    block = out[out.index("-o, --out") :].split("\n  -", 1)[0]
    assert "[required]" in block
