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

import functools
import json
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import quote, quote_plus, unquote, urlsplit, urlunsplit

from ragleaklab_core._wellformed import well_formed

#: What a redacted secret is replaced with.
REDACTED = "***"

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
# Words of a name: runs of letters and digits, camelCase split ("apiKey" -> api, key).
_WORD = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
# Words that name a credential when a name ends with them (``X-Client-Secret``, ``api_key``,
# ``Proxy-Authorization``) but not when another word follows (``token_limit``, ``key_field``,
# ``auth_type``, ``session_timeout``): the last word says what the value is.
_CREDENTIAL_WORDS = frozenset(
    {
        "secret", "secrets", "password", "passwords", "passwd", "passphrase", "passcode", "pwd",
        "pw", "pass", "token", "key", "apikey", "sig", "signature", "cookie", "cookies", "auth",
        "oauth", "authorization", "authorisation", "authentication", "session", "credential",
        "credentials", "bearer",
    }
)  # fmt: skip
# A credential written as one word with what it belongs to (``accesstoken``, ``xapikey``,
# ``clientsecret``, ``sessionid``, ``basicauth``): a word ending with one of these.
_COMPOUND = re.compile(
    r"(?:token|secret|password|passwd|passphrase|apikey|signature|cookie|credentials?"
    r"|authori[sz]ation|sessionid|basicauth|(?:access|secret|private|signing|client|subscription"
    r"|master|auth|hmac|encryption|account|storage|shared|service|admin)key)$"
)
# Words that may follow a credential word and still name its value (``auth_header``,
# ``token_value``, ``X-Api-Key-Id``, ``session_id``).
_VALUE_WORDS = frozenset({"value", "header", "string", "str", "id", "hex", "b64", "base64"})
# ``key`` after one of these names a field of the data, not a credential (``input_key`` of a
# chain, ``sort_key``, ``doc_key``).
_DATA_KEYS = frozenset(
    {
        "input", "output", "answer", "query", "question", "result", "response", "context",
        "prompt", "source", "doc", "document", "text", "content", "metadata", "id", "score",
        "page", "sort", "primary", "partition", "cache", "group", "dedup", "dedupe", "lookup",
        "foreign", "hash", "range", "join", "row", "column", "index", "map", "dict", "label",
    }
)  # fmt: skip
# ``code`` is a credential alone (``?code=`` of OAuth) or after these, not in ``status_code``.
_AUTH_CODES = frozenset({"auth", "oauth", "authorization", "verification", "otp", "mfa", "totp"})
# A URL of any scheme in free text (a log line, a connection string), up to the first space
# or quote: ``https://u:pw@h``, ``postgresql://u:pw@h/db``, ``mongodb+srv://``, ``redis://:pw@h``.
_URL_IN_TEXT = re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`\x1b]+")
# ``name=value`` pairs of a connection string (``Server=x;Password=pw;``, libpq's
# ``host=x password='p w'``), a log line or a query: the value of a credential-named name is
# hidden. A value runs to the next separator, or is quoted ('', "" or ODBC's {}).
_PAIR = re.compile(
    r"(?<![\w.-])([A-Za-z_][\w.-]*)([ \t]*=[ \t]*)"
    r"('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|\{[^}]*\}|[^;\s&,'\"]+)"
)


def env_references(text: str) -> list[str]:
    """The variable names referenced as ``${NAME}`` in *text*, in order."""
    return _ENV_REF.findall(text)


def is_env_reference(text: str) -> bool:
    """True when *text* is exactly one ``${NAME}`` reference (a value that is not itself secret)."""
    return _ENV_REF.fullmatch(text) is not None


def is_secret_name(name: str) -> bool:
    """True when an option, header or query parameter called *name* carries a credential.

    The rule reads the words of the name (split at ``-``, ``_``, ``.``, spaces and camelCase,
    digits ignored): the last one says what the value is. It is a credential word (``secret``,
    ``key``, ``token``, ``password``, ``passphrase``, ``signature``, ``cookie``, ``auth``,
    ``Authorization``...), a word ending with one (``accesstoken``), or ``value``/``header``/
    ``id``... after one (``auth_header``). Words, not substrings: ``keyword``, ``max_tokens``,
    ``token_limit``, ``key_field``, ``input_key`` and ``author`` are not secret.
    """
    words = [w.lower() for w in _WORD.findall(name) if not w.isdigit()]
    if len(words) > 1 and words[-1] in _VALUE_WORDS and _credential(words[:-1]):
        return True
    return _credential(words)


def _credential(words: list[str]) -> bool:
    """True when the last of *words* names a credential (see :func:`is_secret_name`)."""
    if not words:
        return False
    last, before = words[-1], (words[-2] if len(words) > 1 else None)
    if last == "key":
        return before not in _DATA_KEYS
    if last == "code":
        return before is None or before in _AUTH_CODES
    return last in _CREDENTIAL_WORDS or _COMPOUND.search(last) is not None


#: The former name of :func:`is_secret_name`.
is_secret_key = is_secret_name


def redact_url(url: str) -> str:
    """*url* (any scheme: ``https``, ``postgresql``, ``mongodb+srv``, ``redis``...) with
    credentials replaced by ``***``: the password of ``user:pass@`` (or a lone user name, often a
    token), and the values of query parameters named like a credential (token, key, secret,
    signature, password...). A value that is just a ``${NAME}`` reference is kept: it is not
    secret. A URL with nothing to hide is returned exactly as written.
    """
    return _url(url, [])


def _url(url: str, found: list[str]) -> str:
    """:func:`redact_url`, adding each hidden value (raw and decoded) to *found*."""
    try:
        parts = urlsplit(url)
    except ValueError:
        found.append(url)
        return "<unparseable url>"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, colon, password = userinfo.partition(":")
        if colon:
            if password and not is_env_reference(password):
                found.extend((password, unquote(password)))
                password = REDACTED
            userinfo = f"{user}:{password}"
        elif user and not is_env_reference(user):
            found.extend((user, unquote(user)))
            userinfo = REDACTED
        netloc = f"{userinfo}@{hostport}"
    query = "&".join(_param(p, found) for p in parts.query.split("&")) if parts.query else ""
    if (netloc, query) == (parts.netloc, parts.query):
        return url  # nothing to hide: keep the URL exactly as written
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _param(pair: str, found: list[str]) -> str:
    name, eq, value = pair.partition("=")
    if eq and value and is_secret_name(unquote(name)) and not is_env_reference(unquote(value)):
        found.extend((value, unquote(value)))
        return f"{name}={REDACTED}"
    return pair


def _pairs(text: str, found: list[str]) -> str:
    """*text* with the values of credential-named ``name=value`` pairs (connection strings,
    log lines) replaced by ``***``, adding each to *found*."""

    def hide(match: re.Match[str]) -> str:
        name, eq, value = match.groups()
        bare = value[1:-1] if value[:1] in ("'", '"', "{") else value
        if not bare or bare == REDACTED or not is_secret_name(name) or env_references(bare):
            return match.group(0)
        found.extend((value, bare))
        return f"{name}{eq}{REDACTED}"

    return _PAIR.sub(hide, text) if "=" in text else text


def _literal(text: str, found: list[str]) -> str:
    """*text* with the credentials written in it hidden: those of URLs, then of pairs."""
    if "://" in text:
        text = _URL_IN_TEXT.sub(lambda m: _url(m.group(0), found), text)
    return _pairs(text, found)


def redact(value: Any, key: str = "") -> Any:
    """A copy of *value* (JSON-like) with secret-looking entries redacted: values of
    secret-named keys (unless built from ``${NAME}`` references), credentials written in URLs
    and connection strings, and any registered secret."""
    return _redact(value, key, [])


def _redact(value: Any, key: str, found: list[str]) -> Any:
    if isinstance(value, Mapping):
        return {k: _redact(v, str(k), found) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_redact(v, key, found) for v in value]
    secret_name = bool(key) and is_secret_name(key)
    if isinstance(value, str):
        if secret_name and value and not env_references(value):
            found.append(value)
            return REDACTED
        return redact_forms(_literal(value, found), _ordered)
    if secret_name and isinstance(value, int | float) and not isinstance(value, bool):
        found.append(str(value))  # a PIN or a numeric key is a credential too
        return REDACTED
    return value


def literal_secrets(value: Any) -> tuple[str, ...]:
    """The credentials written literally in *value* (a plugin's options): what :func:`redact`
    hides there, as written and decoded. Registered (:func:`register_secrets`), they are hidden
    wherever else they turn up too: an app that echoes its connection string in an answer."""
    found: list[str] = []
    _redact(value, "", found)
    return tuple(sorted({f for f in found if f and f != REDACTED}))


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
    """Every non-empty value of *values* as written, JSON-escaped, percent-encoded and
    form-encoded (``+`` for a space), longest first (so a secret that holds another is hidden
    whole)."""
    forms = {
        form
        for value in values
        for form in (
            value,
            json.dumps(value)[1:-1],
            quote(value, safe=""),
            quote_plus(value, safe=""),
        )
        if form
    }
    return tuple(sorted(forms, key=lambda s: (-len(s), s)))


@functools.lru_cache(maxsize=32)
def _forms_pattern(forms: tuple[str, ...]) -> re.Pattern[str]:
    # Longest first, as given: at any position the whole of a secret that holds another is
    # hidden. Case-insensitive: a system may echo a secret upper-cased, an encoder may write
    # %2f for %2F.
    return re.compile("|".join(re.escape(f) for f in forms), re.IGNORECASE)


def redact_forms(text: str, forms: Iterable[str]) -> str:
    """*text* with every one of *forms* (from :func:`secret_forms`), in any letter case,
    replaced by ``***``: the one rule by which the log handler, the targets' error messages and
    what a run writes hide secrets."""
    forms = tuple(forms)
    if not forms or not text:
        return text
    return _forms_pattern(forms).sub(REDACTED, text)


def redact_text(text: str) -> str:
    """*text* with every credential written in it (:func:`redact_url` of every URL, the values
    of credential-named ``name=value`` pairs) and every registered secret replaced by ``***``,
    made well-formed Unicode (a lone surrogate as U+FFFD): every plugin's error message, log line
    and command-line error passes here on its way out, and no writer accepts a lone surrogate."""
    return well_formed(redact_forms(_literal(text, []), _ordered))


def mask_secrets(value: Any) -> tuple[Any, bool]:
    """*value* (JSON-like: an answer, a retrieved text, metadata, evidence) with every
    registered secret replaced by ``***``, and whether anything was replaced.

    Only secrets known by value are masked, not URLs' credentials or ``name=value`` pairs: text
    the system under test wrote (an answer quoting a leaked URL) is the evidence of a run, and
    is altered only where it holds a secret of this run's own configuration.
    """
    forms = _ordered
    if not forms:
        return value, False
    changed = False

    def walk(item: Any) -> Any:
        nonlocal changed
        if isinstance(item, str):
            hidden = redact_forms(item, forms)
            changed = changed or hidden != item
            return hidden
        if isinstance(item, Mapping):
            return {walk(str(k)): walk(v) for k, v in item.items()}
        if isinstance(item, list | tuple):
            return [walk(v) for v in item]
        return item

    masked = walk(value)
    return (masked, True) if changed else (value, False)


__all__ = [
    "REDACTED",
    "env_references",
    "forget_secrets",
    "is_env_reference",
    "is_secret_key",
    "is_secret_name",
    "literal_secrets",
    "mask_secrets",
    "redact",
    "redact_forms",
    "redact_text",
    "redact_url",
    "register_secret",
    "register_secrets",
    "registered_secrets",
    "secret_forms",
]
