"""Test helpers for plugin authors: an opt-in pytest plugin.

Enable it in your plugin's test suite with ``pytest_plugins = ["ragleaklab_core.testing"]`` in
the ``conftest.py`` of your tests directory (not in a test module: one that also imports from
the kit would import it before pytest can register it). It is not registered under
``pytest11``, so it costs nothing unless asked for. It gives you:

- :func:`assert_plugin_contract`: load an installed plugin by name exactly as ``ragleaklab`` does
  (same loader, same checks) and return it, failing with the loader's own message;
- :func:`assert_pack_contract`, :func:`assert_metric_contract`, :func:`assert_fitter_contract`
  and :func:`assert_target_contract`: the checks ragleaklab applies to each kind of plugin when
  it loads and runs it (``pack validate``, the runner's result checks, calibration's recount),
  run on your plugin so your CI fails where a user's run would;
- :func:`assert_metric_reads_any_text`: a metric scores a case given answers and retrieved texts
  of hostile shapes (:data:`HOSTILE_TEXTS`: numbers of every format, open markdown, urls,
  direction marks...) or says why it cannot, never raising;
- :func:`assert_reporter_contract` and :func:`assert_judge_contract`: a reporter returns text,
  the same bytes for the same report whatever the hash seed, and escapes hostile fields
  (:func:`hostile_report`); a judge returns a ``JudgeVerdict``, the same one for the same
  case, and survives hostile answers (:data:`HOSTILE_ANSWERS`) or refuses them with a reason;
- :func:`assert_labels_are_sound`: check a pack's labels without defining them by its metric
  (one label per case, both classes, enough negatives for the fitter, a declared
  ``label_source``), and warn (:class:`LabelsMirrorMetricWarning`) when they agree with the
  metric on every case of a run;
- :func:`assert_labels_are_outcomes` (deprecated): labels equal to the metric's outcome, a
  circular check kept for the packs that use it;
- the ``rlk_fake_dist`` fixture: a factory that fakes an installed distribution with entry points
  and modules, for tests of discovery that must not pip-install anything;
- :class:`ScriptedTarget` (and :class:`AsyncScriptedTarget`): a fake target whose every answer
  the test scripts (:class:`Reply`: an answer, the ids it says it retrieved, an empty answer,
  an error to raise; by query, by :class:`Rule` or by case), which records what it was asked;
  to test a pack or a metric on answers you control, or to install as a fake target.

Every assertion accepts an installed plugin's *name* (loaded through the entry point, as a run
loads it) or a plugin *object*, fails the test with a readable message (``pytest.fail``), and
returns what it checked so a test can assert more.
"""

from __future__ import annotations

from typing import Any

from ragleaklab_core.testing import labels
from ragleaklab_core.testing.contracts import (
    HOSTILE_ANSWERS,
    HOSTILE_MARKUP,
    assert_fitter_contract,
    assert_judge_contract,
    assert_metric_contract,
    assert_metric_reads_any_text,
    assert_pack_contract,
    assert_plugin_contract,
    assert_reporter_contract,
    assert_target_contract,
    hostile_report,
    sample_judged_case,
    sample_report,
)
from ragleaklab_core.testing.fake_dist import rlk_fake_dist
from ragleaklab_core.testing.hostile_text import HOSTILE_TEXTS, hostile_texts
from ragleaklab_core.testing.labels import (
    LabelCheck,
    LabelsMirrorMetricWarning,
    assert_labels_are_outcomes,
    assert_labels_are_sound,
    negatives_for_fitter,
)
from ragleaklab_core.testing.targets import (
    Asked,
    AsyncScriptedTarget,
    Reply,
    Rule,
    ScriptedTarget,
)


def __getattr__(name: str) -> Any:
    if name == "SOUND_FITTERS":  # deprecated in 0.4: a fitter declares what it needs
        return labels._sound_fitters(stacklevel=2)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "HOSTILE_ANSWERS",
    "HOSTILE_MARKUP",
    "HOSTILE_TEXTS",
    "Asked",
    "AsyncScriptedTarget",
    "LabelCheck",
    "LabelsMirrorMetricWarning",
    "Reply",
    "Rule",
    "ScriptedTarget",
    "assert_fitter_contract",
    "assert_judge_contract",
    "assert_labels_are_outcomes",
    "assert_labels_are_sound",
    "assert_metric_contract",
    "assert_metric_reads_any_text",
    "assert_pack_contract",
    "assert_plugin_contract",
    "assert_reporter_contract",
    "assert_target_contract",
    "hostile_report",
    "hostile_texts",
    "negatives_for_fitter",
    "rlk_fake_dist",
    "sample_judged_case",
    "sample_report",
]
