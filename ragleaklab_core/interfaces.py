"""The plugin contract: small protocols that packs, metrics, fitters, targets and reporters
implement.

Plugins need not inherit from these classes; the loader checks that the object it built has the
methods below (:func:`ragleaklab_core.check_contract`). Plugin classes are attrs classes (or
dataclasses) constructible with no arguments: their fields are their options, structured from the
configuration by ragleaklab's strict converter.

Beyond the methods every plugin must have, the core reads optional members when a plugin defines
them. Each is declared once, below, in a table per group (:data:`METRIC_MEMBERS`,
:data:`TARGET_MEMBERS`, :data:`PACK_MEMBERS`, :data:`FITTER_MEMBERS`), and read once, when the
plugin is loaded, into a frozen record (:class:`MetricTraits`, :class:`TargetTraits`,
:class:`PackTraits`, :class:`FitterTraits`) that the core uses instead of looking the members up
itself. A public attribute one edit away from a member the plugin lacks, and not declared itself,
is refused when the plugin is loaded (:func:`misspelt_members`): ``reads_answers`` is not silently
ignored.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import attrs
from attrs import field, frozen

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

    Group ``ragleaklab.packs``. Its optional members (``default_labels() -> bytes | None``, the
    content of its default ``labels.jsonl``, and the rest) are declared in :data:`PACK_MEMBERS`
    and read once at load into :class:`PackTraits`. :class:`ragleaklab_core.ManifestPack`
    implements all of this from a ``pack.toml``.

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

    Optional members the core reads when present (``for_corpus``, ``lower_is_worse``,
    ``primary_for``, ``values``, ``subject_value``, ``reads_answer``, ``check_ground_truth``...)
    are declared, with their meaning, in :data:`METRIC_MEMBERS`, and read once at load into
    :class:`MetricTraits`.

    .. versionadded:: 0.1
    """

    def score(self, case: Case, response: Response) -> MetricResult:
        """Return this metric's named values and evidence for *response* to *case*."""
        ...


@runtime_checkable
class Target(Protocol):
    """The RAG system under test.

    Group ``ragleaklab.targets``. It answers a query with an answer and, when it can, the documents
    it retrieved; it may accept the pack's documents to ingest before the cases run. A target
    may define only the asynchronous forms (``aanswer`` without ``answer``, ``aingest`` without
    ``ingest``): the loader accepts either form of each. The runner builds a fresh target for
    every pack, so one pack's documents never leak into another's run, and calls its optional
    ``close()`` when the pack is done.

    Optional members the core reads when present (``aanswer``, ``aingest``, ``reset``/``areset``,
    ``close``/``aclose``, a ``principal`` keyword, ``carries_principal``, ``isolation``,
    ``thread_safe``, ``ingest_scope``, ``answer_case``...) are declared, with their meaning, in
    :data:`TARGET_MEMBERS`, and read once at load into :class:`TargetTraits`. A case with a
    principal is never asked anonymously: a pack with one is refused before the run
    (``PrincipalUnsupported``, exit 3) on a target that cannot carry it.

    A target reports failures by raising: the runner records the case as errored with the
    exception's message, so messages must never contain secrets.

    .. versionadded:: 0.1
    .. versionchanged:: 0.2
        A target may define ``aanswer`` and ``aingest`` alone.
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
      ragleaklab passes two: ``calibration``, the parsed ``calibration_report.json`` given to
      ``ragleaklab report --calibration``, and ``max_chars``, the cap on the length of the
      rendering (``--markdown-max-chars``, ``[run] markdown_max_chars``; 0: no cap; under
      GitHub Actions the step summary's cap too); a flag is refused for a reporter that does
      not accept its option;
    - ``shorthand: bool | str`` (default false): ``ragleaklab run`` also offers ``--NAME FILE``
      for it (``True``; a string names a flag of its own), the same as ``--report NAME=FILE``
      (the built-ins' ``--junit``, ``--sarif``, ``--markdown`` and ``--html``). The flag must be
      lowercase words joined by dashes and not one of ``run``'s own options; otherwise the
      reporter gets none, with a warning;
    - ``step_summary: bool`` (default false): under GitHub Actions, ``ragleaklab run`` appends
      its rendering to ``$GITHUB_STEP_SUMMARY`` (the built-in Markdown reporter). When several
      installed reporters say so, the first by name is used.

    .. versionadded:: 0.2
    """

    def render(self, report: Any, /, **options: Any) -> str:
        """*report* (a :class:`ragleaklab_core.RunReport`) in this reporter's format."""
        ...


