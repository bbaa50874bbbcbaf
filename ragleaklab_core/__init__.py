"""ragleaklab's public API: value types, plugin interfaces, plugin loading, embedding, reports.

Everything a plugin or an embedding harness may use is importable from here and listed in
``__all__``. Importing this package imports no plugin module and no numpy: the names that need
numpy (``check_fit_inputs``, ``max_false_positives``, ``calibrate``...) are loaded on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ragleaklab_core import _moved
from ragleaklab_core._version import __version__
from ragleaklab_core.errors import (
    CalibrationRefused,
    ConfigError,
    InputError,
    PluginContractError,
    PluginError,
    PluginLoadFailure,
    PluginRuntimeError,
    RagleaklabError,
    RunInterrupted,
    UsageError,
)
from ragleaklab_core.interfaces import (
    OPTIONAL_MEMBERS,
    FitterTraits,
    Judge,
    JudgeTraits,
    Member,
    Metric,
    MetricTraits,
    Misspelling,
    Pack,
    PackTraits,
    Reporter,
    ReporterTraits,
    Target,
    TargetTraits,
    ThresholdFitter,
    misspelt_members,
)
from ragleaklab_core.values import (
    DECISION_RULES,
    FLAG_ABOVE,
    FLAG_BELOW,
    FLAG_HIGH,
    FLAG_LOW,
    Case,
    Document,
    FitResult,
    JudgedCase,
    JudgedDocument,
    JudgeVerdict,
    MeasuredError,
    MetricResult,
    PackInfo,
    PackTaxonomy,
    Response,
    RetrievedDocument,
    Threshold,
    decision_rule,
)

_moved.install()  # the flat layout's module paths, kept working with a warning

if TYPE_CHECKING:
    from ragleaklab_core._discovery import (
        FITTERS,
        GROUPS,
        JUDGES,
        METRICS,
        PACKS,
        REPORTERS,
        TARGETS,
        LoadedPlugin,
        PluginInfo,
        available_names,
        check_contract,
        discover_plugins,
        load_plugin,
        metric_values,
        pack_info,
        primary_metric_for,
    )
    from ragleaklab_core._redact import (
        REDACTED,
        env_references,
        is_env_reference,
        is_secret_name,
        redact_forms,
        redact_url,
        register_secrets,
        secret_forms,
    )
    from ragleaklab_core.calibration.report import (
        CalibrationReport,
        calibrate,
        clopper_pearson_upper,
        negatives_needed,
    )
    from ragleaklab_core.calibration_session import (
        CalibrateRequest,
        CalibrationResult,
        CalibrationSession,
    )
    from ragleaklab_core.embedding import (
        MetricSession,
        TargetSession,
        pack_cases,
        pack_labels,
        read_config,
        score_case,
    )
    from ragleaklab_core.gate import Outcome, Verdict, case_outcome
    from ragleaklab_core.packs.manifest import ManifestPack, load_manifest
    from ragleaklab_core.reporting.console import render as render_text
    from ragleaklab_core.reporting.html import render as render_html
    from ragleaklab_core.reporting.junit import render as render_junit
    from ragleaklab_core.reporting.markdown import render as render_markdown
    from ragleaklab_core.reporting.model import PackReport, RunReport
    from ragleaklab_core.reporting.sarif import render as render_sarif
    from ragleaklab_core.run.planted import RUN_TAG, ForeignPlanted, planted_id
    from ragleaklab_core.run.runner import load_pack
    from ragleaklab_core.session import RunRequest, RunResult, RunSession
    from ragleaklab_core.stats.aggregation import (
        REDUCERS,
        RateInterval,
        Reducer,
        Summary,
        rate_interval,
        reducer,
        summarize,
    )
    from ragleaklab_core.stats.fitting import check_fit_inputs, max_false_positives

# name -> module that defines it; imported lazily (PEP 562) to keep `import ragleaklab_core` light.
_LAZY = {
    "FITTERS": "_discovery",
    "GROUPS": "_discovery",
    "JUDGES": "_discovery",
    "METRICS": "_discovery",
    "PACKS": "_discovery",
    "REPORTERS": "_discovery",
    "TARGETS": "_discovery",
    "LoadedPlugin": "_discovery",
    "PluginInfo": "_discovery",
    "available_names": "_discovery",
    "check_contract": "_discovery",
    "discover_plugins": "_discovery",
    "load_plugin": "_discovery",
    "metric_values": "_discovery",
    "pack_info": "_discovery",
    "primary_metric_for": "_discovery",
    # Secrets: what a target plugin needs to keep credentials out of reports and log lines.
    "REDACTED": "_redact",
    "env_references": "_redact",
    "is_env_reference": "_redact",
    "is_secret_name": "_redact",
    "redact_forms": "_redact",
    "redact_url": "_redact",
    "register_secrets": "_redact",
    "secret_forms": "_redact",
    "REDUCERS": "stats.aggregation",
    "RateInterval": "stats.aggregation",
    "Reducer": "stats.aggregation",
    "Summary": "stats.aggregation",
    "rate_interval": "stats.aggregation",
    "reducer": "stats.aggregation",
    "summarize": "stats.aggregation",
    # Embedding: a harness drives targets and metrics itself, one case at a time.
    "MetricSession": "embedding",
    "TargetSession": "embedding",
    "pack_cases": "embedding",
    "pack_labels": "embedding",
    "read_config": "embedding",
    "score_case": "embedding",
    "load_pack": "run.runner",
    # What a target that plants in a store outliving the run names its documents and tags with.
    "RUN_TAG": "run.planted",
    "ForeignPlanted": "run.planted",
    "planted_id": "run.planted",
    # A whole run, exactly as `ragleaklab run` performs it, and the verdict it ends with.
    "RunRequest": "session",
    "RunResult": "session",
    "RunSession": "session",
    "Verdict": "gate",
    # A whole calibration, exactly as `ragleaklab calibrate` performs it.
    "CalibrateRequest": "calibration_session",
    "CalibrationResult": "calibration_session",
    "CalibrationSession": "calibration_session",
    "CalibrationReport": "calibration.report",
    "calibrate": "calibration.report",
    "clopper_pearson_upper": "calibration.report",
    "negatives_needed": "calibration.report",
    "check_fit_inputs": "stats.fitting",
    "max_false_positives": "stats.fitting",
    "ManifestPack": "packs.manifest",
    "load_manifest": "packs.manifest",
    # The verdict rule, for a harness that judges cases itself (the inspect adapter's reducer),
    # and what a reporter plugin receives.
    "Outcome": "gate",
    "case_outcome": "gate",
    "RunReport": "reporting.model",
    "PackReport": "reporting.model",
}
#: Public name -> (module, its name there): the core's renderings, which the built-in reporters
#: wrap (a third-party reporter may also reuse one, say to post-process the Markdown).
_RENAMED = {
    "render_text": ("reporting.console", "render"),
    "render_junit": ("reporting.junit", "render"),
    "render_sarif": ("reporting.sarif", "render"),
    "render_markdown": ("reporting.markdown", "render"),
    "render_html": ("reporting.html", "render"),
}


def __getattr__(name: str) -> Any:
    module, attribute = _RENAMED.get(name, (_LAZY.get(name), name))
    if module is None:
        raise AttributeError(f"module 'ragleaklab_core' has no attribute {name!r}")
    value = getattr(import_module(f"ragleaklab_core.{module}"), attribute)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)


__all__ = [
    "DECISION_RULES",
    "FITTERS",
    "FLAG_ABOVE",
    "FLAG_BELOW",
    "FLAG_HIGH",
    "FLAG_LOW",
    "GROUPS",
    "JUDGES",
    "METRICS",
    "OPTIONAL_MEMBERS",
    "PACKS",
    "REDACTED",
    "REDUCERS",
    "REPORTERS",
    "RUN_TAG",
    "TARGETS",
    "CalibrateRequest",
    "CalibrationRefused",
    "CalibrationReport",
    "CalibrationResult",
    "CalibrationSession",
    "Case",
    "ConfigError",
    "Document",
    "FitResult",
    "FitterTraits",
    "ForeignPlanted",
    "InputError",
    "Judge",
    "JudgeTraits",
    "JudgeVerdict",
    "JudgedCase",
    "JudgedDocument",
    "LoadedPlugin",
    "ManifestPack",
    "MeasuredError",
    "Member",
    "Metric",
    "MetricResult",
    "MetricSession",
    "MetricTraits",
    "Misspelling",
    "Outcome",
    "Pack",
    "PackInfo",
    "PackReport",
    "PackTaxonomy",
    "PackTraits",
    "PluginContractError",
    "PluginError",
    "PluginInfo",
    "PluginLoadFailure",
    "PluginRuntimeError",
    "RagleaklabError",
    "RateInterval",
    "Reducer",
    "Reporter",
    "ReporterTraits",
    "Response",
    "RetrievedDocument",
    "RunInterrupted",
    "RunReport",
    "RunRequest",
    "RunResult",
    "RunSession",
    "Summary",
    "Target",
    "TargetSession",
    "TargetTraits",
    "Threshold",
    "ThresholdFitter",
    "UsageError",
    "Verdict",
    "__version__",
    "available_names",
    "calibrate",
    "case_outcome",
    "check_contract",
    "check_fit_inputs",
    "clopper_pearson_upper",
    "decision_rule",
    "discover_plugins",
    "env_references",
    "is_env_reference",
    "is_secret_name",
    "load_manifest",
    "load_pack",
    "load_plugin",
    "max_false_positives",
    "metric_values",
    "misspelt_members",
    "negatives_needed",
    "pack_cases",
    "pack_info",
    "pack_labels",
    "planted_id",
    "primary_metric_for",
    "rate_interval",
    "read_config",
    "redact_forms",
    "redact_url",
    "reducer",
    "register_secrets",
    "render_html",
    "render_junit",
    "render_markdown",
    "render_sarif",
    "render_text",
    "score_case",
    "secret_forms",
    "summarize",
]
