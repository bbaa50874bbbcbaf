"""The declared plugin contract: optional members declared once, read once into traits, misspelt
ones reported with the right name, and async-only targets."""

from __future__ import annotations

import asyncio
import json
import re
import string
from pathlib import Path
from typing import Any, ClassVar

import attrs
import pytest
from attrs import define, frozen
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from ragleaklab_core import METRICS, PACKS, TARGETS, Case, Document, Response, load_plugin
from ragleaklab_core._discovery import (
    FITTERS,
    GROUPS,
    JUDGES,
    REPORTERS,
    LoadedPlugin,
    check_contract,
    discover_plugins,
    metric_values,
    primary_metric_for,
)
from ragleaklab_core.errors import PluginContractError
from ragleaklab_core.interfaces import (
    ISOLATIONS,
    OPTIONAL_MEMBERS,
    PROTOCOLS,
    FitterTraits,
    JudgeTraits,
    MetricTraits,
    PackTraits,
    ReporterTraits,
    TargetTraits,
    judge_traits,
    metric_traits,
    misspelt_members,
    pack_traits,
    read_traits,
    required_members,
    target_traits,
)

# -- the declarations -----------------------------------------------------------------------------


def test_every_group_declares_its_members_once_and_none_shadows_a_required_one():
    assert set(OPTIONAL_MEMBERS) == set(GROUPS) == set(PROTOCOLS)
    for group, members in OPTIONAL_MEMBERS.items():
        names = [m.name for m in members]
        assert len(names) == len(set(names)), group
        assert not set(names) & set(required_members(group)), group
        for m in members:
            assert m.meaning.strip() and re.fullmatch(r"0\.\d+", m.since), m


#: Every public name ragleaklab_core.interfaces held when it held the whole contract (0.3):
#: plugin authors import them from there, so each must still be there.
INTERFACES_BEFORE_CONTRACTS = (
    *("ALTERNATIVES", "CLOSE_MATCH", "INGEST_SCOPES", "ISOLATIONS", "OPTIONAL_MEMBERS"),
    *("FITTER_MEMBERS", "JUDGE_MEMBERS", "METRIC_MEMBERS", "PACK_MEMBERS", "REPORTER_MEMBERS"),
    *("PROTOCOLS", "TARGET_MEMBERS", "Traits", "Member", "Misspelling"),
    *("Judge", "Metric", "Pack", "Reporter", "Target", "ThresholdFitter"),
    *("FitterTraits", "MetricTraits", "PackTraits", "ReporterTraits", "TargetTraits"),
    *("group_kind", "missing_hint", "misspelt_members", "read_traits", "required_members"),
    *("metric_traits", "pack_traits", "reporter_traits", "target_traits"),
)


def test_interfaces_still_holds_every_name_each_the_one_its_groups_module_defines():
    import importlib

    from ragleaklab_core import interfaces

    assert set(INTERFACES_BEFORE_CONTRACTS) <= set(interfaces.__all__)
    for name in interfaces.__all__:
        value = getattr(interfaces, name)
        home = getattr(value, "__module__", None)
        if home is not None and home.startswith("ragleaklab_core."):  # a class or function
            assert home.startswith("ragleaklab_core.contracts."), name
            assert getattr(importlib.import_module(home), name.split(".")[-1]) is value, name
    # One module per group: its protocol, its table and its traits record side by side.
    for group, protocol in PROTOCOLS.items():
        module = importlib.import_module(protocol.__module__)
        assert group == module.GROUP
        tables = [v for v in vars(module).values() if v is OPTIONAL_MEMBERS[group]]
        records = {type(read_traits(group, object())).__module__}
        assert tables and records == {protocol.__module__}, group


def test_the_members_the_issue_found_undeclared_are_declared():
    declared = {m.name for members in OPTIONAL_MEMBERS.values() for m in members}
    undeclared_before = {
        "isolation",
        "thread_safe",
        "ingest_scope",
        "answer_case",
        "label_provenance",
        "labels_source",
        "data_package",
    }
    assert undeclared_before <= declared


