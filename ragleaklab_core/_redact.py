"""Keep secrets out of reports, logs and recordings: the one redactor of ragleaklab.

- :func:`is_secret_name` is the one rule for names that carry credentials: option keys, headers
  and query parameters (``api_key``, ``token``, ``Authorization``, ``password``, ``cookie``,
  ``X-Amz-Signature``, a parameter called ``key`` or ``sig``...). The network targets use it too.
- Reports record every plugin's options so a run can be reproduced: :func:`redact` replaces the
  values of secret-named options by ``"***"`` unless they are built from environment references
  such as ``"${API_KEY}"`` or ``"Bearer ${RAG_TOKEN}"`` (the reference is what reproduces the
  run, and it is not the secret: the value it expands to is).
- :func:`redact_url` removes the user:password part of a URL and the values of secret-named
  query parameters.
- Values expanded from the environment are registered with :func:`register_secret` by whoever
  expands them (the network targets); :func:`redact_text` hides them, and every URL, in any
  text, and the CLI's log handler applies it to every line it writes.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, unquote, urlsplit, urlunsplit

#: What a redacted secret is replaced with.
REDACTED = "***"

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Parts that mark a name as a credential wherever they appear in it.
_SECRET_PART = re.compile(
    r"token|secret|passw|pwd|api[-_]?key|apikey|credential|signature|session|cookie"
    r"|authori[sz]ation|private[-_]?key|access[-_]?key",
    re.IGNORECASE,
)
# Words that mark a name as a credential only as a whole word of it: ``key`` and ``X-Api-Key``
# but not ``keyword`` or ``monkey``; ``sig`` (signed URLs) but not ``signal``.
_SECRET_WORDS = frozenset({"key", "sig", "auth", "code", "pass", "pw"})
# Words of a name: runs of letters and digits, camelCase split ("apiKey" -> api, key).
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# A URL in free text (a log line), up to the first space or quote.
_URL_IN_TEXT = re.compile(r"https?://[^\s'\"<>`\x1b]+", re.IGNORECASE)


def env_references(text: str) -> list[str]:
    """The variable names referenced as ``${NAME}`` in *text*, in order."""
    return _ENV_REF.findall(text)


def is_env_reference(text: str) -> bool:
    """True when *text* is exactly one ``${NAME}`` reference (a value that is not itself secret)."""
    return _ENV_REF.fullmatch(text) is not None


def is_secret_name(name: str) -> bool:
    """True when an option, header or query parameter called *name* carries a credential."""
    if _SECRET_PART.search(name):
        return True
    return any(word.lower() in _SECRET_WORDS for word in _WORD.findall(name))


#: The former name of :func:`is_secret_name`.
is_secret_key = is_secret_name


def redact_url(url: str) -> str:
    """*url* with credentials replaced by ``***``: the password of ``user:pass@`` (or a lone user
    name, often a token), and the values of query parameters named like a credential (token, key,
    secret, signature...). A value that is just a ``${NAME}`` reference is kept: it is not secret.
    A URL with nothing to hide is returned exactly as written.
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<unparseable url>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, password = userinfo.partition(":")
        if colon:
            if not is_env_reference(password):
                password = REDACTED
            userinfo = f"{user}:{password}"
        elif not is_env_reference(user):
            userinfo = REDACTED
        netloc = f"{userinfo}@{hostport}"
    query = "&".join(_redact_param(p) for p in parts.query.split("&")) if parts.query else ""
    if (netloc, query) == (parts.netloc, parts.query):
        return url  # nothing to hide: keep the URL exactly as written
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _redact_param(pair: str) -> str:
    name, eq, value = pair.partition("=")
    if eq and value and is_secret_name(unquote(name)) and not is_env_reference(unquote(value)):
        return f"{name}={REDACTED}"
    return pair


def redact(value: Any, key: str = "") -> Any:
    """A copy of *value* (JSON-like) with secret-looking entries redacted: values of
    secret-named keys (unless built from ``${NAME}`` references), URLs' credentials and any
    registered secret."""
    if isinstance(value, Mapping):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(v, key) for v in value]
    if isinstance(value, str):
        if key and value and is_secret_name(key) and not env_references(value):
            return REDACTED
        return redact_text(value)
    return value


# ---- secrets known by value ------------------------------------------------------------------

_registered: set[str] = set()
_ordered: tuple[str, ...] = ()
_lock = threading.Lock()
# Shorter values would hide ordinary words of every log line; no credential is that short.
_MIN_SECRET = 4


def register_secret(value: str) -> None:
    """Make *value* (a credential a plugin read from the environment) a secret everywhere:
    :func:`redact_text`, and so every log line the CLI writes, replaces it by ``***``, also
    percent-encoded or JSON-escaped."""
    register_secrets((value,))


def register_secrets(values: Iterable[str]) -> None:
    """:func:`register_secret` for several values."""
    global _ordered
    fresh = {v for v in values if isinstance(v, str) and len(v) >= _MIN_SECRET}
    with _lock:
        if fresh <= _registered:
            return
        _registered.update(fresh)
        _ordered = secret_forms(_registered)


def registered_secrets() -> tuple[str, ...]:
    """The registered secrets and their encoded forms, longest first."""
    return _ordered


def forget_secrets() -> None:
    """Forget every registered secret (for tests)."""
    global _ordered
    with _lock:
        _registered.clear()
        _ordered = ()


def secret_forms(values: Iterable[str]) -> tuple[str, ...]:
    """Every non-empty value of *values* as written, JSON-escaped and percent-encoded, longest
    first (so a secret that holds another is hidden whole)."""
    forms = {
        form
        for value in values
        for form in (value, json.dumps(value)[1:-1], quote(value, safe=""))
        if form
    }
    return tuple(sorted(forms, key=lambda s: (-len(s), s)))


def redact_forms(text: str, forms: Iterable[str]) -> str:
    """*text* with every one of *forms* (from :func:`secret_forms`) replaced by ``***``: the one
    rule by which both the log handler and the targets' error messages hide secrets."""
    for form in forms:
        if form in text:
            text = text.replace(form, REDACTED)
    return text


def redact_text(text: str) -> str:
    """*text* with every URL's credentials (:func:`redact_url`) and every registered secret
    replaced by ``***``."""
    if "://" in text:
        text = _URL_IN_TEXT.sub(lambda m: redact_url(m.group(0)), text)
    return redact_forms(text, _ordered)


__all__ = [
    "REDACTED",
    "env_references",
    "forget_secrets",
    "is_env_reference",
    "is_secret_key",
    "is_secret_name",
    "redact",
    "redact_forms",
    "redact_text",
    "redact_url",
    "register_secret",
    "register_secrets",
    "registered_secrets",
    "secret_forms",
]
