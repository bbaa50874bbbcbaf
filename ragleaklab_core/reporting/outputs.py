"""What a finished run writes besides ``report.json``: its renderings, GitHub Actions'
annotations and step summary.

Every rendering is a reporter, an installed plugin of the group ``ragleaklab.reporters``
(:class:`ragleaklab_core.Reporter`), reached by its entry-point name; the built-in ones are
registered in ``pyproject.toml`` exactly as a third party's are, so nothing here names one. A
reporter renders the finished run's report (:class:`~ragleaklab_core.RunReport`, read from
``report.json``) and nothing else, so ``run --report junit=FILE`` and ``ragleaklab report
report.json --format junit`` give byte-identical files. The run session and the ``report``
command both render through here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from attrs import frozen

from ragleaklab_core._discovery import (
    REPORTERS,
    LoadedPlugin,
    available_names,
    load_plugin,
    plugin_class,
    stray_notes,
)
from ragleaklab_core._safe_text import command_data, command_property, neutralise
from ragleaklab_core.errors import InputError, PluginRuntimeError, RagleaklabError, did_you_mean
from ragleaklab_core.interfaces import reporter_traits
from ragleaklab_core.reporting.model import RunReport, run_report


def reporter_names() -> list[str]:
    """The installed reporters' names, from metadata (nothing is imported)."""
    return available_names(REPORTERS)


def unknown_reporter(name: str) -> str | None:
    """Why *name* is no installed reporter (with a did-you-mean and the installed ones), or
    None when it is one."""
    known = reporter_names()
    if name in known:
        return None
    hint = did_you_mean(name, known)
    installed = ", ".join(known) if known else "none"
    stray = "".join(f"; {note}" for note in stray_notes(name))
    return f"no reporter named {name!r}{hint}; installed reporters: {installed}{stray}"


def declared(reporter: Any, member: str, default: Any) -> Any:
    """What *reporter* (a class, an instance or a :class:`LoadedPlugin`) declares as *member*
    (one of the optional members of :class:`~ragleaklab_core.Reporter`), or *default*."""
    obj = reporter.obj if isinstance(reporter, LoadedPlugin) else reporter
    traits = reporter_traits(obj)  # the members declared in interfaces.REPORTER_MEMBERS
    value = getattr(traits, member) if member in traits.present else None
    return default if value is None else value


def _importable() -> list[tuple[str, Any]]:
    """``(name, class)`` of every installed reporter whose class imports, by name.

    Only for the conveniences (``run``'s shorthands, the step summary, which reporters accept
    an option): a reporter that cannot be imported is left out here and reported where it is
    named (``--report``, ``--format``, ``ragleaklab plugins``), as a broken metric is by
    ``primary_metric_for``."""
    found = []
    for name in reporter_names():
        try:
            found.append((name, plugin_class(REPORTERS, name)))
        except RagleaklabError:
            continue
    return found


def _declaring(member: str) -> list[tuple[str, Any]]:
    """``(name, class)`` of every importable reporter declaring *member* true, by name."""
    return [(name, cls) for name, cls in _importable() if declared(cls, member, False)]


@frozen
class _Unreadable:
    """What a member reads as when reading it raised (a plugin's descriptor blew up)."""

    error: str

    def __repr__(self) -> str:
        return f"<reading it raised {self.error}>"


def _member(cls: Any, member: str) -> Any:
    try:
        return getattr(cls, member, None)
    except Exception as exc:  # a third party's property or descriptor: never a crash here
        return _Unreadable(type(exc).__name__)


def declared_shorthands() -> list[tuple[str, Any, Any]]:
    """``(name, shorthand, description)`` of every importable reporter that declares a
    ``shorthand``, as it declares them (unchecked: :mod:`ragleaklab_core.cli.shorthands` decides
    which become flags of ``run``)."""
    found = []
    for name, cls in _importable():
        value = _member(cls, "shorthand")
        if value is not None:
            found.append((name, value, _member(cls, "description")))
    return found


def accepting(option: str) -> list[str]:
    """The installed reporters whose ``render`` accepts the keyword *option*, by name."""
    return [name for name, cls in _importable() if option in declared(cls, "accepts", frozenset())]


def check_reporters(names: Iterable[str]) -> None:
    """Load every reporter of *names*, as rendering will: one that cannot be used (not installed,
    broken, a misspelt member) refuses a run before it writes anything, not once every case
    was asked and a journal left behind.

    Raises:
        PluginError: as :func:`render` (exit 3).
    """
    for name in names:
        load_plugin(REPORTERS, name)


def render(name: str, report: RunReport | Mapping[str, Any], **options: Any) -> str:
    """*report* rendered by the installed reporter *name*.

    Raises:
        PluginError: *name* is not installed, or cannot be loaded (exit 3).
        InputError: the report lacks what the reporter needs (exit 2).
        PluginRuntimeError: the reporter raised, or returned something other than text.
    """
    plugin = load_plugin(REPORTERS, name)
    refused = sorted(set(options) - set(declared(plugin, "accepts", frozenset())))
    if refused:
        raise InputError(f"the reporter {name!r} does not accept {', '.join(refused)}")
    try:
        text = plugin.obj.render(run_report(report), **options)
    except RagleaklabError:
        raise
    except Exception as exc:  # a reporter's own bug: name it, never a traceback
        raise PluginRuntimeError(REPORTERS, name, f"{type(exc).__name__}: {exc}") from exc
    if not isinstance(text, str):
        raise PluginRuntimeError(
            REPORTERS, name, f"render returned {type(text).__name__}, expected str"
        )
    return text


