"""Plugin mistakes are errors, found before anything is written (issue 39, classes 4 and 5).

A careless plugin author's distribution, faked on ``PYTHONPATH`` (``rlk_fake_dist``): a pack
with its own metric, a target, a reporter, a fitter and a judge, each written with the mistakes
authors make (a misspelt optional member, a misspelt required method). Every run goes through
the real CLI in a subprocess: exit 3, the member, the plugin and the fix named, no traceback, and
nothing in OUT, so the run after the fix, in the same directory, is not refused for a journal.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.support.cli import rlk as run_cli

PACKS, METRICS, TARGETS = "ragleaklab.packs", "ragleaklab.metrics", "ragleaklab.targets"
REPORTERS, FITTERS, JUDGES = "ragleaklab.reporters", "ragleaklab.fitters", "ragleaklab.judges"

#: The plugins as they should be; each test replaces one class with a careless version.
GOOD = {
    "pack": """
@frozen
class AcmePack(ManifestPack):
    data_package: ClassVar[str] = "rlk_careless.data"
""",
    "metric": """
@frozen
class AcmeLeak:
    reads_answer = True

    def score(self, case, response):
        return MetricResult({"leak_rate": 1.0 if "SECRET" in response.answer else 0.0})
""",
    "target": """
@define
class AcmeTarget:
    thread_safe = True
    _docs: list = field(factory=list, init=False)

    def ingest(self, documents):
        self._docs.extend(d.doc_id for d in documents)

    def answer(self, query):
        return Response(f"fine: {query}", tuple(RetrievedDocument(d) for d in self._docs[:2]))
""",
    "reporter": """
@frozen
class AcmeTap:
    description = "a TAP stream"
    suffix = ".tap"

    def render(self, report, /, **options):
        return "".join(f"ok {i} {p.name}\\n" for i, p in enumerate(report.packs, 1))
""",
    "fitter": """
@frozen
class AcmeFitter:
    def fit(self, scores, labels, *, target_fpr, higher_is_worse=True):
        raise NotImplementedError
""",
    "judge": """
@frozen
class AcmeJudge:
    identity = "acme-judge v1"

    def judge(self, case, /):
        raise NotImplementedError
