"""The plugin contract: small protocols that packs, metrics, fitters, targets and reporters
implement.

Plugins need not inherit from these classes; the loader checks that the object it built has the
methods below (:func:`ragleaklab_core.check_contract`). Plugin classes are attrs classes (or
dataclasses) constructible with no arguments: their fields are their options, structured from the
configuration by ragleaklab's strict converter.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ragleaklab_core.values import Case, Document, FitResult, MetricResult, PackInfo, Response

if TYPE_CHECKING:
    import numpy.typing as npt


@runtime_checkable
class ThresholdFitter(Protocol):
    """Chooses the pass/fail threshold of a metric from labelled scores.

    Group ``ragleaklab.fitters``. Implementations must be deterministic: the same inputs (and the
    same options, including any seed) give the same :class:`FitResult`.

    .. versionadded:: 0.1
    """

    def fit(
        self,
        scores: npt.ArrayLike,
        labels: npt.ArrayLike,
        *,
        target_fpr: float,
        higher_is_worse: bool = True,
    ) -> FitResult:
        """Fit a threshold.

        Args:
            scores: 1-D array of finite floats, one per case.
            labels: 1-D bool array of the same length; True = positive = the attack succeeded.
            target_fpr: The largest acceptable false-positive rate, in [0, 1].
            higher_is_worse: True when a higher score means a worse (more attacked) case.

        Returns:
            The chosen threshold and its rates on the given data.

        Raises:
            InputError: The arrays are malformed (lengths, NaN, a class with no cases).
        """
        ...


@runtime_checkable
class Pack(Protocol):
    """A named, versioned attack suite: documents to plant, cases to run, default labels.

    Group ``ragleaklab.packs``. A pack may also define ``default_labels() -> bytes | None``, the
    content of its default ``labels.jsonl`` (``calibrate --pack`` uses it when no ``--labels`` is
    given). :class:`ragleaklab_core.ManifestPack` implements all of this from a ``pack.toml``.

    .. versionadded:: 0.1
    """

    def info(self) -> PackInfo:
        """The pack's name, version, type, metrics and default thresholds."""
        ...

    def documents(self) -> Iterable[Document]:
        """The documents the pack plants in the target before its cases run."""
        ...

    def cases(self) -> Iterable[Case]:
        """The pack's test cases, in a stable order."""
        ...


@runtime_checkable
class Metric(Protocol):
    """Scores one target response to one case.

    Group ``ragleaklab.metrics``. ``score`` must be pure: no network, no global state; the same
    inputs give the same result. A case the metric cannot score (say, the target did not report
    retrieved documents) yields ``MetricResult(unscorable=reason)``, never a 0.

    Optional members the runner uses when present:

    - ``for_corpus(documents: Sequence[Document]) -> Metric``: a metric bound to the pack's
      documents (say, an index of the private ones), built once per pack before any case runs;
    - ``lower_is_worse: frozenset[str]``: names of values where a *lower* value is worse (such as
      a recall); every other value is higher-is-worse;
    - ``primary_for: Mapping[str, str]``: the value calibrated for packs of each pack type that
      name no ``primary_metric`` (``"*"``: any type), read by
      :func:`ragleaklab_core.primary_metric_for`. Added in 0.2;
    - ``values: tuple[str, ...]``: the name of every value ``score`` can return (a case may
      lack some), read by :func:`ragleaklab_core.metric_values` without building the metric. The
      runner attributes a value that no case produced to its metric by it; harnesses that must
      name values before any case is scored (the inspect_ai scorers' per-value metrics) use it.
      Without it, value names are known only from the results. Added in 0.2;
    - ``subject_value: str``: a value counting what the metric found to judge in an answer
      (the citation metric's ``cited``). A pack in which it is 0 for every scored case
      tested nothing (the answers were not in a form the metric reads, say) and is not a pass:
      its status is ``error``, with that reason. Added in 0.2;
    - ``reads_answer: bool`` (default true): whether ``score`` judges the answer text. A pack
      whose every answer is empty is ``error`` (not tested) when one of its metrics reads the
      answer; a metric that judges only the retrieved documents says ``False``. Added in 0.2.

    And one that ``ragleaklab pack validate`` uses, so that the core knows no metric's
    ground-truth keys:

    - ``check_ground_truth(ground_truths, texts)``, a classmethod: given every case's
      ``ground_truth`` and every document's text, yield ``(case index, key, item index or None,
      problem)`` for each of its own keys that is malformed or refers to nothing (the claim
      metric: a claim no document states). Added in 0.2.

    .. versionadded:: 0.1
    """

    def score(self, case: Case, response: Response) -> MetricResult:
        """Return this metric's named values and evidence for *response* to *case*."""
        ...


