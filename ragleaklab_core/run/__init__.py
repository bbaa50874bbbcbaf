"""Running packs against a target: the runner, record and replay, gating, the suite, the report."""