class Judge(Protocol):
    """Decides whether an attack succeeded in one answered case, as a reviewer would.

    Group ``ragleaklab.judges``. ``ragleaklab label judge RUN_DIR --judge NAME`` asks it about
    every answer of a run and writes its verdicts as a review file whose labels say
    ``label_source = "judge"`` and who judged (:attr:`identity`). A judge must decide from what
    a reviewer sees (the query, the answer, the retrieved documents, the case's ground truth),
    never from a metric's score: labels defined by the metric they calibrate measure nothing.

    ``judge`` is called from one thread, once per answer; it may raise
    :class:`~ragleaklab_core.PluginRuntimeError` (or any exception) for an answer it cannot
    judge: that answer is left unlabelled, with the error, never guessed (and never counted as
    a negative). The answer and the documents are written by the system under test, and through
    it by an attacker: a judge reads them as data (the built-in ``openai-compatible`` fences them
    behind a fresh random marker its reply must echo) and sees them whole, or raises with the
    reason, never cutting them silently. An exception with ``transport_failure = True`` (or a
    ``ConnectionError`` or ``TimeoutError``) says its endpoint cannot be reached: ``label
    judge`` then stops at once instead of failing every answer. ``ragleaklab label
    judge-check`` measures how far text the attacker writes steers it.

    Optional members ragleaklab reads when present:

    - ``identity: str``: what makes its verdicts reproducible (a model and a digest of its
      prompts); recorded as ``labelled_by``. Default: the entry-point name;
    - ``description: str``: one short phrase for ``ragleaklab plugins``.

    .. versionadded:: 0.3
    """

    def judge(self, case: Any, /) -> Any:
        """The :class:`~ragleaklab_core.JudgeVerdict` on *case*, a
        :class:`~ragleaklab_core.JudgedCase`."""
        ...


@frozen
class Member:
    """One optional member of a plugin group that the core reads when a plugin defines it.

    Attributes:
        name: The attribute's name on the plugin.
        kind: What it is: ``method``, ``async method``, ``classmethod``, ``attribute`` (an
            instance or class attribute, or a property), ``class attribute`` (read from the
            class, without building the plugin), ``parameter`` (a keyword of a method) or
            ``exception attribute`` (on the exceptions the plugin raises).
        meaning: What the core does with it.
        since: The ragleaklab version that first read it.
    """

    name: str
    kind: str
    meaning: str
    since: str

    @property
    def is_attribute(self) -> bool:
        """Whether it is looked up on the plugin's class or instance (a parameter or an
        exception's attribute is not, so a plugin attribute cannot misspell it)."""
        return self.kind not in ("parameter", "exception attribute")


#: The optional members of a metric (group ``ragleaklab.metrics``).
METRIC_MEMBERS: tuple[Member, ...] = (
    Member(
        "for_corpus",
        "method",
        "for_corpus(documents) -> Metric: a metric bound to the pack's documents (say, an index "
        "of the private ones), built once per pack before any case runs",
        "0.1",
    ),
    Member(
        "lower_is_worse",
        "attribute",
        "frozenset of value names where a lower value is worse (a recall); every other value is "
        "higher-is-worse",
        "0.1",
    ),
    Member(
        "primary_for",
        "class attribute",
        "mapping from pack type to the value calibrated for packs of that type that name no "
        'primary_metric ("*": any type), read by primary_metric_for',
        "0.2",
    ),
    Member(
        "values",
        "attribute",
        "tuple of the name of every value score can return (a case may lack some), read by "
        "metric_values without building the metric; without it value names are known only from "
        "the results",
        "0.2",
    ),
    Member(
        "VALUES",
        "class attribute",
        "the same as values, read from the class when values is not defined",
        "0.2",
    ),
    Member(
        "subject_value",
        "attribute",
        "a value counting what the metric found to judge in an answer: a pack in which it is 0 "
        "for every scored case tested nothing and is an error, not a pass",
        "0.2",
    ),
    Member(
        "reads_answer",
        "attribute",
        "bool, default true: whether score judges the answer text; a pack whose every answer is "
        "empty is an error (not tested) when one of its metrics reads the answer",
        "0.2",
    ),
    Member(
        "check_ground_truth",
        "classmethod",
        "check_ground_truth(ground_truths, texts) yields (case index, key, item index or None, "
        "problem) for each of the metric's own ground-truth keys that is malformed or refers to "
        "nothing; used by `ragleaklab pack validate`",
        "0.2",
    ),
)

