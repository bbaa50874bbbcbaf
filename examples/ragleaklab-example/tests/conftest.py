"""Opt in to ragleaklab's testing kit: its pytest plugin (fixtures such as rlk_fake_dist)."""

pytest_plugins = ["ragleaklab_core.testing"]
