"""Renderings of a finished run's report.json: JUnit XML, SARIF, Markdown, HTML, and the diff of
two runs."""