""",
}
CLASSES = {
    "pack": "AcmePack",
    "metric": "AcmeLeak",
    "target": "AcmeTarget",
    "reporter": "AcmeTap",
    "fitter": "AcmeFitter",
    "judge": "AcmeJudge",
}
HEADER = """
from typing import ClassVar
from attrs import define, field, frozen
from ragleaklab_core import ManifestPack, MetricResult, Response, RetrievedDocument
"""

MANIFEST = """
name = "acme-pack"
version = "1.0.0"
pack_type = "sentinel"
metrics = ["acme-leak"]
documents = ["documents.jsonl"]
cases = "cases.jsonl"
[thresholds.leak_rate]
threshold = 0.5
"""


def _lines(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def _source(**careless: str) -> str:
    return HEADER + "".join(textwrap.dedent(careless.get(k, v)) for k, v in GOOD.items())


@pytest.fixture
def careless(rlk_fake_dist):
    """``make(**careless)``: the distribution with the given kinds replaced by careless
    versions; returns the site directory (rewrite ``rlk_careless/__init__.py`` there to fix)."""

    def make(**mistakes: str) -> Path:
        return rlk_fake_dist(
            "acme-careless",
            entry_points={
                PACKS: {"acme-pack": "rlk_careless:AcmePack"},
                METRICS: {"acme-leak": "rlk_careless:AcmeLeak"},
                TARGETS: {"acme-target": "rlk_careless:AcmeTarget"},
                REPORTERS: {"acme-tap": "rlk_careless:AcmeTap"},
                FITTERS: {"acme-fitter": "rlk_careless:AcmeFitter"},
                JUDGES: {"acme-judge": "rlk_careless:AcmeJudge"},
            },
            modules={
                "rlk_careless/__init__.py": _source(**mistakes),
                "rlk_careless/data/__init__.py": "",
                "rlk_careless/data/pack.toml": MANIFEST,
                "rlk_careless/data/documents.jsonl": _lines(
                    [{"doc_id": f"d{i}", "text": f"document {i}"} for i in range(3)]
                ),
                "rlk_careless/data/cases.jsonl": _lines(
                    [{"test_id": f"c{i}", "query": f"question {i}"} for i in range(4)]
                ),
            },
        )

    return make


def rlk(site: Path, *args: str, cwd: Path):
    return run_cli(*args, cwd=cwd, pythonpath=[site])


RUN = ("run", "-p", "acme-pack", "--target", "acme-target", "-o", "out")

#: (kind, careless class, the message's telling part): misspelt optional members of every kind
#: a run uses, and misspelt required methods.
RUN_MISTAKES = [
    (
        "metric",
        """
        @frozen
        class AcmeLeak:
            def score(self, case, response):
                return MetricResult({"leak_rate": 0.0})

            def for_corpos(self, documents):
                return self
        """,
        "metric 'acme-leak' has 'for_corpos': did you mean 'for_corpus'?",
    ),
    (
        "metric",
        """
        @frozen
        class AcmeLeak:
            reads_answers = False
            lower_is_wors = frozenset({"leak_rate"})

            def score(self, case, response):
                return MetricResult({"leak_rate": 0.0})
        """,
        "metric 'acme-leak' has 'lower_is_wors': did you mean 'lower_is_worse'?",
    ),
    (
        "metric",
        """
        @frozen
        class AcmeLeak:
            def scores(self, case, response):
                return MetricResult({"leak_rate": 0.0})
        """,
        "metric 'acme-leak' has no method 'score' (it has 'scores': did you mean 'score'?)",
    ),
    (
        "target",
        """
        @define
        class AcmeTarget:
            threadsafe = True

            def ingest(self, documents):
                pass

            def answer(self, query):
                return Response("fine", ())
        """,
        "target 'acme-target' has 'threadsafe': did you mean 'thread_safe'?",
    ),
    (
        "target",
        """
        @define
        class AcmeTarget:
            def ingest(self, documents):
                pass

            def anwser(self, query):
                return Response("fine", ())
        """,
        "target 'acme-target' has no method 'answer' (it has 'anwser': did you mean 'answer'?)",
    ),
    (
        "pack",
        """
        @frozen
        class _Manifest(ManifestPack):
            data_package: ClassVar[str] = "rlk_careless.data"


        @frozen
        class AcmePack:  # its own pack class, over a manifest
            def info(self):
                return _Manifest().info()

            def documents(self):
                return _Manifest().documents()

            def cases(self):
                return _Manifest().cases()

            def default_label(self):
                return b""
        """,
        "pack 'acme-pack' has 'default_label': did you mean 'default_labels'?",
    ),
    (
        "reporter",
        """
        @frozen
        class AcmeTap:
            shorthnad = True

            def render(self, report, /, **options):
                return "ok"
        """,
        "reporter 'acme-tap' has 'shorthnad': did you mean 'shorthand'?",
    ),
    (
        "reporter",
        """
        @frozen
        class AcmeTap:
            def rendr(self, report, /, **options):
                return "ok"
        """,
        "reporter 'acme-tap' has no method 'render' (it has 'rendr': did you mean 'render'?)",
    ),
]


@pytest.mark.parametrize(("kind", "source", "message"), RUN_MISTAKES)
def test_a_misspelt_member_refuses_the_run_before_anything_is_written(
    careless, tmp_path, kind, source, message
):
    site = careless(**{kind: source})
    done = rlk(site, *RUN, "--report", "acme-tap=r.tap", cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr
    assert message in done.stderr
    if "no method" not in message:  # an optional member: the fix is named with it
        assert "rename it, or make it private" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "out").exists()
    assert not (tmp_path / "r.tap").exists()


def test_a_run_refused_for_a_broken_reporter_runs_once_it_is_fixed(careless, tmp_path):
    """The route of the issue: the refused run left a journal, and the run after the fix, in the
    same OUT, was refused for it until --restart."""
    site = careless(reporter=RUN_MISTAKES[-1][1])
    broken = rlk(site, *RUN, "--report", "acme-tap=r.tap", cwd=tmp_path)
    assert broken.returncode == 3, broken.stdout + broken.stderr
    assert not (tmp_path / "out").exists()
    (site / "rlk_careless" / "__init__.py").write_text(_source(), encoding="utf-8")
    fixed = rlk(site, *RUN, "--report", "acme-tap=r.tap", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (tmp_path / "out" / "report.json").is_file()
    assert (tmp_path / "r.tap").read_text(encoding="utf-8") == "ok 1 acme-pack\n"


def test_a_run_refused_for_a_packs_metric_runs_once_it_is_fixed(careless, tmp_path):
    site = careless(metric=RUN_MISTAKES[0][1])
    broken = rlk(site, *RUN, cwd=tmp_path)
    assert broken.returncode == 3, broken.stdout + broken.stderr
    assert not (tmp_path / "out").exists()
    (site / "rlk_careless" / "__init__.py").write_text(_source(), encoding="utf-8")
    fixed = rlk(site, *RUN, cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stdout + fixed.stderr
    assert (tmp_path / "out" / "report.json").is_file()


def test_a_metric_that_cannot_be_built_with_its_options_is_refused_before_the_journal(
    careless, tmp_path
):
    site = careless()
    (tmp_path / "ragleaklab.toml").write_text(
        "[metrics.acme-leak]\nthreshold = 0.3\n", encoding="utf-8"
    )
    done = rlk(site, *RUN, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "$.metrics.acme-leak" in done.stderr
    assert not (tmp_path / "out").exists()


JUDGE_TYPOS = """
@frozen
class AcmeJudge:
    identiy = "acme-judge v1"

    def judge(self, case, /):
        raise NotImplementedError
