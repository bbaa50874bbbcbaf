"""Built-in reporters (group ``ragleaklab.reporters``): the text summary, JUnit XML, SARIF,
Markdown and HTML.

Each is a thin class over a rendering of the core (``ragleaklab_core.render_*``): the text
summary ``ragleaklab run`` prints is the core's own, and the other renderings share its wording
(verdict words, threshold rules, failing-case order) through the core, so the renderings stay
in the core, beside that wording, and only their registration lives here, exactly as a third
party's would. Each hands the report it is given to the core's rendering, which reads the
finished run's outcome (:class:`ragleaklab_core.outcome.RunOutcome`) by attribute.
"""