def test_every_member_a_traits_record_carries_is_declared():
    """A traits field named like a member must be a declared one (or a required method)."""
    records = (
        (METRICS, MetricTraits),
        (TARGETS, TargetTraits),
        (PACKS, PackTraits),
        (FITTERS, FitterTraits),
        (REPORTERS, ReporterTraits),
        (JUDGES, JudgeTraits),
    )
    assert {group for group, _ in records} == set(GROUPS)
    for group, record in records:
        declared = {m.name for m in OPTIONAL_MEMBERS[group]} | set(required_members(group))
        derived = {"present", "problems", "accepts_principal", "principal_support"}
        fields = {f.name for f in attrs.fields(record)} - derived
        assert fields <= declared, (group, sorted(fields - declared))


# -- traits, read once ----------------------------------------------------------------------------


@frozen
class DeclaringMetric:
    values = ("hit", "miss")
    lower_is_worse = frozenset({"miss"})
    primary_for: ClassVar[dict[str, Any]] = {"acme": "hit", "bad": "", "*": 3}
    subject_value = "hit"
    reads_answer = False

    def score(self, case, response):
        raise NotImplementedError

    def for_corpus(self, documents):
        return BoundMetric(len(documents))

    @classmethod
    def check_ground_truth(cls, ground_truths, texts):
        return iter(())


@frozen
class BoundMetric:
    n: int
    lower_is_worse = frozenset({"hit"})

    def score(self, case, response):
        raise NotImplementedError


@frozen
class SilentMetric:
    VALUES: ClassVar[list[Any]] = ["b", "a", "b", 3]

    def score(self, case, response):
        raise NotImplementedError


def test_metric_traits_read_what_is_declared_and_defaults_otherwise():
    t = metric_traits(DeclaringMetric())
    assert t.values == ("hit", "miss")
    assert t.lower_is_worse == frozenset({"miss"})
    assert t.primary_for == {"acme": "hit"}  # an empty or non-string value names nothing
    assert (t.subject_value, t.reads_answer) == ("hit", False)
    assert t.for_corpus and t.check_ground_truth
    assert {"values", "lower_is_worse", "for_corpus", "reads_answer"} <= t.present
    silent = metric_traits(SilentMetric)
    assert silent.values == ("b", "a")  # VALUES on the class, deduplicated, strings only
    assert (silent.reads_answer, silent.subject_value, silent.for_corpus) == (True, None, False)
    assert silent.present == {"VALUES"} and silent.problems == ()


def test_a_malformed_lower_is_worse_is_a_problem_not_a_crash():
    @frozen
    class Odd:
        lower_is_worse = 3

        def score(self, case, response):
            raise NotImplementedError

    t = metric_traits(Odd())
    assert t.lower_is_worse == frozenset()
    assert t.problems == ("lower_is_worse must be a collection of value names, got 3",)


_ODD_METRIC = """
from attrs import frozen

from ragleaklab_core import MetricResult


@frozen
class OddMetric:
    lower_is_worse = 3

    def score(self, case, response):
        return MetricResult(values={"x": 0.0})
"""


def test_a_run_refuses_a_metric_whose_declaration_has_the_wrong_shape(rlk_fake_dist):
    """Reading it is no crash, but ignoring it would reduce its values in the wrong direction:
    a run (and the embedding API) refuses the metric as unusable, exit 3, before any case."""
    from ragleaklab_core import PluginContractError
    from ragleaklab_core.run.runner import load_metric, load_pack

    rlk_fake_dist(
        "rlk-odd",
        entry_points={"ragleaklab.metrics": {"odd": "rlk_odd:OddMetric"}},
        modules={"rlk_odd.py": _ODD_METRIC},
    )
    info = load_pack("relevance-hijack").obj.info()
    with pytest.raises(PluginContractError) as caught:
        load_metric("odd", info, ())
    assert caught.value.exit_code == 3
    assert "lower_is_worse must be a collection of value names, got 3" in str(caught.value)
    assert "ragleaklab.metrics:odd" in str(caught.value)


def test_a_loaded_plugin_carries_the_traits_of_its_object_even_once_evolved():
    loaded = LoadedPlugin(METRICS, "m", "x:M", "x 1", DeclaringMetric(), {})
    assert loaded.metric_traits.lower_is_worse == {"miss"}
    bound = attrs.evolve(loaded, obj=loaded.obj.for_corpus([Document("d", "t", "legit")]))
    # The bound metric declares its own lower_is_worse: its record must be re-read from it.
    assert bound.metric_traits.lower_is_worse == {"hit"}
    assert bound.metric_traits.values == ()
    with pytest.raises(TypeError, match="TargetTraits"):
        _ = loaded.target_traits


