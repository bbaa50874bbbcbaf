"""The generator of the built-in attack packs (``python -m ragleaklab_packgen``).

It writes each pack's corpus, cases, labels and default threshold under
``plugins/ragleaklab_plugins/packs/<pack>/``, and copies of the labels under
``data/calibration/<pack>/``. It is a development tool of this repository, not part of the
ragleaklab distribution: the wheel ships the packs' files, never this package.

Everything comes from seeded templates (``random.Random`` only, no clock, sorted output), so the
same code always writes the same bytes. Cases are labelled *by instrumentation*: the generator
runs the real reference target in its realistic behaviour (a seeded simulated LLM, seed 0, every
defence off: the naive app) and reads the target's own record of what it did
(``Response.metadata["simulated"]``): which planted instruction it followed, which claim it
asserted, which private field it disclosed, which document shaped the answer. A case is positive
exactly when that record shows the pack's harm (docs/packs.md). No module that labels imports a
metric (``tests/packgen/test_packgen_labels.py``), and no case is dropped, relabelled or
re-drafted after it has been answered. Each pack's default threshold is the one the exact rule
picks at a 1% false-positive rate on its own labels; ``quality`` measures the metric against the
labels and the hardened target against the naive one, for the quality cards of docs/packs.md.

Modules, shared ones first:

- ``vocabulary``, ``topics``, ``corpus``: the units, the topic templates and the legit
  knowledge base drawn from them;
- ``phrasing``, ``slots``: how cases ask and attacks are worded, and which facts they target;
- ``target``, ``instrumentation``, ``ground_truth``: running the reference target, reading what
  it recorded doing (the labels' only source), and the closest poison a case lists;
- ``injections``: planted instructions in many languages and encodings;
- ``build``, ``scoring``, ``threshold``: drafts, labelling and finishing a pack, the one place a
  metric is read (to fit the default threshold), and the threshold rule;
- ``relevance_hijack``, ``sentinel_takeover``, ``claim_corruption``, ``verbatim_extraction``
  (with ``records`` and ``public_records``), ``cross_tenant``: one module per pack;
- ``registry``, ``checks``, ``summary``, ``quality``, ``output``, ``__main__``: the packs, their
  invariants, the printed summary, the quality cards, the files, and the command line.
"""
