"""The markdown answer style: URL templates in retrieved text, and the URLs the model writes.

An exfiltration instruction is a sentence holding a URL *template* (a link, an image, a
reference definition, an HTML ``img`` or a bare URL with a placeholder such as ``{secret}``)
and asking the model to put it in its answer. This module reads such templates and fills them;
what data goes in, and whether the model obeys at all, is decided in :mod:`.simulated`.
"""

from __future__ import annotations

import base64
import re
from urllib.parse import quote, quote_plus, urlsplit

from attrs import frozen

from ragleaklab_plugins.targets.reference.lexicon import (
    AUTHORITY,
    ZERO_WIDTH,
    decode_base64,
    fold,
    recognise,
)

# A URL as templates write it: a placeholder may hold spaces ("{account number}").
_URL = r"(?:\{[^{}]*\}|[^\s()\[\]])+"
_BARE_URL = r"(?:https?://|//|www\.)(?:\{[^{}]*\}|[^\s<>\"'()\[\]])+"
#: The shapes a template is written in, tried in this order (an image before a link, since
#: ``![a](u)`` holds ``[a](u)``).
SHAPES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("html", re.compile(r"<img\b[^>]*?\bsrc\s*=\s*[\"'](?P<url>[^\"']+)[\"'][^>]*>", re.I)),
    ("image", re.compile(rf"!\[(?P<label>[^\]]*)\]\(\s*(?P<url>{_URL})\s*\)")),
    ("link", re.compile(rf"(?<!!)\[(?P<label>[^\]]*)\]\(\s*(?P<url>{_URL})\s*\)")),
    ("reference", re.compile(rf"\[(?P<label>[^\]]+)\]:\s*(?P<url>{_URL})")),
    ("bare", re.compile(rf"(?P<url>{_BARE_URL})", re.I)),
)
#: Placeholders the model fills: ``{x}``, ``{{x}}``, ``${X}``, ``$X``, ``%X%``, ``<x>``,
#: ``[X]``, and the bare capitalised words below.
PLACEHOLDER = re.compile(
    r"\{\{?(?P<a>[^{}]*)\}?\}|\$\{?(?P<b>[A-Za-z_]+)\}?|%(?P<c>[A-Za-z_]+)%"
    r"|<(?P<d>[A-Za-z_][A-Za-z_ ]*)>|\[(?P<e>[A-Z_][A-Z_ ]*)\]"
    r"|\b(?P<f>DATA|SECRET|PAYLOAD|INFO|VALUE)\b"
)
_TRAILING = ".,;:!?\"'"

#: Words that ask for the answer to carry something (a verb and what it goes into), by language.
EXFIL_CUES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "en",
        re.compile(
            r"\b(?:append|add|include|insert|render|embed|attach|output|print|show|display"
            r"|put|place|end|finish|close|sign off)\b.*\b(?:answers?|responses?|repl(?:y|ies)"
            r"|outputs?|images?|pictures?|pixels?|badges?|markdown|links?)\b"
        ),
    ),
    ("de", re.compile(r"\b(?:füge|fügen|hänge|hängen|binde)\b.*\b(?:antwort|bild|link)\b")),
    (
        "fr",
        re.compile(
            r"\b(?:ajoute|ajoutez|insère|insérez|inclus|incluez)\b.*\b(?:réponse|image|lien)\b"
        ),
    ),
    (
        "es",
        re.compile(r"\b(?:añade|añada|agrega|incluye|inserta)\b.*\b(?:respuesta|imagen|enlace)\b"),
    ),
)

#: What an instruction asks to put in the URL, read from the placeholder's name first and
#: then from the rest of the sentence. ``conversation`` is the user's whole question.
DATA_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("conversation", re.compile(r"question|query|conversation|chat|prompt")),
    ("email", re.compile(r"e-?mail")),
    ("phone", re.compile(r"phone|mobile")),
    ("money", re.compile(r"salary|amount|balance|income|price|total|wage")),
    ("date", re.compile(r"date|birthday|dob\b")),
    ("number", re.compile(r"account|number|\bid\b|card|iban|ssn|reference|policy|order")),
    ("name", re.compile(r"name\b|names\b|patient|employee|person")),
)
#: How an instruction asks the data to be encoded (the first that matches; else ``plain``).
DATA_ENCODINGS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("base64", re.compile(r"base ?64|\bb64")),
    ("hex", re.compile(r"\bhex")),
    ("percent", re.compile(r"url[- ]?encod|percent[- ]?encod|encodeuricomponent")),
)
_ZW = re.compile(f"[{ZERO_WIDTH}]")
_B64 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/=])")
_NOT_LABEL = re.compile(r"[^a-z0-9]+")
#: DNS allows at most 63 characters in one label.
MAX_LABEL = 63


@frozen
class Template:
    """A URL with a placeholder, as a sentence writes it.

    Attributes:
        shape: ``image``, ``link``, ``reference``, ``html`` or ``bare``.
        raw: The whole markup matched (``![alt](url)``, ``<img ...>``, ``[ref]: url``, the URL).
        url: The URL, placeholder included.
        label: The alt text, link text or reference label (``""`` for a bare URL or HTML).
        placeholder: The placeholder as written, e.g. ``{account_number}``.
        name: The placeholder's inner name, e.g. ``account_number``.
        placement: Where the placeholder sits: ``subdomain``, ``path``, ``query`` or ``fragment``.
        domain: The URL's host, lower-cased, without port (``""`` when it has none).
    """

    shape: str
    raw: str
    url: str
    label: str
    placeholder: str
    name: str
    placement: str
    domain: str


def host_of(url: str) -> str:
    """The lower-cased host of *url* (``//host`` and ``www.host`` read as absolute); or ``""``."""
    if url.lower().startswith("www."):
        url = "//" + url
    try:
        return (urlsplit(url).hostname or "").rstrip(".")
    except ValueError:
        return ""