def test_metric_values_and_primary_metric_come_from_the_traits(rlk_fake_dist):
    rlk_fake_dist(
        "rlk-declaring",
        entry_points={METRICS: {"declaring": "rlk_declaring:M"}},
        modules={
            "rlk_declaring.py": (
                "from attrs import frozen\n"
                "@frozen\n"
                "class M:\n"
                "    VALUES = ('x_rate', 'y_rate')\n"
                "    primary_for = {'acme-type': 'y_rate'}\n"
                "    def score(self, case, response):\n"
                "        raise NotImplementedError\n"
            )
        },
    )
    assert metric_values("declaring") == ("x_rate", "y_rate")
    assert primary_metric_for("acme-type", ("declaring",)) == "y_rate"


def _primary_metric_module(table: str) -> str:
    return (
        "from attrs import frozen\n"
        "@frozen\n"
        "class M:\n"
        f"    primary_for = {table}\n"
        "    def score(self, case, response):\n"
        "        raise NotImplementedError\n"
    )


def test_primary_metric_stops_at_the_first_exact_declaration_and_imports_no_other_metric(
    rlk_fake_dist,
):
    import sys

    rlk_fake_dist(
        "rlk-primary",
        entry_points={
            METRICS: {
                "own": "rlk_primary_own:M",
                "wild": "rlk_primary_wild:M",
                "exact": "rlk_primary_exact:M",
            }
        },
        modules={
            "rlk_primary_own.py": _primary_metric_module("{'acme-type': 'own_rate'}"),
            "rlk_primary_wild.py": _primary_metric_module("{'*': 'wild_rate'}"),
            "rlk_primary_exact.py": _primary_metric_module("{'other-type': 'exact_rate'}"),
        },
    )
    # The pack's own metric names its type: no other installed metric is imported to say so.
    assert primary_metric_for("acme-type", ("own",)) == "own_rate"
    assert "rlk_primary_wild" not in sys.modules and "rlk_primary_exact" not in sys.modules
    # An exact declaration of any installed metric still beats a "*" read before it...
    assert primary_metric_for("other-type", ("wild",)) == "exact_rate"
    # ...and "*" answers only when no metric names the type.
    assert primary_metric_for("unnamed-type", ("own", "wild")) == "wild_rate"


class _Hooks:
    def ingest(self, documents):
        pass

    def answer(self, query):
        return Response("a")


def test_target_traits_derive_isolation_and_refuse_undeclared_values():
    class WithReset(_Hooks):
        def reset(self):
            pass

    class AsyncReset(_Hooks):
        async def areset(self):
            pass

    class Declares(_Hooks):
        isolation = "shared"
        ingest_scope = "system"
        thread_safe = True
        carries_principal = "yes"  # not a bool: no declaration

    class Wrong(WithReset):
        isolation = "isolated"
        ingest_scope = "cluster"

    assert target_traits(_Hooks()).isolation == "fresh"
    assert target_traits(WithReset()).isolation == "reset"
    assert target_traits(AsyncReset()).isolation == "reset"
    declares = target_traits(Declares())
    assert (declares.isolation, declares.ingest_scope, declares.thread_safe) == (
        "shared",
        "system",
        True,
    )
    assert declares.carries_principal is None
    wrong = target_traits(Wrong())
    assert (wrong.isolation, wrong.ingest_scope) == ("reset", "process")
    assert set(ISOLATIONS) >= {wrong.isolation, declares.isolation}


def test_pack_traits():
    class Plain:
        pass

    class Labelled:
        data_package = "acme.data"

        def default_labels(self):
            return b""

        def labels_source(self):
            return "x"

    assert pack_traits(Plain()) == PackTraits()
    t = pack_traits(Labelled())
    assert (t.default_labels, t.labels_source, t.label_provenance) == (True, True, False)
    assert t.data_package == "acme.data"


@frozen
class DeclaringJudge:
    description: ClassVar[str] = "a judge that says yes"

    @property
    def identity(self) -> str:
        return "yes-judge@2"

    def judge(self, case, /):
        raise ValueError("unjudged")

    def close(self) -> None:
        raise NotImplementedError


