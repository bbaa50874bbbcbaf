"""The installed version, read from the distribution's metadata."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ragleaklab")
except PackageNotFoundError:  # running from a checkout that was never installed
    __version__ = "0+unknown"