#: The optional members of a target (group ``ragleaklab.targets``).
TARGET_MEMBERS: tuple[Member, ...] = (
    Member(
        "aanswer",
        "async method",
        "aanswer(query) -> Response: an asynchronous answer, used instead of answer; the runner "
        "then asks up to run.concurrency cases at once. A target may define it alone",
        "0.1",
    ),
    Member(
        "aingest",
        "async method",
        "aingest(documents): asynchronous ingest, used instead of ingest; a target may define it "
        "alone",
        "0.1",
    ),
    Member("close", "method", "close(): release clients when the pack is done", "0.1"),
    Member("aclose", "async method", "aclose(): asynchronous close, used instead of it", "0.1"),
    Member(
        "reset",
        "method",
        "reset(): remove what ingest planted, called before close (even after a partial ingest)",
        "0.1",
    ),
    Member("areset", "async method", "areset(): asynchronous reset, used instead of it", "0.1"),
    Member(
        "principal",
        "parameter",
        "a keyword parameter of answer (of aanswer when the target has it): the target can ask as "
        "a case's principal (a user or tenant id); a pack with one is refused on a target without "
        "it",
        "0.2",
    ),
    Member(
        "carries_principal",
        "attribute",
        "bool: False when support for principals depends on options and they do not carry one "
        "(the http target without {principal} in a template); True when they always do; absent: "
        "the target judges per case",
        "0.2",
    ),
    Member(
        "isolation",
        "attribute",
        '"fresh" (a new instance holds no earlier pack\'s state), "reset" (reset removes what '
        'ingest planted) or "shared" (ingested documents outlive it); absent: "reset" with a reset '
        'hook, else "fresh"',
        "0.2",
    ),
    Member(
        "thread_safe",
        "attribute",
        "bool: a synchronous answer may run on worker threads, up to run.concurrency at once",
        "0.2",
    ),
    Member(
        "ingest_scope",
        "attribute",
        '"process" (documents live in the target instance: each Ray worker ingests, the default) '
        'or "system" (an external system every process reaches: the driver ingests once)',
        "0.2",
    ),
    Member(
        "answer_case",
        "method",
        "answer_case(test_id, epoch, query, principal=None) -> Response: answers by case and "
        "epoch (a replayed recording); used instead of answer and aanswer",
        "0.2",
    ),
    Member(
        "plants_into",
        "attribute",
        "str | None: the identity of the store ingest plants into when what it plants outlives "
        "the process (a directory and collection, a database without its password, a service's "
        "URL without credentials); None: nothing outlives it. Never a secret",
        "0.3",
    ),
    Member(
        "planted_ids",
        "method",
        "planted_ids(documents, *, run) -> Sequence[str]: the ids the next ingest gives the "
        "documents, as the store knows them (run is unique to the run and pack); recorded in "
        "<out>/planted.jsonl before ingest. With plants_into, a target must define it. The "
        "same documents and run must give the same ids again: `ragleaklab cleanup` removes "
        "only the ids it derives again from the ledger's run and pack",
        "0.3",
    ),
    Member(
        "remove_planted",
        "method",
        "remove_planted(ids) -> Sequence[str]: remove those ids from the store; return the ones "
        "it still holds ([] when it cannot tell). Used by `ragleaklab cleanup` and by a later run "
        "in the same output directory",
        "0.3",
    ),
    Member(
        "aremove_planted",
        "async method",
        "aremove_planted(ids): asynchronous remove_planted, used instead of it",
        "0.3",
    ),
    Member(
        "planted_runs",
        "method",
        "planted_runs(ids) -> Mapping[str, str | None] | None: for each of ids the store holds, "
        "the ragleaklab_run tag its metadata carries (None: untagged); ids it does not hold left "
        "out; None: the store cannot tell. Before removing what a ledger lists, an id held "
        "untagged or tagged by another run is left alone",
        "0.3",
    ),
    Member(
        "aplanted_runs",
        "async method",
        "aplanted_runs(ids): asynchronous planted_runs, used instead of it",
        "0.3",
    ),
    Member(
        "transport_failure",
        "exception attribute",
        "bool on an exception the target raises: True when the system could not be reached "
        "(consecutive ones stop the pack), False when it answered badly; absent: the standard "
        "library's connection errors and time-outs count",
        "0.2",
    ),
)

#: The optional members of a pack (group ``ragleaklab.packs``).
PACK_MEMBERS: tuple[Member, ...] = (
    Member(
        "default_labels",
        "method",
        "default_labels() -> bytes | None: the content of the pack's default labels.jsonl, used by "
        "`calibrate --pack` when no --labels is given",
        "0.1",
    ),
    Member(
        "label_provenance",
        "method",
        "label_provenance() -> LabelProvenance | None: where the default labels come from and "
        "the target they were observed on; defaults fitted on another target do not gate a run "
        "as calibrated",
        "0.2",
    ),
    Member(
        "labels_source",
        "method",
        "labels_source() -> str | None: how the default labels are named in messages and label "
        "origins",
        "0.2",
    ),
    Member(
        "data_package",
        "class attribute",
        "str: the package holding a ManifestPack's pack.toml, documents and cases",
        "0.1",
    ),
)

#: The optional members of a threshold fitter (group ``ragleaklab.fitters``): none yet.
FITTER_MEMBERS: tuple[Member, ...] = ()