def test_judge_traits_read_identity_description_and_close_once():
    assert judge_traits(DeclaringJudge()) == JudgeTraits(
        identity="yes-judge@2",
        description="a judge that says yes",
        close=True,
        present=frozenset({"identity", "description", "close"}),
    )

    @frozen
    class Bare:
        identity = ""  # empty: the entry-point name is recorded instead
        close = "not callable"

        def judge(self, case, /):
            raise NotImplementedError

    assert judge_traits(Bare()) == JudgeTraits(present=frozenset({"identity", "close"}))

    # close is declared, so a judge whose release hook is misspelt is refused, not left open.
    @frozen
    class Leaky:
        def judge(self, case, /):
            raise NotImplementedError

        def closes(self) -> None:
            raise NotImplementedError

    [typo] = misspelt_members(JUDGES, Leaky)
    assert (typo.attribute, typo.suggestions) == ("closes", ("close",))


JUDGE_WITH_CLOSE = """
from typing import ClassVar

from attrs import frozen


@frozen
class Recording:
    identity: ClassVar[str] = "recording@1"
    closed: ClassVar[list[str]] = []

    def judge(self, case, /):
        raise ValueError("unjudged")

    def close(self) -> None:
        self.closed.append("closed")
"""


def test_label_judge_takes_identity_and_close_from_the_loaded_judges_traits(rlk_fake_dist):
    from ragleaklab_core.cli.label import _judge_plugin

    rlk_fake_dist(
        "acme-judge",
        entry_points={JUDGES: {"recording": "acme_judge:Recording"}},
        modules={"acme_judge.py": JUDGE_WITH_CLOSE},
    )
    with (
        pytest.raises(RuntimeError, match="interrupted"),
        _judge_plugin("recording", ()) as (judge, identity),
    ):
        assert identity == "recording@1" and type(judge).closed == []
        raise RuntimeError("interrupted")
    assert type(judge).closed == ["closed"]  # closed on the way out, an error or not
    loaded = load_plugin(JUDGES, "recording")
    assert loaded.judge_traits.close is True
    with pytest.raises(TypeError, match="has no MetricTraits"):
        loaded.metric_traits  # noqa: B018 (the property raises)


# -- misspelt members -----------------------------------------------------------------------------

_METHODS = ("method", "async method", "classmethod")
#: (group, member, called): every member a plugin attribute can misspell, required ones included.
MEMBERS = sorted(
    {
        *(
            (group, m.name, m.kind in _METHODS)
            for group, members in OPTIONAL_MEMBERS.items()
            for m in members
            if m.is_attribute
        ),
        *((group, n, True) for group in PROTOCOLS for n in required_members(group)),
    }
)
ALPHABET = string.ascii_letters + "_"


@st.composite
def one_edit(draw):
    """A member's name after one insertion, deletion or substitution of a character."""
    group, name, called = draw(st.sampled_from(MEMBERS))
    kind = draw(st.sampled_from(["insert", "delete", "substitute"]))
    i = draw(st.integers(0, len(name) - (kind != "insert")))
    c = draw(st.sampled_from(ALPHABET))
    edited = {
        "insert": name[:i] + c + name[i:],
        "delete": name[:i] + name[i + 1 :],
        "substitute": name[:i] + c + name[i + 1 :],
    }[kind]
    return group, name, called, edited


def _method(self, *args):
    raise NotImplementedError


def _plugin_class(attribute: str, called: bool = False, **more: Any) -> type:
    """A plugin class defining *attribute* (a method when *called*, else a value) and *more*."""
    return type("Plugin", (), {attribute: _method if called else None, **more})


@given(one_edit())
def test_any_one_edit_of_a_member_is_reported_with_its_name(edit):
    group, name, called, edited = edit
    declared = {m.name for m in OPTIONAL_MEMBERS[group]} | set(required_members(group))
    found = misspelt_members(group, _plugin_class(edited, called))
    if edited in declared or edited.startswith("_") or not edited:
        assert found == ()  # itself declared, or private: nothing to say
    else:
        [misspelt] = found
        assert misspelt.attribute == edited
        assert name in misspelt.suggestions


@given(one_edit())
def test_an_edit_of_a_member_the_plugin_has_is_its_own_business(edit):
    group, name, called, edited = edit
    plugin = _plugin_class(edited, called, **{name: _method if called else None})
    assert all(name not in m.suggestions for m in misspelt_members(group, plugin))


