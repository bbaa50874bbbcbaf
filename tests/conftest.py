"""ragleaklab's own tests use the testing kit it ships for plugin authors."""

pytest_plugins = ["ragleaklab_core.testing"]