#: The optional members of a reporter (group ``ragleaklab.reporters``), read from its class.
REPORTER_MEMBERS: tuple[Member, ...] = (
    Member(
        "description",
        "class attribute",
        "what the reporter writes, one short phrase (`run --help` shows it after 'Also write')",
        "0.2",
    ),
    Member("suffix", "class attribute", "the file suffix of what it writes, with the dot", "0.2"),
    Member(
        "accepts",
        "class attribute",
        "the keyword options `render` accepts besides the report (today: `calibration`, the "
        "parsed calibration report of `ragleaklab report --calibration`, and `max_chars`, the "
        "cap of `--markdown-max-chars` and of the step summary; a flag is refused for a "
        "reporter that does not accept its option)",
        "0.2",
    ),
    Member(
        "shorthand",
        "class attribute",
        "`ragleaklab run` also offers `--NAME FILE` for it (True; a string names a flag of its "
        "own), the same as `--report NAME=FILE`; a flag that cannot be one of `run` (uppercase, "
        "spaces, an option `run` has, claimed twice) is left out with a warning",
        "0.2",
    ),
    Member(
        "step_summary",
        "class attribute",
        "under GitHub Actions `ragleaklab run` appends its rendering to `$GITHUB_STEP_SUMMARY` "
        "(the first such reporter by name)",
        "0.2",
    ),
)

#: The optional members of a judge (group ``ragleaklab.judges``).
JUDGE_MEMBERS: tuple[Member, ...] = (
    Member(
        "identity",
        "attribute",
        "what makes its verdicts reproducible (a model, a digest of its prompts): recorded as the "
        "labels' `labelled_by` (default: the entry-point name)",
        "0.3",
    ),
    Member("description", "class attribute", "what it judges with, one short phrase", "0.3"),
)

#: Each entry-point group's required protocol and optional members.
PROTOCOLS: Mapping[str, type] = {
    "ragleaklab.packs": Pack,
    "ragleaklab.metrics": Metric,
    "ragleaklab.fitters": ThresholdFitter,
    "ragleaklab.targets": Target,
    "ragleaklab.reporters": Reporter,
    "ragleaklab.judges": Judge,
}
OPTIONAL_MEMBERS: Mapping[str, tuple[Member, ...]] = {
    "ragleaklab.packs": PACK_MEMBERS,
    "ragleaklab.metrics": METRIC_MEMBERS,
    "ragleaklab.fitters": FITTER_MEMBERS,
    "ragleaklab.targets": TARGET_MEMBERS,
    "ragleaklab.reporters": REPORTER_MEMBERS,
    "ragleaklab.judges": JUDGE_MEMBERS,
}

#: The isolations a target may declare (its ``isolation``).
ISOLATIONS = ("fresh", "reset", "shared")
#: The ingest scopes a target may declare (its ``ingest_scope``).
INGEST_SCOPES = ("process", "system")


def required_members(group: str) -> tuple[str, ...]:
    """The methods every plugin of *group* must have: its protocol's public members."""
    protocol = PROTOCOLS[group]
    return tuple(n for n in vars(protocol) if not n.startswith("_"))  # 3.11-safe listing


def _has(obj: Any, name: str) -> bool:
    return hasattr(obj, name)


def _callable(obj: Any, name: str) -> bool:
    return callable(getattr(obj, name, None))


def _present(obj: Any, group: str) -> frozenset[str]:
    cls = obj if isinstance(obj, type) else type(obj)
    found = set()
    for member in OPTIONAL_MEMBERS[group]:
        if member.is_attribute and (hasattr(obj, member.name) or hasattr(cls, member.name)):
            found.add(member.name)
    return frozenset(found)


@frozen
class MetricTraits:
    """What a metric declares beyond ``score`` (:data:`METRIC_MEMBERS`), read once at load.

    Attributes:
        values: Its declared value names, in its order (``values``, else ``VALUES``); ().
        lower_is_worse: Value names where a lower value is worse.
        primary_for: Pack type -> the value calibrated for it (non-empty names only).
        subject_value: The value counting what it found to judge, or None.
        reads_answer: Whether it judges the answer text.
        for_corpus: Whether it binds to a pack's documents (``for_corpus``).
        check_ground_truth: Whether it checks its own ground-truth keys.
        present: The optional members it defines.
        problems: Declarations of the wrong shape (what a contract test reports).
    """

    values: tuple[str, ...] = ()
    lower_is_worse: frozenset[str] = frozenset()
    primary_for: Mapping[str, str] = field(factory=dict)
    subject_value: str | None = None
    reads_answer: bool = True
    for_corpus: bool = False
    check_ground_truth: bool = False
    present: frozenset[str] = frozenset()
    problems: tuple[str, ...] = ()


