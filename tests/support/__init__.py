"""Helpers shared by the tests and the benchmarks (not part of the installed package)."""
