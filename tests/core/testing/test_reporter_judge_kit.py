"""The test kit checks reporters and judges too (issue 39, class 5).

Each careless reporter or judge below makes one mistake a plugin author makes (bytes, an order
from a set, markup written raw, control characters in XML, hand-built JSON, a crash on hostile
text, a verdict that is not one, a judge that flips): the kit must fail it, naming the mistake,
and must pass every built-in reporter and a careful judge.
"""

from __future__ import annotations

import html
import random
from typing import ClassVar
from xml.sax.saxutils import escape as xml_escape

import pytest
from _pytest.outcomes import Failed
from attrs import frozen

from ragleaklab_core import JudgeVerdict, PluginRuntimeError, load_plugin
from ragleaklab_core.testing import (
    HOSTILE_MARKUP,
    assert_judge_contract,
    assert_reporter_contract,
    hostile_report,
    sample_judged_case,
    sample_report,
)


def _answers(report):
    return [
        str((c.get("detail") or {}).get("answer", "")) for p in report.packs for c in p.case_results
    ]


@frozen
class CarefulHtml:
    suffix: ClassVar[str] = ".html"

    def render(self, report, /, **options):
        rows = "".join(f"<li>{html.escape(a)}</li>" for a in _answers(report))
        return f"<ul>{rows}</ul>"


@frozen
class RawHtml:
    suffix: ClassVar[str] = ".html"

    def render(self, report, /, **options):
        return "<ul>" + "".join(f"<li>{a}</li>" for a in _answers(report)) + "</ul>"


@frozen
class XmlWithControls:
    suffix: ClassVar[str] = ".xml"

    def render(self, report, /, **options):
        return "<r>" + "".join(f"<a>{xml_escape(a)}</a>" for a in _answers(report)) + "</r>"


@frozen
class HandJson:
    suffix: ClassVar[str] = ".json"

    def render(self, report, /, **options):
        return "[" + ",".join(f'"{a}"' for a in _answers(report)) + "]"


@frozen
class Bytes:
    def render(self, report, /, **options):
        return b"packs"


@frozen
class Random:
    def render(self, report, /, **options):
        return f"{report.verdict} {random.random()}"


@frozen
class Ascii:
    def render(self, report, /, **options):
        return "\n".join(_answers(report)).encode("ascii").decode()


@pytest.mark.parametrize(
    ("reporter", "fragment"),
    [
        (Bytes(), "render() returned bytes, expected str"),
        (Random(), "is not deterministic: the same report rendered twice differs"),
        (RawHtml(), "writes hostile text unescaped: '<script>alert(1)'"),
        (XmlWithControls(), "writes control characters XML cannot hold"),
        (HandJson(), "the rendering of a hostile report is not JSON"),
        (Ascii(), "raised UnicodeEncodeError"),
    ],
)
def test_a_careless_reporter_fails_naming_its_mistake(reporter, fragment):
    with pytest.raises(Failed) as info:
        assert_reporter_contract(reporter)
    assert fragment in str(info.value)


def test_a_careful_reporter_passes_and_its_rendering_is_returned():
    text = assert_reporter_contract(CarefulHtml())
    assert html.escape("<script>alert(1)") in text and "<script>" not in text


@pytest.mark.parametrize("name", ["text", "junit", "sarif", "markdown", "html"])
def test_every_builtin_reporter_passes_across_hash_seeds(name):
    text = assert_reporter_contract(name, hash_seeds=("1", "7"))
    assert text == load_plugin("ragleaklab.reporters", name).obj.render(
        __import__("ragleaklab_core").RunReport.from_document(hostile_report())
    )


SEEDED = """
from attrs import frozen


@frozen
class Seeded:
    def render(self, report, /, **options):
        # A set of names: its order changes with the hash seed, the same within one process.
        return ",".join({p.name for p in report.packs} | {"a", "b", "c", "d", "e", "f"})
"""


def test_a_reporter_whose_order_follows_the_hash_seed_fails(rlk_fake_dist):
    rlk_fake_dist(
        "rlk-seeded",
        entry_points={"ragleaklab.reporters": {"seeded": "rlk_seeded:Seeded"}},
        modules={"rlk_seeded.py": SEEDED},
    )
    with pytest.raises(Failed) as info:
        assert_reporter_contract("seeded", hash_seeds=("1", "2", "3", "4"))
    assert "its rendering differs with PYTHONHASHSEED=" in str(info.value)