def metric_traits(metric: Any) -> MetricTraits:
    """Read a metric's optional members (:data:`METRIC_MEMBERS`); *metric* is an instance or,
    for what a class declares without being built, the class."""
    cls = metric if isinstance(metric, type) else type(metric)
    problems = []
    names: Any = getattr(metric, "values", None) or getattr(cls, "VALUES", None) or ()
    if isinstance(names, Mapping):
        names = tuple(names)
    if isinstance(names, frozenset | set):
        names = sorted(n for n in names if isinstance(n, str))
    if not isinstance(names, tuple | list):
        names = ()
    lower: Any = getattr(metric, "lower_is_worse", frozenset())
    if isinstance(lower, Collection) and all(isinstance(n, str) for n in lower):
        lower_names = frozenset(lower)
    else:
        problems.append(f"lower_is_worse must be a collection of value names, got {lower!r}")
        # The runner has always added whatever the collection held; keep that for iterables.
        lower_names = frozenset(lower) if isinstance(lower, Iterable) else frozenset()
    table = getattr(cls, "primary_for", None)
    primary = (
        {k: v for k, v in table.items() if isinstance(v, str) and v}
        if isinstance(table, Mapping)
        else {}
    )
    subject = getattr(metric, "subject_value", None)
    return MetricTraits(
        values=tuple(dict.fromkeys(n for n in names if isinstance(n, str))),
        lower_is_worse=lower_names,
        primary_for=primary,
        subject_value=subject if isinstance(subject, str) else None,
        reads_answer=bool(getattr(metric, "reads_answer", True)),
        for_corpus=_callable(metric, "for_corpus"),
        check_ground_truth=_callable(cls, "check_ground_truth"),
        present=_present(metric, "ragleaklab.metrics"),
        problems=tuple(problems),
    )


@frozen
class TargetTraits:
    """What a target declares beyond ``ingest`` and ``answer`` (:data:`TARGET_MEMBERS`), read
    once at load.

    Attributes:
        answer, aanswer, ingest, aingest, answer_case: Whether it has each method (an async
            form is used instead of the plain one).
        reset, areset, close, aclose: Whether it has each callable hook.
        thread_safe: Whether a synchronous answer may run on worker threads.
        isolation: How it keeps packs apart (declared, or derived from its reset hooks).
        ingest_scope: Where its documents live.
        accepts_principal: Whether the answering method takes a ``principal`` keyword.
        carries_principal: Its declaration, or None.
        planted_ids, remove_planted, aremove_planted: Whether it has each method (what it plants
            outlives the process when its ``plants_into``, read when it is used, names a store).
        planted_runs, aplanted_runs: Whether it can read back the run a planted id is tagged
            with (checked before a ledger's ids are removed).
        present: The optional members it defines.
    """

    answer: bool = True
    aanswer: bool = False
    ingest: bool = True
    aingest: bool = False
    answer_case: bool = False
    reset: bool = False
    areset: bool = False
    close: bool = False
    aclose: bool = False
    thread_safe: bool = False
    isolation: str = "fresh"
    ingest_scope: str = "process"
    accepts_principal: bool = False
    carries_principal: bool | None = None
    planted_ids: bool = False
    remove_planted: bool = False
    aremove_planted: bool = False
    planted_runs: bool = False
    aplanted_runs: bool = False
    present: frozenset[str] = frozenset()

    @property
    def principal_support(self) -> bool | None:
        """Whether it can ask as a principal as far as is known before a run: False without the
        keyword or when it declares ``carries_principal = False``; None: it judges per case."""
        if not self.accepts_principal:
            return False
        return self.carries_principal


def _accepts_principal(target: Any) -> bool:
    # The signature is the declaration, rather than a flag, because a target cannot then claim
    # support its method does not have; **kwargs does not count (a wrapper that forwards
    # everything may drop it on the floor).
    method = getattr(target, "aanswer", None) or getattr(target, "answer", None)
    if method is None:
        return False
    try:
        parameters = inspect.signature(method).parameters
    except (TypeError, ValueError):  # a builtin or extension method: no signature to read
        return False
    parameter = parameters.get("principal")
    return parameter is not None and parameter.kind in (
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        inspect.Parameter.KEYWORD_ONLY,
    )


def target_traits(target: Any) -> TargetTraits:
    """Read a target's optional members (:data:`TARGET_MEMBERS`)."""
    reset, areset = _callable(target, "reset"), _callable(target, "areset")
    isolation = getattr(target, "isolation", None)
    if isolation not in ISOLATIONS:
        isolation = "reset" if reset or areset else "fresh"
    scope = getattr(target, "ingest_scope", "process")
    carries = getattr(target, "carries_principal", None)
    return TargetTraits(
        answer=_callable(target, "answer"),
        aanswer=_has(target, "aanswer"),
        ingest=_callable(target, "ingest"),
        aingest=_has(target, "aingest"),
        answer_case=_has(target, "answer_case"),
        reset=reset,
        areset=areset,
        close=_callable(target, "close"),
        aclose=_callable(target, "aclose"),
        thread_safe=bool(getattr(target, "thread_safe", False)),
        isolation=str(isolation),
        ingest_scope=scope if scope in INGEST_SCOPES else "process",
        accepts_principal=_accepts_principal(target),
        carries_principal=carries if isinstance(carries, bool) else None,
        planted_ids=_callable(target, "planted_ids"),
        remove_planted=_callable(target, "remove_planted"),
        aremove_planted=_callable(target, "aremove_planted"),
        planted_runs=_callable(target, "planted_runs"),
        aplanted_runs=_callable(target, "aplanted_runs"),
        present=_present(target, "ragleaklab.targets"),
    )


