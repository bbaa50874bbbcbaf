"""inspect_ai integration: the ``ragleaklab/...`` tasks, solver, scorers, metrics and reducer.

This package's ``__init__`` imports nothing, so that the entry point below it can never fail
before its own guard runs. :mod:`ragleaklab._inspect.components` imports inspect_ai (the
``ragleaklab[inspect]`` extra) and registers everything in inspect's registry;
:mod:`ragleaklab._inspect.registry` is the entry point that inspect loads (it imports
``components`` and never raises). ragleaklab_core never imports any of it.

Registered names: task ``ragleaklab/pack``; solver ``ragleaklab/ask_target``; one scorer
``ragleaklab/<metric>`` for every installed metric plugin (``ragleaklab/retrieval``,
``ragleaklab/citation``, a third party's ``ragleaklab/acme-pii``...), its inspect metrics made
from the metric's declared ``values``, and ``ragleaklab/metric_scorer`` (any metric plugin, by
name); metrics ``ragleaklab/leak_rate`` and ``ragleaklab/leak_stderr``; epoch reducer
``ragleaklab/gated``, which takes each case's outcome from ragleaklab's gate.

Built only on :mod:`ragleaklab_core`'s public API (its ``__all__``): the target session, metric
scoring and configuration of :mod:`ragleaklab_core.embedding`, and each metric's declared
``values`` for the scorers' per-value metrics.
"""
