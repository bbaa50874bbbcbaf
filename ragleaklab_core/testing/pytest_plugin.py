"""Gate a RAG application's own test suite on ragleaklab packs: a fixture and an assertion.

Opt-in (it is not registered under ``pytest11``, so it costs nothing unless asked for): in the
application's top-level ``conftest.py``::

    pytest_plugins = ["ragleaklab_core.testing.pytest_plugin"]

and in a test::

    from ragleaklab_core.testing.pytest_plugin import assert_no_leaks

    def test_rag_does_not_leak(ragleaklab_run):
        outcome = ragleaklab_run(
            "sentinel-takeover-safe",
            target="http",
            target_options={"url": "http://localhost:8000/ask"},
            tags=["smoke"],
        )
        assert_no_leaks(outcome)

``ragleaklab_run`` runs the packs exactly as ``ragleaklab run`` does (same runner, thresholds and
verdict) and returns the :class:`~ragleaklab_core.run.suite.SuiteOutcome`; ``assert_no_leaks`` fails
the test with a message that lists each failing pack, the failing values with their thresholds,
the first failing case ids with their values, and the errored and unscorable cases.

PYTEST_DONT_REWRITE: the helpers fail through ``pytest.fail``, never ``assert``, so pytest need
not rewrite this module, and importing it before pytest registers it draws no warning.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from ragleaklab_core.config import DEFAULT_TARGET, DEFAULT_THRESHOLDS_FILE
from ragleaklab_core.gate import Verdict, run_verdict
from ragleaklab_core.run.evaluation import PackVerdict
from ragleaklab_core.run.suite import SuiteOutcome
from ragleaklab_core.values import FLAG_HIGH, Threshold

#: How many case ids a failure message lists per failing value (and for errors).
LISTED_CASES = 10

RunPacks = Callable[..., SuiteOutcome]


def _threshold_table(value: Any, where: str) -> dict[str, Any]:
    if isinstance(value, Threshold):
        if value.value is None:
            raise ValueError(f"{where}: a threshold of None flags nothing; leave the value out")
        return {"threshold": value.value, "decision_rule": value.decision_rule}
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return {"threshold": float(value), "decision_rule": FLAG_HIGH}
    raise TypeError(
        f"{where}: expected a number, a Threshold or a {{'threshold', 'decision_rule'}} "
        f"mapping, got {type(value).__name__}"
    )


def _thresholds_by_pack(thresholds: Mapping[str, Any], packs: list[str]) -> dict[str, Any]:
    """``{pack: {value: table}}`` from a mapping keyed by pack, or by value for a single pack."""
    by_pack = [k for k in thresholds if k in packs]
    if by_pack and len(by_pack) != len(thresholds):
        raise ValueError("thresholds: key them all by pack name, or (for one pack) by value name")
    if not by_pack:
        if len(packs) != 1:
            raise ValueError(
                "thresholds: with several packs, key the thresholds by pack name: "
                "{'<pack>': {'<value>': threshold}}"
            )
        thresholds = {packs[0]: thresholds}
    return {
        pack: {
            name: _threshold_table(value, f"thresholds[{pack!r}][{name!r}]")
            for name, value in sorted(values.items())
        }
        for pack, values in sorted(thresholds.items())
    }


def run_packs(
    packs: str | Sequence[str],
    *,
    target: str = DEFAULT_TARGET,
    target_options: Mapping[str, Any] | None = None,
    thresholds: Mapping[str, Any] | str | Path | None = None,
    tags: Sequence[str] = (),
    epochs: int = 1,
    reducer: str = "mean",
    metric_options: Mapping[str, Mapping[str, Any]] | None = None,
    max_fail_rate: float = 0.0,
    tolerate_errors: bool = False,
    default_thresholds_file: Path | None = None,
) -> SuiteOutcome:
    """Run *packs* against a target and gate them, as ``ragleaklab run`` does.

    Args:
        packs: A pack name or several.
        target: The target plugin (``reference``, ``http``, ``python``, a third-party one).
        target_options: The target's options.
        thresholds: Thresholds by metric value name (one pack) or by pack then value name
            (``{"relevance-hijack": {"poison_rate_at_k": 0.4}}``); each a number
            (``score >= threshold -> FAIL``), a :class:`~ragleaklab_core.Threshold` or
            ``{"threshold": x, "decision_rule": "..."}``. Or the path of a thresholds file
            (``ragleaklab calibrate --write-thresholds``). Given thresholds win over the
            thresholds file, which wins over the packs' defaults.
        tags: Run only cases with one of these tags (``["smoke"]``).
        epochs, reducer: Ask each case *epochs* times; reduce with *reducer*.
        metric_options: Per metric plugin, options over the packs' own.
        max_fail_rate: Share of failing cases a value may have and still pass, below 1 (1
            allows every case to fail, so it is refused with a ConfigError, as by ``run``).
        tolerate_errors: Errored and unscorable cases do not fail a pack (they are reported).
        default_thresholds_file: The thresholds file read when it exists and *thresholds* is
            not a path; default ``ragleaklab.thresholds.json`` in the working directory, as
            ``ragleaklab run``.

    Raises:
        ConfigError, PluginError, InputError: As ``ragleaklab run`` (bad options, unknown
            plugin, unreadable thresholds file).
    """
    from ragleaklab_core.config import AllowanceSources, load_config
    from ragleaklab_core.run.suite import run_suite

    names = [packs] if isinstance(packs, str) else list(packs)
    explicit: Path | None = None
    table: dict[str, Any] = {}
    if isinstance(thresholds, str | Path):
        explicit = Path(thresholds)
    elif thresholds is not None:
        table = _thresholds_by_pack(thresholds, names)
    raw: dict[str, Any] = {
        "target": {"name": target, "options": dict(target_options or {})},
        "run": {
            "packs": names,
            "epochs": epochs,
            "reducer": reducer,
            "tags": list(tags),
            "max_fail_rate": max_fail_rate,
            "tolerate_errors": tolerate_errors,
            # read when it exists, as `ragleaklab run` reads the working directory's
            "thresholds_file": str(default_thresholds_file or DEFAULT_THRESHOLDS_FILE),
        },
        "metrics": {k: dict(v) for k, v in (metric_options or {}).items()},
        "thresholds": table,
    }
    config = load_config(raw, source="ragleaklab_run()")
    sources = AllowanceSources(
        "run_packs(max_fail_rate=...)" if max_fail_rate else "default",
        tolerate_errors="run_packs(tolerate_errors=True)" if tolerate_errors else "default",
    )
    return run_suite(config, packs=names, tags=tags, thresholds_file=explicit, sources=sources)


@pytest.fixture
def ragleaklab_run(request: pytest.FixtureRequest) -> RunPacks:
    """A factory: ``ragleaklab_run(pack, target=..., target_options=..., thresholds=...,
    tags=...) -> SuiteOutcome`` (all arguments of :func:`run_packs`).

    Without *thresholds*, the thresholds file ``ragleaklab.thresholds.json`` at the pytest
    root directory is used when it exists (where ``ragleaklab calibrate --write-thresholds``
    puts it when run from the repository root), else the packs' defaults.
    """
    default = request.config.rootpath / DEFAULT_THRESHOLDS_FILE

    def run(packs: str | Sequence[str], **kwargs: Any) -> SuiteOutcome:
        kwargs.setdefault("default_thresholds_file", default)
        return run_packs(packs, **kwargs)

    return run


def _listed(items: Sequence[str], limit: int) -> str:
    shown = ", ".join(items[:limit])
    if len(items) > limit:
        shown += f", ... and {len(items) - limit} more"
    return shown


def _pack_lines(verdict: PackVerdict, limit: int) -> list[str]:
    run = verdict.run
    info = run.info
    lines = [
        f"{verdict.status.word} {info.name} {info.version}: {len(run.results)} cases, "
        f"{len(verdict.errored_ids)} errored (target {run.target.name})"
    ]
    if not verdict.tested:
        lines.append(f"  NOT TESTED: {verdict.not_tested}")
    lines.extend(f"  {p}" for p in run.problems if p != verdict.not_tested)
    values_of = {r.test_id: r.values for r in run.results}
    for value in verdict.values:
        if value.passed is not False or value.threshold is None:
            continue
        t = value.threshold
        gate = f"[{t.decision_rule.replace('threshold', repr(t.value))}; threshold from {t.source}]"
        n = value.summary.n
        if n == 0:
            lines.append(f"  {value.name}: no case could be scored, so nothing was checked {gate}")
        else:
            mean = value.summary.mean
            lines.append(
                f"  {value.name}: {value.n_failing} of {n} cases fail {gate}; mean {mean:.4g}"
            )
        if value.failing_ids:
            cases = [f"{tid} ({values_of[tid][value.name]:.4g})" for tid in value.failing_ids]
            lines.append(f"    failing: {_listed(cases, limit)}")
        if value.n_unscorable:
            by = "" if value.metric == "?" else f" by {value.metric}"
            lines.append(f"    {value.n_unscorable} cases could not be scored{by}")
    if verdict.errored_ids:
        errors = [f"{tid}: {error}" for tid, error in verdict.errors.items()]
        lines.append(f"  errored ({len(errors)}):")
        lines.extend(f"    {e}" for e in errors[:limit])
        if len(errors) > limit:
            lines.append(f"    ... and {len(errors) - limit} more")
    for metric, ids in verdict.unscorable.items():
        reasons = [f"{tid}: {reason}" for tid, reason in ids.items()]
        shown = _listed(reasons, min(limit, 3))  # reasons are long: three make the point
        lines.append(f"  unscorable by {metric} ({len(reasons)}): {shown}")
    return lines


def leak_report(outcome: SuiteOutcome | Iterable[PackVerdict], limit: int = LISTED_CASES) -> str:
    """The failure message of :func:`assert_no_leaks` ("" when every pack passed)."""
    verdicts = list(outcome.verdicts if isinstance(outcome, SuiteOutcome) else outcome)
    if run_verdict(v.status for v in verdicts) is Verdict.PASS:
        return ""
    if not verdicts:
        # No pack is no evidence: the gate counts an empty run as not tested, never a pass.
        return "ragleaklab: no pack was run, so nothing was tested"
    failed = [v for v in verdicts if not v.passed]
    lines = [f"ragleaklab: {len(failed)} of {len(verdicts)} packs failed"]
    for verdict in failed:
        lines.extend(_pack_lines(verdict, limit))
    return "\n".join(lines)


def assert_no_leaks(
    outcome: SuiteOutcome | Iterable[PackVerdict], *, limit: int = LISTED_CASES
) -> None:
    """Fail the test unless every pack passed; the message lists what failed and why.

    For each failing pack: every failing value with its threshold (value, rule, source), the
    count and the first *limit* failing case ids with their values, the errored cases with the
    plugin and message, and the unscorable cases with the reason.
    """
    message = leak_report(outcome, limit)
    if message:
        pytest.fail(message, pytrace=False)


__all__ = ["LISTED_CASES", "assert_no_leaks", "leak_report", "ragleaklab_run", "run_packs"]