@given(one_edit())
def test_a_value_is_never_taken_for_a_method_nor_a_method_for_a_value(edit):
    group, name, called, edited = edit
    assert all(
        name not in m.suggestions
        for m in misspelt_members(group, _plugin_class(edited, not called))
    )


@pytest.mark.parametrize(
    ("group", "attribute", "called", "right"),
    [
        (METRICS, "readsAnswer", False, "reads_answer"),  # case and underscores only
        (METRICS, "lower_is_wrose", False, "lower_is_worse"),  # two neighbours swapped
        (METRICS, "for_corpos", True, "for_corpus"),
        (METRICS, "scores", True, "score"),
        (TARGETS, "threadsafe", False, "thread_safe"),
        (TARGETS, "anwser", True, "answer"),
        (PACKS, "label_provenence", True, "label_provenance"),
        (PACKS, "case", True, "cases"),
        ("ragleaklab.reporters", "rendr", True, "render"),
        ("ragleaklab.reporters", "shorthnad", False, "shorthand"),
        ("ragleaklab.judges", "identiy", False, "identity"),
        (FITTERS, "fitt", True, "fit"),
    ],
)
def test_common_typos_beyond_one_edit_are_reported(group, attribute, called, right):
    [found] = misspelt_members(group, _plugin_class(attribute, called))
    assert found.suggestions[0] == right


@pytest.mark.parametrize(
    ("group", "attribute", "called", "more"),
    [
        (METRICS, "threshold", False, {}),
        (METRICS, "_reads_answers", False, {}),  # private: the plugin's own business
        (METRICS, "scores", True, {"score": _method}),  # a helper beside the real method
        (METRICS, "value", False, {"VALUES": ("x",)}),  # VALUES serves as values
        (METRICS, "value", False, {"value": "leak_rate"}),  # text, not a collection of names
        ("ragleaklab.reporters", "suffixes", False, {"suffixes": (".a", ".b")}),
        (TARGETS, "answer_cache", False, {}),  # a plausible field, two edits from answer_case
        (TARGETS, "principle", False, {}),  # principal is a parameter, not an attribute
        (TARGETS, "closed", False, {}),  # a flag, not the close method
        (TARGETS, "resets", False, {}),  # a counter, not the reset method
        (TARGETS, "aanswer", True, {}),  # the async form of answer
        (TARGETS, "closes", True, {"aclose": _method}),  # aclose serves as close
        (FITTERS, "fits", False, {}),
        ("ragleaklab.reporters", "renders", True, {"render": _method}),
    ],
)
def test_what_is_not_a_misspelling_is_not_reported(group, attribute, called, more):
    assert misspelt_members(group, _plugin_class(attribute, called, **more)) == ()


def test_only_the_plugins_own_hierarchy_counts():
    class Base:
        reads_answers = True

    @define
    class Child(Base):
        lower_is_wors: frozenset[str] = frozenset()  # an attrs field (slots: not in the body)

        def score(self, case, response):
            raise NotImplementedError

    found = {m.attribute: m.suggestions for m in misspelt_members(METRICS, Child)}
    assert found == {"reads_answers": ("reads_answer",), "lower_is_wors": ("lower_is_worse",)}
    # attrs' and object's own members (__attrs_attrs__, evolve helpers, __init__...) never count.
    assert misspelt_members(METRICS, define(type("Empty", (), {}))) == ()


def test_no_builtin_plugin_has_a_misspelt_member():
    infos = [i for i in discover_plugins() if i.distribution == "ragleaklab"]
    assert {(i.group, i.name): i.misspelt for i in infos if i.misspelt} == {}
    assert [(i.group, i.name, i.error) for i in infos if i.status != "ok"] == []


MISSPELT = """
from attrs import frozen
from ragleaklab_core import MetricResult


@frozen
class Typo:
    reads_answers = False

    def score(self, case, response):
        return MetricResult({"x": 0.0})
"""

TYPO_ERROR = (
    "metric 'typo-metric' has 'reads_answers': did you mean 'reads_answer'? ragleaklab reads only "
    "'reads_answer', so 'reads_answers' would be ignored: rename it, or make it private "
    "('_reads_answers') if it is the plugin's own"
)


