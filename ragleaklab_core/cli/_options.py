"""Repeated ``KEY=VALUE`` flags (``--target-option``, ``--fitter-option``, ``label judge -O``)
read one way: VALUE as a TOML value, so types match the config file."""

from __future__ import annotations

from typing import Any

from ragleaklab_core.config import parse_option_value
from ragleaklab_core.errors import ConfigError


def key_values(items: tuple[str, ...], *, flag: str) -> dict[str, Any]:
    """Repeated ``KEY=VALUE`` flags as a dict; VALUE is read as a TOML value (a bare word that
    is none is a string)."""
    options: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(flag, [f"expected NAME=VALUE, got {item!r}"])
        options[key.strip()] = parse_option_value(value.strip())
    return options