@frozen
class PackTraits:
    """What a pack declares beyond ``info``, ``documents`` and ``cases`` (:data:`PACK_MEMBERS`),
    read once at load.

    Attributes:
        default_labels, label_provenance, labels_source: Whether it has each method.
        data_package: Its class's ``data_package`` when it is a string, else None.
        present: The optional members it defines.
    """

    default_labels: bool = False
    label_provenance: bool = False
    labels_source: bool = False
    data_package: str | None = None
    present: frozenset[str] = frozenset()


def pack_traits(pack: Any) -> PackTraits:
    """Read a pack's optional members (:data:`PACK_MEMBERS`)."""
    cls = pack if isinstance(pack, type) else type(pack)
    package = getattr(cls, "data_package", None)
    return PackTraits(
        default_labels=_callable(pack, "default_labels"),
        label_provenance=_callable(pack, "label_provenance"),
        labels_source=_callable(pack, "labels_source"),
        data_package=package if isinstance(package, str) else None,
        present=_present(pack, "ragleaklab.packs"),
    )


@frozen
class FitterTraits:
    """What a fitter declares beyond ``fit`` (:data:`FITTER_MEMBERS`: nothing yet)."""

    present: frozenset[str] = frozenset()


@frozen
class ReporterTraits:
    """What a reporter declares beyond ``render`` (:data:`REPORTER_MEMBERS`), read from its class
    or instance; None or absent means the default."""

    description: str | None = None
    suffix: str | None = None
    accepts: frozenset[str] = frozenset()
    shorthand: bool = False
    step_summary: bool = False
    present: frozenset[str] = frozenset()


def _read_member(obj: Any, name: str) -> Any:
    """*obj*'s *name*, None when absent or when reading it raises (a plugin's own property or
    descriptor: declarations are read where a crash would break the command line)."""
    try:
        return getattr(obj, name, None)
    except Exception:
        return None


def reporter_traits(obj: Any) -> ReporterTraits:
    """The :class:`ReporterTraits` of *obj*, a reporter class or instance."""
    found = {m.name: _read_member(obj, m.name) for m in REPORTER_MEMBERS}
    accepts = found["accepts"]
    return ReporterTraits(
        description=found["description"] if isinstance(found["description"], str) else None,
        suffix=found["suffix"] if isinstance(found["suffix"], str) else None,
        accepts=frozenset(accepts)
        if isinstance(accepts, Iterable) and not isinstance(accepts, str)
        else frozenset(),
        shorthand=found["shorthand"] is True,
        step_summary=found["step_summary"] is True,
        present=frozenset(name for name, value in found.items() if value is not None),
    )


Traits = MetricTraits | TargetTraits | PackTraits | FitterTraits | ReporterTraits


def read_traits(group: str, obj: Any) -> Traits | None:
    """The traits record of *obj*, a plugin of *group*; None for a group that is not one of the
    four plugin groups."""
    if group == "ragleaklab.metrics":
        return metric_traits(obj)
    if group == "ragleaklab.targets":
        return target_traits(obj)
    if group == "ragleaklab.packs":
        return pack_traits(obj)
    if group == "ragleaklab.fitters":
        return FitterTraits()
    if group == "ragleaklab.reporters":
        return reporter_traits(obj)
    return None


@frozen
class Misspelling:
    """A public attribute of a plugin class that looks like a member the plugin lacks.

    Attributes:
        attribute: The attribute the plugin defines.
        suggestions: The members it is close to (each one the plugin lacks), the likeliest first.
    """

    attribute: str
    suggestions: tuple[str, ...]

    def message(self, group: str, name: str) -> str:
        """What is wrong and the fix, for a plugin *name* of *group*: ``metric 'acme-x' has no
        method 'score' (it has 'scores': did you mean 'score'?)`` for a required member,
        ``metric 'acme-x' has 'reads_answers': did you mean 'reads_answer'? ...`` for an
        optional one."""
        kind = group_kind(group)
        meant = self.suggestions[0]
        if group in PROTOCOLS and meant in required_members(group):
            return (
                f"{kind} {name!r} has no method {meant!r} "
                f"(it has {self.attribute!r}: did you mean {meant!r}?)"
            )
        options = " or ".join(repr(s) for s in self.suggestions)
        return (
            f"{kind} {name!r} has {self.attribute!r}: did you mean {options}? ragleaklab reads "
            f"only {meant!r}, so {self.attribute!r} would be ignored: rename it, or make it "
            f"private ({'_' + self.attribute!r}) if it is the plugin's own"
        )


