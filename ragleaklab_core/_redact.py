"""Keep secrets out of reports, logs and recordings: redaction of plugin options.

Reports record every plugin's options so a run can be reproduced. Options whose key looks like a
credential (``api_key``, ``token``, ``Authorization``, ``password``, ``cookie``...) are replaced by
``"***"`` unless their value is only an environment reference such as ``"${API_KEY}"`` (the
reference is what reproduces the run, and it is not the secret). URLs lose their user:password
part and the values of credential-looking query parameters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "***"
_SECRET_KEY = re.compile(
    r"(pass(word)?|secret|token|api[_-]?key|apikey|auth|authorization|cookie|credential|"
    r"private[_-]?key|session)",
    re.IGNORECASE,
)
_ENV_ONLY = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")


def is_secret_key(key: str) -> bool:
    return bool(_SECRET_KEY.search(key))


def redact_url(url: str) -> str:
    """*url* without credentials: user:password and credential-looking query values go."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.scheme not in ("http", "https"):
        return url
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
    query = parts.query
    if query:
        pairs = [
            (k, REDACTED if is_secret_key(k) and not _ENV_ONLY.match(v) else v)
            for k, v in parse_qsl(query, keep_blank_values=True)
        ]
        query = urlencode(pairs, safe="*${}")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def redact(value: Any, key: str = "") -> Any:
    """A copy of *value* (JSON-like) with secret-looking entries redacted."""
    if isinstance(value, Mapping):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v, key) for v in value]
    if isinstance(value, str):
        if key and is_secret_key(key) and not _ENV_ONLY.match(value):
            return REDACTED
        if "://" in value:
            return redact_url(value)
    return value


__all__ = ["REDACTED", "redact", "redact_url"]