@runtime_checkable
class Target(Protocol):
    """The RAG system under test.

    Group ``ragleaklab.targets``. It answers a query with an answer and, when it can, the documents
    it retrieved; it may accept the pack's documents to ingest before the cases run. The runner
    builds a fresh target for every pack, so one pack's documents never leak into another's run,
    and calls its optional ``close()`` when the pack is done.

    Optional members the runner uses when present:

    - ``async aanswer(query) -> Response``: an asynchronous answer; the runner then asks up to
      ``run.concurrency`` cases at once (network targets);
    - ``async aingest(documents)`` / ``async aclose()``: asynchronous forms of the above;
    - ``reset()`` / ``async areset()``: remove what ``ingest`` planted (called before ``close``);
    - a keyword parameter ``principal`` on ``answer`` (and ``aanswer``, which the runner calls
      when present): the target can ask as a case's principal (a user or tenant id,
      :attr:`Case.principal`). The runner reads the signature once per pack and passes
      ``principal=`` only for cases that have one, and never asks such a case anonymously: a
      pack with one is refused before the run (:class:`PrincipalUnsupported`, exit 3) on a
      target without the parameter, or one declaring ``carries_principal = False`` (support
      that depends on its options: the http target without ``{principal}`` in a template).
      A target that can only judge when asked raises for such a case itself. Added in 0.2.

    A target reports failures by raising: the runner records the case as errored with the
    exception's message, so messages must never contain secrets.

    .. versionadded:: 0.1
    """

    def ingest(self, documents: Iterable[Document]) -> Any:
        """Load *documents* into the system under test (a no-op for systems that cannot)."""
        ...

    def answer(self, query: str) -> Response:
        """Answer *query* and report what was retrieved."""
        ...


@runtime_checkable
class Reporter(Protocol):
    """Renders a finished run as one file format (JUnit XML, SARIF, Markdown, HTML, ...).

    Group ``ragleaklab.reporters``. ``ragleaklab report RUN --format NAME`` and ``ragleaklab run
    --report NAME=FILE`` reach every installed reporter by its entry-point name. ``render`` must
    be pure and deterministic: the same report (and options) give the same text, byte for byte,
    so the file a run writes and the one ``ragleaklab report`` writes from its ``report.json``
    are identical. It receives a :class:`ragleaklab_core.RunReport`: the run's verdict (a
    :class:`~ragleaklab_core.Verdict`), exit code, settings, target, totals and packs as typed
    fields, and the whole parsed ``report.json`` as ``report.document``. (The parameter is
    annotated ``Any`` here only because this module is the bottom of the core and the report
    model reads the gate's verdict type, which sits above it.)

    A report it cannot render (one an older ragleaklab wrote, missing a field it needs) raises
    :class:`~ragleaklab_core.InputError` saying which ``$.path``; ``ragleaklab report`` then
    exits 2 naming the file. Anything a target wrote (answers, evidence, errors) is hostile:
    escape it for the format.

    Optional members ragleaklab reads when present (on the class; none is required):

    - ``description: str``: what the reporter writes, one short phrase (``run --help`` shows
      it, after "Also write");
    - ``suffix: str``: the file suffix of what it writes, with the dot (``".xml"``);
    - ``accepts: frozenset[str]``: the keyword options ``render`` accepts besides the report.
      The only one ragleaklab passes today is ``calibration``, the parsed
      ``calibration_report.json`` given to ``ragleaklab report --calibration``; that flag is
      refused for a reporter that does not accept it;
    - ``shorthand: bool`` (default false): ``ragleaklab run`` also offers ``--NAME FILE`` for it,
      the same as ``--report NAME=FILE`` (the built-ins' ``--junit``, ``--sarif``,
      ``--markdown`` and ``--html``). Its name must not be one of ``run``'s own options;
    - ``step_summary: bool`` (default false): under GitHub Actions, ``ragleaklab run`` appends
      its rendering to ``$GITHUB_STEP_SUMMARY`` (the built-in Markdown reporter). When several
      installed reporters say so, the first by name is used.

    .. versionadded:: 0.2
    """

    def render(self, report: Any, /, **options: Any) -> str:
        """*report* (a :class:`ragleaklab_core.RunReport`) in this reporter's format."""
        ...


__all__ = ["Metric", "Pack", "Reporter", "Target", "ThresholdFitter"]