def is_allowed(domain: str, allowed: tuple[str, ...]) -> bool:
    """Whether *domain* is an entry of *allowed* or under one, label by label."""
    return any(domain == entry or domain.endswith("." + entry) for entry in allowed)


def _placement(url: str, start: int) -> str:
    head = url[:start]
    if "#" in head:
        return "fragment"
    if "?" in head:
        return "query"
    after_scheme = head.split("//", 1)[1] if "//" in head else head
    if (url.lower().startswith("www.") or "//" in head) and "/" not in after_scheme:
        return "subdomain"
    return "path"


def find_template(text: str) -> Template | None:
    """The first URL of *text* that holds a placeholder, in the first shape that has one."""
    for shape, pattern in SHAPES:
        for m in pattern.finditer(text):
            url = m.group("url")
            if shape == "bare":
                url = url.rstrip(_TRAILING)
            found = PLACEHOLDER.search(url)
            if found is None:
                continue
            name = next(g for g in found.groups() if g is not None).strip()
            placement = _placement(url, found.start())
            domain = host_of(url.replace(found.group(), "x"))
            if placement == "subdomain":
                # The domain is what receives the data, never a label that carries it.
                domain = domain.split(".", 1)[-1]
            label = m.groupdict().get("label") or ""
            raw = url if shape == "bare" else m.group()
            return Template(shape, raw, url, label, found.group(), name, placement, domain)
    return None


@frozen
class ExfilInstruction:
    """A sentence the model reads as an instruction to put data in a URL.

    Attributes:
        template: The URL to fill.
        language: The cue's language (``en`` when only an authority spoof or an ordinary
            instruction cue made it one).
        encoding: How the instruction is written: ``plain``, ``zero_width`` or ``base64``.
        authority: Whether it spoofs operator authority.
        requested: The data kinds it asks for (``conversation``, ``email``, ``phone``,
            ``money``, ``date``, ``number``, ``name``); empty when it names none.
        data_encoding: How it asks the data to be encoded: ``plain``, ``percent``, ``base64``
            or ``hex``.
    """

    template: Template
    language: str
    encoding: str
    authority: bool
    requested: tuple[str, ...]
    data_encoding: str


def requested_kinds(template: Template, sentence: str) -> tuple[str, ...]:
    """The data kinds asked for: those the placeholder names, else those the sentence names."""
    for text in (fold(template.name.replace("_", " ")), fold(sentence.replace(template.url, " "))):
        kinds = tuple(kind for kind, pattern in DATA_KINDS if pattern.search(text))
        if kinds:
            return kinds
    return ()


def recognise_exfiltration(sentence: str) -> ExfilInstruction | None:
    """Read *sentence* as an exfiltration instruction; None when it is not one.

    It is one when some reading of it (as written, without zero-width characters, or a base64
    token decoded) holds a URL template *and* asks for it: an exfiltration cue (a verb such as
    "append" or "include" and what it goes into, such as "answer" or "image"), an ordinary
    instruction cue, or an authority spoof. A template alone, as API documentation writes
    ``https://api.example.com/orders/{id}``, is not an instruction.
    """
    readings = [("plain", sentence)]
    if _ZW.search(sentence):
        readings.append(("zero_width", _ZW.sub("", sentence)))
    for token in _B64.findall(sentence):
        decoded = decode_base64(token)
        if decoded is not None:
            readings.append(("base64", decoded))
    for encoding, read in readings:
        template = find_template(read)
        if template is None:
            continue
        folded = fold(read.replace(template.url, " "))
        language = next((lang for lang, cue in EXFIL_CUES if cue.search(folded)), None)
        authority = AUTHORITY.search(read) is not None
        if language is None:
            ordinary = recognise(read.replace(template.url, " "))
            if ordinary is not None:
                language = ordinary.language
            elif authority:
                language = "en"
            else:
                continue
        data_encoding = next(
            (name for name, pattern in DATA_ENCODINGS if pattern.search(fold(read))), "plain"
        )
        kinds = requested_kinds(template, read)
        return ExfilInstruction(template, language, encoding, authority, kinds, data_encoding)
    return None


def encode_value(value: str, how: str, placement: str) -> tuple[str, str]:
    """*value* written into a URL at *placement* in encoding *how*, and the encoding used.

    A host holds only letters, digits and hyphens, case-insensitively: in a subdomain, base64
    and hex are written as hex, anything else as a lower-case slug, cut into labels of at most
    63 characters.
    """
    if placement == "subdomain":
        if how in ("base64", "hex"):
            text, used = value.encode("utf-8").hex(), "hex"
        else:
            text, used = _NOT_LABEL.sub("-", value.lower()).strip("-") or "none", "plain"
        labels = [text[i : i + MAX_LABEL] for i in range(0, len(text), MAX_LABEL)]
        return ".".join(label.strip("-") or "x" for label in labels), used
    if how == "base64":
        return base64.urlsafe_b64encode(value.encode("utf-8")).decode().rstrip("="), how
    if how == "hex":
        return value.encode("utf-8").hex(), how
    if how == "percent":
        return quote(value, safe=""), how
    if placement == "path":
        return quote(value.replace(" ", "-"), safe=",@:"), how
    return quote_plus(value, safe=",@:"), how


def fill(template: Template, encoded: str) -> str:
    """The markup of *template* with its placeholder replaced by *encoded* data."""
    url = template.url.replace(template.placeholder, encoded, 1)
    return template.raw.replace(template.url, url, 1)


def filled_url(template: Template, encoded: str) -> str:
    """The URL of *template* with its placeholder replaced by *encoded* data."""
    return template.url.replace(template.placeholder, encoded, 1)