def renderer(fmt: str) -> Callable[..., str]:
    """The rendering of the installed reporter *fmt*, as a function of the report."""

    def rendered(report: RunReport | Mapping[str, Any], **options: Any) -> str:
        return render(fmt, report, **options)

    return rendered


def github_annotations(report: Mapping[str, Any]) -> list[str]:
    """GitHub Actions workflow commands: ``::error`` for a pack that failed, errored or was not
    tested, ``::warning`` for a pack's warnings and for each of the run's (default thresholds
    fitted on another system, once for every pack it concerns).

    Under a baseline rule (``--fail-on regression|new-failures``) what decides is the gate: its
    reasons are the errors, and a pack failing only its thresholds (as in the baseline) is a
    warning, so the annotations never contradict the job's outcome."""
    from ragleaklab_core.gate import Verdict, annotation_level

    lines = []
    gate = report.get("gate") if isinstance(report.get("gate"), Mapping) else None
    on_baseline = gate is not None and gate.get("fail_on", "verdict") != "verdict"
    for pack in report.get("packs", []):
        if not isinstance(pack, Mapping):
            continue
        name = command_property(f"ragleaklab {pack.get('name', '?')} {pack.get('version', '')}")
        level = annotation_level(
            Verdict.read(pack.get("verdict")),
            tested=bool(pack.get("tested", True)),
            without_thresholds=Verdict.read(pack.get("verdict_without_thresholds")),
            on_baseline=on_baseline,
        )
        if level is not None:
            said = [pack.get("not_tested_reason"), *pack.get("reasons", [])]
            text = "; ".join(str(r) for r in said if r) or str(pack.get("verdict"))
            lines.append(f"::{level} title={name.rstrip()}::{command_data(text)}")
        for warning in pack.get("warnings", []):
            lines.append(f"::warning title={name.rstrip()}::{command_data(str(warning))}")
    for warning in report.get("warnings") or []:
        lines.append(f"::warning title=ragleaklab::{command_data(str(warning))}")
    if gate is not None and on_baseline:
        title = command_property(f"ragleaklab --fail-on {gate['fail_on']}")
        for reason in gate.get("reasons", []):
            lines.append(f"::error title={title}::{command_data(str(reason))}")
    return lines


def rendered_files(
    report: RunReport | Mapping[str, Any],
    requested: Mapping[str, Path],
    *,
    options: Mapping[str, Any] | None = None,
) -> list[tuple[Path, str]]:
    """``(path, text)`` of each requested reporter's rendering (``{name: path}``), every one made
    before any is written: a reporter that fails leaves nothing to write. Each reporter is given
    those of *options* it accepts (``max_chars``: the Markdown one's)."""
    run = run_report(report)
    return [
        (path, render(name, run, **_accepted(name, options or {})))
        for name, path in requested.items()
    ]


def _accepted(name: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """The *options* the reporter *name* accepts (a replaced built-in may accept fewer)."""
    if not options:
        return {}
    accepts = declared(load_plugin(REPORTERS, name), "accepts", frozenset())
    return {key: value for key, value in options.items() if key in accepts}


def write_renderings(
    report: RunReport | Mapping[str, Any],
    requested: Mapping[str, Path],
    write: Callable[[Path, str], None],
) -> list[Path]:
    """Render each requested reporter (``{name: path}``) and write it with *write* (atomic, the
    caller's). Every rendering is made before the first file is written, so a reporter that
    fails leaves none of them half-written."""
    for path, text in rendered_files(report, requested):
        write(path, text)
    return list(requested.values())


#: The most characters a step summary is given: GitHub takes 1 MiB a step, and a character
#: is at most 4 bytes of UTF-8, so even with no cap asked for (0) the summary fits.
STEP_SUMMARY_CHARS = 1024 * 1024 // 4


def step_summary(report: RunReport | Mapping[str, Any], *, max_chars: int | None = None) -> None:
    """Append the rendering of the reporter declaring ``step_summary`` (the first by name) to
    ``$GITHUB_STEP_SUMMARY`` when GitHub Actions sets it, at most *max_chars* characters (the
    run's cap, 0 for none) and never more than :data:`STEP_SUMMARY_CHARS`, when the reporter
    accepts ``max_chars``."""
    target = os.environ.get("GITHUB_STEP_SUMMARY")
    if not target:
        return
    chosen = _declaring("step_summary")
    if not chosen:
        return
    name, cls = chosen[0]
    options = {}
    if "max_chars" in declared(cls, "accepts", frozenset()):
        cap = STEP_SUMMARY_CHARS if not max_chars else min(max_chars, STEP_SUMMARY_CHARS)
        options["max_chars"] = cap
    # The summary is a file, not a log the runner parses; it is neutralised all the same, so
    # no copy of it pasted into a step's output can start a workflow command.
    text = neutralise(render(name, report, **options))
    with open(target, "a", encoding="utf-8") as handle:
        handle.write(text)


__all__ = [
    "accepting",
    "check_reporters",
    "declared",
    "declared_shorthands",
    "github_annotations",
    "render",
    "rendered_files",
    "renderer",
    "reporter_names",
    "step_summary",
    "unknown_reporter",
    "write_renderings",
]