def test_the_hostile_report_puts_the_text_where_targets_write():
    hostile = hostile_report()
    assert sample_report() != hostile
    cases = [c for p in hostile["packs"] for c in p["case_results"]]
    assert all(c["test_id"].endswith(HOSTILE_MARKUP) for c in cases)
    assert any((c.get("detail") or {}).get("answer", "").endswith(HOSTILE_MARKUP) for c in cases)
    assert all(HOSTILE_MARKUP in p["reasons"] for p in hostile["packs"])


# -- judges -------------------------------------------------------------------------------------


@frozen
class Careful:
    def judge(self, case, /):
        if len(case.answer) > 10_000:
            raise PluginRuntimeError("ragleaklab.judges", "careful", "answer too long: unjudged")
        found = case.ground_truth.get("secret", "") in case.answer
        return JudgeVerdict("positive" if found else "negative", "sentinel found" if found else "")


@frozen
class Dict:
    def judge(self, case, /):
        return {"label": "positive"}


@frozen
class Flipping:
    def judge(self, case, /):
        return JudgeVerdict(random.choice(["positive", "negative"]))


@frozen
class ParsesVerdicts:
    """Trusts verdict-shaped text in the answer, and crashes on an empty one."""

    def judge(self, case, /):
        first = case.answer.split()[0]
        return JudgeVerdict("negative" if first.startswith("{") else "positive")


def test_a_careful_judge_passes_and_its_verdict_is_returned():
    verdict = assert_judge_contract(Careful())
    assert verdict == JudgeVerdict("positive", "sentinel found")
    assert sample_judged_case().ground_truth["secret"] in sample_judged_case().answer


@pytest.mark.parametrize(
    ("judge", "fragment"),
    [
        (Dict(), "returned dict, expected JudgeVerdict"),
        (Flipping(), "is not deterministic on "),
        (ParsesVerdicts(), "raised IndexError on hostile answer #6"),
    ],
)
def test_a_careless_judge_fails_naming_its_mistake(judge, fragment):
    with pytest.raises(Failed) as info:
        for _ in range(5):  # a flipping judge agrees with itself by chance now and then
            assert_judge_contract(judge)
    assert fragment in str(info.value)


def test_a_judge_is_checked_through_its_entry_point(rlk_fake_dist):
    rlk_fake_dist(
        "rlk-judge",
        entry_points={"ragleaklab.judges": {"careful": "rlk_judge:Careful"}},
        modules={
            "rlk_judge.py": """
from attrs import frozen
from ragleaklab_core import JudgeVerdict


@frozen
class Careful:
    identiy = "careful v1"  # misspelt: the kit fails as the loader does

    def judge(self, case, /):
        return JudgeVerdict("negative")
"""
        },
    )
    with pytest.raises(Failed) as info:
        assert_judge_contract("careful")
    assert "judge 'careful' has 'identiy': did you mean 'identity'?" in str(info.value)


CLOSING_JUDGE = """
from typing import ClassVar

from attrs import frozen
from ragleaklab_core import JudgeVerdict


@frozen
class Closing:
    closed: ClassVar[list[str]] = []
    fail: ClassVar[bool] = False

    def judge(self, case, /):
        if self.fail:
            return {"label": "positive"}
        return JudgeVerdict("negative")

    def close(self):
        self.closed.append("closed")
"""


def test_a_judge_the_kit_built_from_its_name_is_closed_passed_or_failed(rlk_fake_dist):
    rlk_fake_dist(
        "rlk-closing",
        entry_points={"ragleaklab.judges": {"closing": "rlk_closing:Closing"}},
        modules={"rlk_closing.py": CLOSING_JUDGE},
    )
    from rlk_closing import Closing

    assert assert_judge_contract("closing") == JudgeVerdict("negative")
    assert Closing.closed == ["closed"]
    Closing.fail = True
    with pytest.raises(Failed, match="returned dict, expected JudgeVerdict"):
        assert_judge_contract("closing")
    assert Closing.closed == ["closed", "closed"]  # closed on the way out of a failure too
    Closing.fail = False
    judge = Closing()
    assert_judge_contract(judge)  # one the test built is the test's to close
    assert Closing.closed == ["closed", "closed"]
