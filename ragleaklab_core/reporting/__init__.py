"""Renderings of a finished run's report.json, and the diff of two runs."""