def test_a_misspelt_member_is_refused_at_load_naming_member_plugin_and_fix(rlk_fake_dist):
    rlk_fake_dist(
        "rlk-typo",
        entry_points={METRICS: {"typo-metric": "rlk_typo:Typo"}},
        modules={"rlk_typo.py": MISSPELT},
    )
    with pytest.raises(PluginContractError) as err:
        load_plugin(METRICS, "typo-metric")
    assert err.value.exit_code == 3
    assert str(err.value) == (
        "ragleaklab.metrics:typo-metric (rlk_typo:Typo, from rlk-typo 1.0) could not be used: "
        + TYPO_ERROR
    )


REQUIRED_TYPOS = """
from attrs import frozen


@frozen
class Scores:
    def scores(self, case, response):
        raise NotImplementedError


@frozen
class JudgeCase:
    def judge_case(self, case):
        raise NotImplementedError


@frozen
class Rendr:
    description = "a table"

    def rendr(self, report, **options):
        return ""


@frozen
class Nothing:
    def helper(self):
        return 1
"""


@pytest.mark.parametrize(
    ("group", "name", "message"),
    [
        (METRICS, "scores", "metric 'scores' has no method 'score' "
         "(it has 'scores': did you mean 'score'?)"),
        ("ragleaklab.reporters", "rendr", "reporter 'rendr' has no method 'render' "
         "(it has 'rendr': did you mean 'render'?)"),
        ("ragleaklab.judges", "judge-case", "does not implement Judge: judge 'judge-case' has no "
         "method 'judge' (it has 'judge_case': did you mean 'judge'?)"),
    ],
)  # fmt: skip
def test_a_misspelt_required_member_gets_a_did_you_mean(rlk_fake_dist, group, name, message):
    rlk_fake_dist(
        "rlk-req",
        entry_points={
            METRICS: {"scores": "rlk_req:Scores", "nothing": "rlk_req:Nothing"},
            "ragleaklab.reporters": {"rendr": "rlk_req:Rendr"},
            "ragleaklab.judges": {"judge-case": "rlk_req:JudgeCase"},
        },
        modules={"rlk_req.py": REQUIRED_TYPOS},
    )
    with pytest.raises(PluginContractError) as err:
        load_plugin(group, name)
    assert message in str(err.value)
    # A plugin lacking the method with nothing close to it: the plain message, no guess.
    with pytest.raises(PluginContractError) as plain:
        load_plugin(METRICS, "nothing")
    assert str(plain.value).endswith("does not implement Metric: missing score")


def test_the_plugins_command_lists_it_failed_with_the_fix(rlk_fake_dist):
    from ragleaklab_core.cli.commands import cli

    rlk_fake_dist(
        "rlk-typo",
        entry_points={METRICS: {"typo-metric": "rlk_typo:Typo"}},
        modules={"rlk_typo.py": MISSPELT},
    )
    runner = CliRunner()
    table = runner.invoke(cli, ["plugins"])
    assert table.exit_code == 0, table.output  # listing a broken plugin is not an error
    lines = table.output.splitlines()
    row = next(i for i, line in enumerate(lines) if " typo-metric " in line)
    assert lines[row].split()[2] == "failed"
    assert lines[row + 1].strip().endswith(TYPO_ERROR)
    out = runner.invoke(cli, ["plugins", "--json"])
    rows = {(r["group"], r["name"]): r for r in json.loads(out.stdout)}
    typo = rows[(METRICS, "typo-metric")]
    assert typo["status"] == "failed"
    assert typo["error"].endswith(TYPO_ERROR)
    assert typo["misspelt"] == [{"attribute": "reads_answers", "suggestions": ["reads_answer"]}]
    assert rows[(METRICS, "verbatim")]["misspelt"] == []
    assert rows[(METRICS, "verbatim")]["status"] == "ok"


# -- async-only targets ---------------------------------------------------------------------------

ASYNC_ONLY = """
from attrs import define, field
from ragleaklab_plugins.targets.reference import ReferenceTarget


@define
class AsyncOnly:
    '''The reference target behind an asynchronous interface only.'''

    _inner: ReferenceTarget = field(factory=ReferenceTarget, init=False)
    closed: int = field(default=0, init=False)

    async def aingest(self, documents):
        self._inner.ingest(documents)

    async def aanswer(self, query):
        return self._inner.answer(query)

    async def aclose(self):
        self.closed += 1


@define
class Neither:
    async def aingest(self, documents):
        pass
"""


