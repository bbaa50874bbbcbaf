"""The optional defences: injection and stuffing filter, paraphrase, quote cut, URL strip."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Set

from ragleaklab_plugins.targets.reference.markdown import host_of, is_allowed
from ragleaklab_plugins.targets.reference.text import (
    content_tokens,
    is_instruction,
    split_sentences,
    tokenize,
)

#: A non-stopword token making up more than 1/STUFFING_SHARE of a chunk's non-stopword tokens...
STUFFING_SHARE = 5
#: ...and occurring at least this often marks the chunk as keyword-stuffed.
STUFFING_MIN_COUNT = 5
#: Paraphrase copies at most this many consecutive source tokens between two separators.
PARAPHRASE_GROUP = 5
#: Connectives paraphrase puts before each group; the first absent from the sources is used.
#: None is a stopword, so the documents' non-stopword tokens tell whether they hold it.
SEPARATORS = ("also", "plus", "next", "besides", "likewise", "further", "again", "moreover")


def has_instruction(text: str) -> bool:
    """True when some sentence of *text* is a planted instruction."""
    return any(is_instruction(s) for s in split_sentences(text))


def looks_stuffed(text: str) -> bool:
    """True when one non-stopword token is more than 20% of them and occurs at least 5 times."""
    terms = content_tokens(text)
    if not terms:
        return False
    top = max(Counter(terms).values())
    return top >= STUFFING_MIN_COUNT and top * STUFFING_SHARE > len(terms)


def is_suspicious(text: str) -> bool:
    """What ``filter_injections`` drops: a planted instruction or keyword stuffing."""
    return has_instruction(text) or looks_stuffed(text)


def pick_separator(taken: Set[str]) -> str:
    """The first of :data:`SEPARATORS` (then ``note1``, ``note2``...) not in *taken*."""
    for word in SEPARATORS:
        if word not in taken:
            return word
    n = 1
    while f"note{n}" in taken:
        n += 1
    return f"note{n}"


def paraphrase(text: str, separator: str) -> str:
    """Rewrite *text* so that it shares no run of 6 tokens with any text lacking *separator*.

    The tokens of *text* are cut into groups of at most five, which are emitted last group
    first, each preceded by *separator*: ``"sep g3; sep g2; sep g1"``. Every run of six
    consecutive tokens of the result therefore contains *separator*, which the caller chose
    among the words the sources do not contain. The result keeps every token of *text*
    (lowercased, punctuation dropped) and starts with *separator*, so runs that cross into it
    from the preceding text contain it too.
    """
    tokens = tokenize(text)
    groups = [tokens[i : i + PARAPHRASE_GROUP] for i in range(0, len(tokens), PARAPHRASE_GROUP)]
    return "; ".join(f"{separator} {' '.join(g)}" for g in reversed(groups))


def cut_words(text: str, max_words: int) -> tuple[str, bool]:
    """The first *max_words* whitespace-separated words of *text*, and whether any were cut."""
    words = text.split()
    if len(words) <= max_words:
        return text, False
    return " ".join(words[:max_words]), True


# What strip_untrusted_urls reads. Like many real sanitizers it knows the common markup only:
# unquoted HTML attributes and scheme-less bare URLs ("www.host/...") get through it.
_REFERENCE_DEFINITION = re.compile(r"^[ ]{0,3}\[[^\]]+\]:[ \t]*<?(?P<url>\S+?)>?[ \t]*$", re.M)
_HTML_TAG = re.compile(r"<[A-Za-z][^<>]*>")
_HTML_URL = re.compile(
    r"\b(?:src|href|srcset|data|poster|background)\s*=\s*([\"'])(?P<url>.*?)\1", re.I
)
_MARKDOWN_IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?(?P<url>[^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_MARKDOWN_LINK = re.compile(
    r"\[(?P<text>[^\]]*)\]\(\s*<?(?P<url>[^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"
)
_SCHEME_URL = re.compile(r"(?<![\w/])(?:https?:)?//[^\s<>\"'()\[\]]+", re.I)
#: What a bare URL to a domain not allowed is replaced with.
LINK_REMOVED = "[link removed]"


def _untrusted(url: str, allowed: tuple[str, ...]) -> bool:
    """A URL with a host outside *allowed*; a relative URL (no host) stays."""
    return bool(host := host_of(url)) and not is_allowed(host, allowed)


def strip_untrusted_urls(text: str, allowed: tuple[str, ...]) -> tuple[str, list[str]]:
    """*text* without the URLs whose host is not in *allowed* (nor under one), and those URLs.

    Reference definitions and HTML tags holding such a URL are dropped, markdown images
    dropped, markdown links replaced by their text, and bare ``http(s)://`` or ``//`` URLs
    replaced by :data:`LINK_REMOVED`; the removed URLs are returned in the order removed.
    """
    removed: list[str] = []

    def drop(m: re.Match[str]) -> str:
        removed.append(m.group("url"))
        return ""

    def check(pattern: re.Pattern[str], replace: Callable[[re.Match[str]], str]) -> None:
        nonlocal text
        text = pattern.sub(
            lambda m: replace(m) if _untrusted(m.group("url"), allowed) else m.group(), text
        )

    def drop_tag(m: re.Match[str]) -> str:
        urls = [u.group("url") for u in _HTML_URL.finditer(m.group())]
        bad = [u for u in urls if _untrusted(u, allowed)]
        removed.extend(bad)
        return "" if bad else m.group()

    def unlink(m: re.Match[str]) -> str:
        removed.append(m.group("url"))
        return m.group("text")

    def replace_bare(m: re.Match[str]) -> str:
        url = m.group().rstrip(".,;:!?")
        if not _untrusted(url, allowed):
            return m.group()
        removed.append(url)
        return LINK_REMOVED + m.group()[len(url) :]

    check(_REFERENCE_DEFINITION, drop)
    text = _HTML_TAG.sub(drop_tag, text)
    check(_MARKDOWN_IMAGE, drop)
    check(_MARKDOWN_LINK, unlink)
    text = _SCHEME_URL.sub(replace_bare, text)
    if not removed:
        return text, removed
    return re.sub(r"[ ]{2,}", " ", text).strip(), removed
