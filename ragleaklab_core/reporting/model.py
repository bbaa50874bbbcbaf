"""A finished run as typed, frozen values: what a reporter receives.

:class:`RunReport` is read from a parsed ``report.json`` (:meth:`RunReport.from_document`), so
``ragleaklab report report.json`` renders from a file exactly what the run rendered in memory.
Its fields are the ones every rendering reads (the verdicts, the exit code, the settings, the
target, the totals, each pack's verdict, reasons, warnings, values and cases); everything else
stays reachable through :attr:`RunReport.document` and :attr:`PackReport.document`, the parsed
JSON objects themselves, so a reporter can show a detail this model does not name.

Reading is lenient on purpose: a field a report lacks gets an empty value, and a verdict that is
not one of the words ``report.json`` writes reads as :attr:`Verdict.ERROR` (never a pass). What a
rendering cannot do without (say, ``case_results``, which an older ragleaklab did not write) it
checks itself, naming the ``$.path``.

The mappings are the document's own objects, not copies: a run's per-case list may be a spool
read back from disk as it is iterated, which copying would load into memory.

:attr:`RunReport.outcome` is the same run as the typed, frozen values of
:mod:`ragleaklab_core.outcome` (every field of ``report.json``, read by its one codec): a
rendering reads attributes there, and the document stays as the escape hatch. It is set for a
run rendered in memory (:meth:`RunReport.of`) and for a document that parses as a whole
``report.json``; None for a partial document (which the lenient fields above still read).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import attrs
from attrs import frozen

from ragleaklab_core.errors import InputError
from ragleaklab_core.gate import Verdict
from ragleaklab_core.outcome import RunOutcome

_EMPTY: Mapping[str, Any] = {}


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else _EMPTY


def _words(value: object) -> tuple[str, ...]:
    if isinstance(value, str) or not isinstance(value, Sequence):
        return ()
    return tuple(str(v) for v in value)


@frozen
class PackReport:
    """One pack of a finished run (``packs[i]`` of ``report.json``).

    Attributes:
        name: The pack's name.
        version: The pack's version.
        verdict: The pack's verdict (:class:`~ragleaklab_core.gate.Verdict`).
        tested: False when the attack never reached the system (see :attr:`not_tested_reason`).
        not_tested_reason: Why the pack was not tested, or None.
        reasons: Why the pack did not pass, one sentence each.
        warnings: What a reader should know about a pass (an uncalibrated threshold, say).
        values: Each gated value's summary, by value name (``packs[i].values``).
        case_results: Every case's outcome, values and evidence (``packs[i].case_results``);
            empty when the report has none (a rendering that needs them says so).
        document: The pack's JSON object, for any field not named above.
    """

    name: str
    version: str
    verdict: Verdict
    tested: bool
    not_tested_reason: str | None
    reasons: tuple[str, ...]
    warnings: tuple[str, ...]
    values: Mapping[str, Any]
    case_results: Sequence[Mapping[str, Any]]
    document: Mapping[str, Any]

    @classmethod
    def from_document(cls, pack: Mapping[str, Any]) -> PackReport:
        """The pack a ``report.json`` pack object describes (missing fields read as empty)."""
        results = pack.get("case_results")
        reason = pack.get("not_tested_reason")
        return cls(
            name=str(pack.get("name", "?")),
            version=str(pack.get("version", "")),
            verdict=Verdict.read(pack.get("verdict")),
            tested=bool(pack.get("tested", True)),
            not_tested_reason=None if reason is None else str(reason),
            reasons=_words(pack.get("reasons")),
            warnings=_words(pack.get("warnings")),
            values=_mapping(pack.get("values")),
            case_results=results if isinstance(results, Sequence) else (),
            document=pack,
        )


@frozen
class RunReport:
    """A finished run, as ``report.json`` records it.

    Attributes:
        verdict: The run's verdict, after its gate (:class:`~ragleaklab_core.gate.Verdict`).
        exit_code: The exit code ``ragleaklab run`` ended with.
        settings: The run's settings (packs, epochs, reducer, tags, thresholds file...).
        target: The target's provenance (name, provider, options, secrets redacted).
        totals: Counts over the run (packs passed, failed, not tested; cases, errored).
        gate: What decided the exit code (``fail_on``, reasons, the baseline compared with), or
            an empty mapping for a report written before the gate was recorded.
        warnings: What a reader should know about the whole run, each said once for every pack
            it concerns (default thresholds fitted on another system, say).
        packs: Every pack, in the run's order.
        document: The whole parsed ``report.json``, for any field not named above.
    """

    verdict: Verdict
    exit_code: int
    settings: Mapping[str, Any]
    target: Mapping[str, Any]
    totals: Mapping[str, Any]
    gate: Mapping[str, Any]
    warnings: tuple[str, ...]
    packs: tuple[PackReport, ...]
    document: Mapping[str, Any]
    #: The run as typed values (see the module), or None for a partial document.
    outcome: RunOutcome | None = None

    @classmethod
    def of(cls, outcome: RunOutcome, document: Mapping[str, Any]) -> RunReport:
        """The finished run *outcome*, whose ``report.json`` is *document*."""
        return attrs.evolve(cls._read(document), outcome=outcome)

    @classmethod
    def from_document(cls, report: Mapping[str, Any]) -> RunReport:
        """The run a parsed ``report.json`` describes (missing fields read as empty; the typed
        :attr:`outcome` too when the whole document parses)."""
        from ragleaklab_core.outcome.codec import decode

        try:
            outcome = decode(report, source="report.json")
        except InputError:
            outcome = None  # a partial document: the lenient fields read it
        return attrs.evolve(cls._read(report), outcome=outcome)

    @classmethod
    def _read(cls, report: Mapping[str, Any]) -> RunReport:
        packs = report.get("packs")
        listed = packs if isinstance(packs, Sequence) and not isinstance(packs, str) else ()
        verdict = Verdict.read(report.get("verdict"))
        exit_code = report.get("exit_code")
        return cls(
            verdict=verdict,
            # A report without one exits as its verdict does.
            exit_code=exit_code if isinstance(exit_code, int) else verdict.exit_code,
            settings=_mapping(report.get("settings")),
            target=_mapping(report.get("target")),
            totals=_mapping(report.get("totals")),
            gate=_mapping(report.get("gate")),
            warnings=_words(report.get("warnings")),
            packs=tuple(PackReport.from_document(p) for p in listed if isinstance(p, Mapping)),
            document=report,
        )


def run_report(report: RunReport | Mapping[str, Any]) -> RunReport:
    """*report* as a :class:`RunReport` (a parsed ``report.json`` is read; a RunReport is kept)."""
    return report if isinstance(report, RunReport) else RunReport.from_document(report)


__all__ = ["PackReport", "RunReport", "run_report"]