"""

FITTER_TYPOS = """
@frozen
class AcmeFitter:
    def fitt(self, scores, labels, *, target_fpr, higher_is_worse=True):
        raise NotImplementedError
"""


def test_the_listing_shows_each_careless_plugin_failed_with_its_fix_and_exits_0(careless, tmp_path):
    site = careless(
        metric=RUN_MISTAKES[1][1],
        target=RUN_MISTAKES[3][1],
        reporter=RUN_MISTAKES[-1][1],
        judge=JUDGE_TYPOS,
        fitter=FITTER_TYPOS,
    )
    done = rlk(site, "plugins", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = {r["name"]: r for r in json.loads(done.stdout) if r["distribution"] == "acme-careless"}
    assert {n: r["status"] for n, r in rows.items()} == {
        "acme-pack": "ok",
        "acme-leak": "failed",
        "acme-target": "failed",
        "acme-tap": "failed",
        "acme-judge": "failed",
        "acme-fitter": "failed",
    }
    assert (
        "metric 'acme-leak' has 'reads_answers': did you mean 'reads_answer'?"
        in (rows["acme-leak"]["error"])
    )
    assert "metric 'acme-leak' has 'lower_is_wors'" in rows["acme-leak"]["error"]
    assert (
        "judge 'acme-judge' has 'identiy': did you mean 'identity'?"
        in (rows["acme-judge"]["error"])
    )
    assert (
        "fitter 'acme-fitter' has no method 'fit' (it has 'fitt': did you mean 'fit'?)"
        in (rows["acme-fitter"]["error"])
    )
    table = rlk(site, "plugins", cwd=tmp_path)
    assert table.returncode == 0
    assert "judge 'acme-judge' has 'identiy'" in table.stdout


def test_a_misspelt_fitter_refuses_calibrate_before_it_writes(careless, tmp_path):
    site = careless(fitter=FITTER_TYPOS)
    examples = Path(__file__).resolve().parents[3] / "data" / "examples"
    done = rlk(
        site, "calibrate", "--scores", str(examples / "scores.jsonl"),
        "--labels", str(examples / "labels.jsonl"), "--fitter", "acme-fitter",
        "--target-fpr", "0.05", "--out", "cal", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout + done.stderr
    assert "fitter 'acme-fitter' has no method 'fit' (it has 'fitt'" in done.stderr
    assert not (tmp_path / "cal").exists()


def test_a_helper_close_to_a_member_the_plugin_has_is_not_a_mistake(careless, tmp_path):
    """What a plugin legitimately has (a helper beside the real method, a field named like a
    member of another kind) never refuses it."""
    site = careless(
        metric="""
        @frozen
        class AcmeLeak:
            value: str = "leak_rate"  # a field: values is a declaration, not a field's name

            def score(self, case, response):
                return MetricResult({self.value: self.scores(response)})

            def scores(self, response):  # a helper beside score
                return 1.0 if "SECRET" in response.answer else 0.0
        """,
        target="""
        @define
        class AcmeTarget:
            closed: bool = False  # a flag, not the close method
            resets: int = 0
            _docs: list = field(factory=list, init=False)

            def ingest(self, documents):
                self._docs.extend(d.doc_id for d in documents)

            def answer(self, query):
                retrieved = tuple(RetrievedDocument(d) for d in self._docs[:2])
                return Response(f"fine: {query}", retrieved)
        """,
    )
    done = rlk(site, *RUN, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "out" / "report.json").is_file()