@pytest.fixture
def async_only(rlk_fake_dist):
    rlk_fake_dist(
        "rlk-async",
        entry_points={
            TARGETS: {"async-only": "rlk_async:AsyncOnly", "neither": "rlk_async:Neither"}
        },
        modules={"rlk_async.py": ASYNC_ONLY},
    )


def test_an_async_only_target_honours_the_contract(async_only):
    loaded = load_plugin(TARGETS, "async-only")
    t = loaded.target_traits
    assert (t.answer, t.aanswer, t.ingest, t.aingest, t.aclose) == (False, True, False, True, True)


def test_a_target_with_neither_form_of_answer_is_refused_naming_it(async_only):
    with pytest.raises(PluginContractError) as info:
        load_plugin(TARGETS, "neither")
    assert info.value.exit_code == 3
    assert "missing answer" in str(info.value) and "ingest" not in str(info.value).split(":")[-1]


def test_check_contract_accepts_the_async_form_only_for_targets():
    @define
    class AsyncFitter:
        async def afit(self):
            pass

    @define
    class AsyncTarget:
        async def aanswer(self, query):
            return Response("")

        async def aingest(self, documents):
            pass

    check_contract(TARGETS, "t", "x:T", AsyncTarget, AsyncTarget())
    # Only targets have async forms: a fitter's afit is the fit it lacks, misspelt.
    with pytest.raises(PluginContractError, match=r"has no method 'fit' \(it has 'afit'"):
        check_contract(FITTERS, "f", "x:F", AsyncFitter, AsyncFitter())


def test_an_async_only_target_runs_a_pack_as_the_reference_does(async_only):
    from ragleaklab_core.run.runner import load_pack, run_pack

    pack = load_pack("relevance-hijack")
    mine = run_pack(pack, target_name="async-only")
    reference = run_pack(pack, target_name="reference")
    assert mine.problems == () and not mine.stopped
    answers = [(r.test_id, r.answer, r.error) for r in mine.records]
    assert answers == [(r.test_id, r.answer, r.error) for r in reference.records]
    assert all(error is None for _t, _a, error in answers) and answers


def test_an_async_only_target_answers_through_the_embedding_session(async_only):
    from ragleaklab_core.embedding import TargetSession

    with TargetSession.open("async-only", pack="relevance-hijack") as session:
        response = session.answer(Case("q1", "What does the handbook say about refunds?"))
        inner = session.target.obj
    assert isinstance(response, Response) and response.answer
    assert inner.closed == 1  # the async close ran when the session closed

    async def main():
        session = await TargetSession.aopen("async-only", pack="relevance-hijack")
        try:
            return await session.aanswer(Case("q1", "What does the handbook say about refunds?"))
        finally:
            await session.aclose()

    assert asyncio.run(main()).answer == response.answer


# -- the documentation ----------------------------------------------------------------------------

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plugins.md"


def render_members() -> str:
    """The tables docs/plugins.md must hold between its members markers, from the declarations."""
    out = []
    for group, members in OPTIONAL_MEMBERS.items():
        out += [f"### `{group}`", ""]
        if not members:
            out += ["None yet.", ""]
            continue
        out += ["| Member | Kind | Since | Meaning |", "| --- | --- | --- | --- |"]
        # A | inside a cell ends it in Markdown: escaped.
        rows = [(m.name, m.kind, m.since, m.meaning.replace("|", "\\|")) for m in members]
        out += [f"| `{n}` | {kind} | {since} | {meaning} |" for n, kind, since, meaning in rows]
        out.append("")
    return "\n".join(out)


def test_the_plugin_docs_list_every_declared_member_as_declared():
    text = DOCS.read_text(encoding="utf-8")
    start, end = "<!-- members:start -->\n", "<!-- members:end -->"
    assert start in text and end in text, "docs/plugins.md lost its members markers"
    shown = text.split(start, 1)[1].split(end, 1)[0].strip()
    assert shown == render_members().strip(), (
        "docs/plugins.md's optional members drifted from ragleaklab_core.interfaces; "
        f"between the markers put:\n{render_members()}"
    )
