"""The contract of a reporter (group ``ragleaklab.reporters``): its protocol, its optional
members and the traits they are read into."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, runtime_checkable

from attrs import frozen

from ragleaklab_core.contracts.members import Member, read_member

GROUP = "ragleaklab.reporters"


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


def reporter_traits(obj: Any) -> ReporterTraits:
    """The :class:`ReporterTraits` of *obj*, a reporter class or instance."""
    found = {m.name: read_member(obj, m.name) for m in REPORTER_MEMBERS}
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


__all__ = ["GROUP", "REPORTER_MEMBERS", "Reporter", "ReporterTraits", "reporter_traits"]