def group_kind(group: str) -> str:
    """What one plugin of *group* is called in messages: ``ragleaklab.metrics`` -> ``metric``."""
    return group.rsplit(".", 1)[-1].removesuffix("s")


#: Packages whose classes are not the plugin's own: what a plugin class may inherit from or be
#: built with (object, Protocol, Generic); the protocols of this module are skipped too.
_FOREIGN_PACKAGES = frozenset({"builtins", "typing", "abc", "attr", "attrs"})


def _own_attributes(cls: type) -> set[str]:
    """The public attribute names the plugin's own class hierarchy defines: class bodies (methods,
    properties, class attributes, slots) and init fields, not object's or attrs' internals."""
    names: set[str] = set()
    for klass in cls.__mro__:
        module = klass.__module__
        if module == __name__ or module.split(".")[0] in _FOREIGN_PACKAGES:
            continue
        names.update(vars(klass))
        names.update(getattr(klass, "__annotations__", {}))
    if attrs.has(cls):
        names.update(a.name for a in attrs.fields(cls))
    elif dataclasses.is_dataclass(cls):
        names.update(f.name for f in dataclasses.fields(cls))
    return {n for n in names if not n.startswith("_")}


def _one_edit(a: str, b: str) -> bool:
    """Whether *a* becomes *b* by one insertion, deletion, substitution or swap of neighbours."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return (
            len(diff) == 2
            and diff[1] == diff[0] + 1
            and a[diff[0]] == b[diff[1]]
            and (a[diff[1]] == b[diff[0]])
        )
    short, long = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long[i]:
        i += 1
    return short[i:] == long[i + 1 :]


def _squashed(name: str) -> str:
    return name.replace("_", "").lower()


#: How alike (difflib's ratio) an attribute must be to a declared member, beyond one edit, to be
#: reported: high enough that a field such as ``answer_cache`` is not taken for ``answer_case``.
CLOSE_MATCH = 0.9

#: Members that stand for each other: a plugin with either of a pair lacks neither (an async-only
#: target's ``aanswer`` is not a misspelt ``answer``, a metric's ``VALUES`` serves as ``values``).
ALTERNATIVES: Mapping[str, Mapping[str, str]] = {
    "ragleaklab.metrics": {"values": "VALUES", "VALUES": "values"},
    "ragleaklab.targets": {
        **{m: f"a{m}" for m in ("answer", "ingest", "close", "reset", "remove_planted")},
        **{f"a{m}": m for m in ("answer", "ingest", "close", "reset", "remove_planted")},
    },
}

_METHOD_KINDS = frozenset({"method", "async method", "classmethod"})


def _method_like(cls: type, attribute: str) -> bool:
    """Whether *cls*'s own *attribute* is something called (a function, a classmethod or
    staticmethod, a callable object), rather than a value (a field, a property, data)."""
    for klass in cls.__mro__:
        if attribute in vars(klass):
            raw = vars(klass)[attribute]
            if isinstance(raw, classmethod | staticmethod):
                return True
            return callable(raw) and not isinstance(raw, type | property)
    return False  # an attrs or dataclass field without a class-level value: data


_UNKNOWN = object()


def _collection(value: Any) -> bool:
    return value is None or (isinstance(value, Collection) and not isinstance(value, str | bytes))


def _text(value: Any) -> bool:
    return value is None or isinstance(value, str)


#: What a value member holds, where a plugin's own field of that name-shape could hold something
#: else: a field ``value = "leak_rate"`` is no misspelt ``values`` (a collection of names).
_SHAPES: Mapping[str, Callable[[Any], bool]] = {
    **dict.fromkeys(("values", "VALUES", "lower_is_worse", "accepts", "primary_for"), _collection),
    **dict.fromkeys(
        (
            "description",
            "suffix",
            "isolation",
            "ingest_scope",
            "subject_value",
            "identity",
            "data_package",
            "plants_into",
        ),
        _text,
    ),
}


def _value_of(cls: type, attribute: str) -> Any:
    """The value *cls* gives *attribute* without being built (a class attribute, or an attrs or
    dataclass field's plain default); ``_UNKNOWN`` when only an instance would tell."""
    fields: Any = ()
    if attrs.has(cls):
        fields = [(a.name, a.default) for a in attrs.fields(cls)]
    elif dataclasses.is_dataclass(cls):
        fields = [(f.name, f.default) for f in dataclasses.fields(cls)]
    for name, default in fields:  # first: a slotted class holds a descriptor under the name
        if name == attribute:
            plain = default is not attrs.NOTHING and default is not dataclasses.MISSING
            return default if plain and not isinstance(default, attrs.Factory) else _UNKNOWN  # type: ignore[arg-type]
    for klass in cls.__mro__:
        if attribute in vars(klass):
            raw = vars(klass)[attribute]
            return _UNKNOWN if hasattr(raw, "__get__") else raw  # a property, a slot
    return _UNKNOWN


def _fits(member: str, value: Any) -> bool:
    """Whether *value* could be what *member* holds (unknown: it could)."""
    shape = _SHAPES.get(member)
    return value is _UNKNOWN or shape is None or shape(value)


def _lacked(group: str, cls: type, own: set[str]) -> dict[str, bool]:
    """The members of *group* that *cls* lacks, each mapped to whether it is called (a method)
    rather than read (an attribute); required members are methods."""
    members = {
        m.name: m.kind in _METHOD_KINDS for m in OPTIONAL_MEMBERS.get(group, ()) if m.is_attribute
    }
    if group in PROTOCOLS:
        members.update(dict.fromkeys(required_members(group), True))
    alternatives = ALTERNATIVES.get(group, {})

    def has(n: str) -> bool:
        return n in own or hasattr(cls, n)

    return {
        n: called
        for n, called in members.items()
        if not has(n) and not (n in alternatives and has(alternatives[n]))
    }


def misspelt_members(group: str, cls: Any) -> tuple[Misspelling, ...]:
    """The public attributes of plugin class *cls* (of *group*) that look like a member of the
    group the plugin lacks (a required method, or an optional member of
    :data:`OPTIONAL_MEMBERS`): one edit away, the same name but for case and underscores
    (``readsAnswer``), or a close difflib match, and of the same kind (something called for a
    method, a value for an attribute, of the member's shape where it has one: a collection for
    ``values``, text for ``description``). The core would never read them; a plugin's own helper
    close to a member it does define (``scores`` beside ``score``) is not reported.

    .. versionchanged:: 0.3
        Required members count; only members the plugin lacks, of the attribute's kind.
    """
    if not isinstance(cls, type):
        cls = type(cls)
    own = _own_attributes(cls)
    declared = {m.name for m in OPTIONAL_MEMBERS.get(group, ())}
    if group in PROTOCOLS:
        declared.update(required_members(group))
    lacked = _lacked(group, cls, own)
    found = []
    for attribute in sorted(own - declared):
        called = _method_like(cls, attribute)
        value = _UNKNOWN if called else _value_of(cls, attribute)
        candidates = [n for n, method in lacked.items() if method == called and _fits(n, value)]
        near = [n for n in candidates if _one_edit(attribute, n)]
        near += [n for n in candidates if n not in near and _squashed(n) == _squashed(attribute)]
        if not near:
            near = difflib.get_close_matches(attribute, candidates, n=1, cutoff=CLOSE_MATCH)
        if near:
            near.sort(key=lambda n: -difflib.SequenceMatcher(None, attribute, n).ratio())
            found.append(Misspelling(attribute, tuple(near)))
    return tuple(found)


def missing_hint(group: str, cls: Any, member: str) -> str:
    """For a required *member* plugin class *cls* lacks, ``" (it has 'scores': did you mean
    'score'?)"`` when one of its public methods looks meant for it (looser than
    :func:`misspelt_members`: the plugin fails anyway, so a hint costs nothing), else ``""``."""
    if not isinstance(cls, type):
        cls = type(cls)
    own = sorted(a for a in _own_attributes(cls) if _method_like(cls, a))
    close = [a for a in own if member in a.lower() or (len(a) > 2 and a.lower() in member)]
    close += [a for a in difflib.get_close_matches(member, own, n=3, cutoff=0.6) if a not in close]
    if not close:
        return ""
    close.sort(key=lambda a: -difflib.SequenceMatcher(None, member, a).ratio())
    return f" (it has {close[0]!r}: did you mean {member!r}?)"


__all__ = [
    "ALTERNATIVES",
    "FITTER_MEMBERS",
    "INGEST_SCOPES",
    "ISOLATIONS",
    "METRIC_MEMBERS",
    "OPTIONAL_MEMBERS",
    "PACK_MEMBERS",
    "PROTOCOLS",
    "REPORTER_MEMBERS",
    "TARGET_MEMBERS",
    "FitterTraits",
    "Member",
    "Metric",
    "MetricTraits",
    "Misspelling",
    "Pack",
    "PackTraits",
    "Reporter",
    "ReporterTraits",
    "Target",
    "TargetTraits",
    "ThresholdFitter",
    "Traits",
    "group_kind",
    "metric_traits",
    "missing_hint",
    "misspelt_members",
    "pack_traits",
    "read_traits",
    "reporter_traits",
    "required_members",
    "target_traits",
]
