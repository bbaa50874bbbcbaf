"""The inspect_ai entry point: importing it registers every ``ragleaklab/...`` component.

inspect imports *every* ``inspect_ai`` entry point whenever it initialises a model, even for
evaluations that have nothing to do with ragleaklab, and turns an exception here into a warning
followed by "No inspect tasks were found". So this module never raises: a failure (an
inspect_ai too old for a feature used here, a broken install) is logged once with its cause,
and the rest of inspect works on.
"""

from __future__ import annotations

import logging

log = logging.getLogger(__name__)

try:
    import ragleaklab._inspect.components  # noqa: F401  (registers on import)
except Exception as exc:  # never raise from an entry point (see module doc)
    log.warning(
        "ragleaklab's inspect_ai components are unavailable (%s: %s); "
        "reinstall with: pip install 'ragleaklab[inspect]'",
        type(exc).__name__,
        exc,
    )
