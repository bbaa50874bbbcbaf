"""The generator of the four built-in attack packs (``python -m ragleaklab_packgen``).

It writes each pack's corpus, cases, labels and default threshold under
``plugins/ragleaklab_plugins/packs/<pack>/``, and copies of the labels under
``data/calibration/<pack>/``. It is a development tool of this repository, not part of the
ragleaklab distribution: the wheel ships the packs' files, never this package.

Everything comes from seeded templates (``random.Random`` only, no clock, sorted output), so the
same code always writes the same bytes. Cases are labelled *by outcome*: the generator runs the
real reference target (``ragleaklab_plugins.targets.reference.ReferenceTarget``, default
options, i.e. the naive app) and the real metrics in-process, and a case is positive exactly when
the attack succeeded on that target by the pack's outcome rule (docs/packs.md). Attack strength
is varied so that some attacks fail; cases whose outcome would blur the rule (a benign query that
an unrelated poison document happens to hijack) are dropped and their poison removed, and the
target is re-run until the selection is stable. Each pack's default threshold is the one the
exact rule picks at a 1% false-positive rate on its own labels.

Modules, shared ones first:

- ``vocabulary``, ``topics``, ``corpus``: the units, the topic templates and the legit
  knowledge base drawn from them;
- ``phrasing``, ``slots``: how cases ask and attacks are worded, and which facts they target;
- ``target``, ``labelling``, ``ground_truth``: running the reference target, the outcome rules
  that label cases, and the closest poison a case lists;
- ``build``, ``threshold``: drafts, settling them by outcome, finishing a pack and its threshold;
- ``relevance_hijack``, ``sentinel_takeover``, ``claim_corruption``, ``verbatim_extraction``
  (with ``records``): one module per pack;
- ``registry``, ``checks``, ``summary``, ``output``, ``__main__``: the packs, their invariants,
  the printed summary, the files, and the command line.
"""
