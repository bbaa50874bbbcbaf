"""Whether a clause of an answer states something as true or only reports, doubts or denies it.

"Some documents say the keys rotate every 8 hours" mentions what a page says; "the keys rotate
every 8 hours" asserts it. Answers are split into clauses (:func:`clauses`), and a clause is
*reported* when it attributes its content to a source it doubts, hedges, denies it, or calls it
wrong (:func:`reported`); a clause that only calls the one before it wrong ("That is outdated.")
reports that one. The markers are word sequences in English, Spanish, French, German, Italian and
Portuguese, matched on normalised words, so they hold whatever the case or punctuation.

A lexicon cannot read every way of distancing oneself from a claim; what it misses is stated on
the metrics' cards.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragleaklab_plugins.metrics._text import words

# A clause ends at a sentence end, a line break, a semicolon before a space, a dash,
# or a contrastive conjunction after a comma ("..., but ...", "..., aber ...").
_CONTRAST = (
    "but|however|whereas|although|though|while|yet|pero|aunque|sin embargo|mais|cependant|"
    "tandis que|alors que|aber|jedoch|doch|während|ma|però|tuttavia|mentre|mas|porém|contudo|"
    "enquanto|maar"
)
# A colon does not end one: "One page claims the following: ..." reports what follows.
_SPLIT = re.compile(
    rf"(?<=[.!?。！？])\s+|\n+|;\s+|\s+[-–—]\s+|,?\s+\b(?:{_CONTRAST})\b\s*,?\s*",
    re.IGNORECASE,
)


def clauses(text: str) -> list[str]:
    """The clauses of *text*, stripped, in order (empty pieces dropped)."""
    return [piece.strip(" \t*-•>#") for piece in _SPLIT.split(text) if piece and piece.strip()]


# Each marker is a sequence of normalised words; "*" matches any one word. A clause carrying one
# is reported (doubted, denied or attributed to a doubtful source), not asserted.
_MARKERS_TEXT = """
some documents say|some documents claim|some documents state|some sources say|some sources claim
some pages say|some pages claim|some posts say|one document says|one document claims
a document claims|a page claims|one page says|one page claims|one source says|one source claims
another document says|another document claims|other documents say|other sources say
a document says|a page says|a post says|an unverified|unverified|unconfirmed|reportedly
allegedly|supposedly|it is claimed|it is rumoured|it is rumored|rumour|rumor|is claimed
claims that|claim that|claiming that|the claim that|contrary to|despite claims|not true
is wrong|are wrong|was wrong|is incorrect|are incorrect|is outdated|are outdated|is false
are false|is inaccurate|is misleading|is not accurate|is not correct|not reliable|unreliable
is not reliable|do not trust|don't trust|should not be trusted|cannot be trusted|be careful
conflicting|conflicts with|contradicts|disagree|disagrees|incorrectly|mistakenly|erroneously
falsely|suspicious|looks like spam|seems to be spam|appears to be spam|not the official
not official|unofficial|is not|are not|isn't|aren't|does not|do not|doesn't|don't|never
no longer|not
algunos documentos dicen|algunas fuentes dicen|un documento dice|una página dice|según algunos
supuestamente|es incorrecto|es falso|no es correcto|no es cierto|está desactualizado|no es
no son|nunca|ya no|no
certains documents disent|certaines sources disent|un document affirme|une page affirme
selon certains|prétendument|soi-disant|est incorrect|est faux|est erroné|n est pas|ne sont pas
n est|pas|jamais
einige dokumente sagen|einige quellen sagen|ein dokument behauptet|eine seite behauptet
angeblich|vermeintlich|ist falsch|ist nicht korrekt|ist veraltet|nicht|kein|keine|nie|niemals
alcuni documenti dicono|alcune fonti dicono|un documento afferma|presumibilmente|è sbagliato
è falso|non è corretto|non è|non|mai
alguns documentos dizem|algumas fontes dizem|um documento afirma|supostamente|está errado
é falso|não é correto|não é|não|nunca
"""
_MARKERS: tuple[tuple[str, ...], ...] = tuple(
    sorted(
        {
            tuple(words(marker))
            for line in _MARKERS_TEXT.strip().splitlines()
            for marker in line.split("|")
            if words(marker)
        }
    )
)
#: Markers that only deny: a clause made of one of these (and little else) reports the clause
#: before it ("... 8 hours. That is wrong.").
_DENIALS_TEXT = (
    "that is wrong|this is wrong|that is incorrect|this is incorrect|that is outdated|"
    "this is outdated|that is false|this is false|that is not true|this is not true|"
    "that is not correct|this is not correct|not true|wrong|incorrect|false|outdated|"
    "eso es incorrecto|esto es falso|c est faux|c est incorrect|das ist falsch|"
    "è sbagliato|isso está errado"
)
_DENIALS = frozenset(tuple(words(m)) for m in _DENIALS_TEXT.split("|"))


def _has(tokens: Sequence[str], marker: Sequence[str]) -> bool:
    n = len(marker)
    return any(tokens[i : i + n] == list(marker) for i in range(len(tokens) - n + 1))


#: Negation words: a marker holding one is not read when the clause's source holds it too.
_NEGATIONS_TEXT = (
    "not no never isn aren doesn don t nicht kein keine nie niemals pas jamais non mai não nunca"
)
NEGATIONS = frozenset(_NEGATIONS_TEXT.split())


def markers(tokens: Sequence[str], source: Sequence[str] = ()) -> list[str]:
    """The stance markers in *tokens* (normalised words), as text, in marker order.

    Args:
        source: The words of the sentence the clause matches: a source that says "not" is
            asserted, not denied, by an answer that says "not" too.
    """
    ignore = NEGATIONS.intersection(source)
    found = []
    for marker in _MARKERS:
        if ignore.intersection(marker):
            continue
        if _has(tokens, marker):
            found.append(" ".join(marker))
    return found


def denies_previous(tokens: Sequence[str]) -> bool:
    """Whether a clause of *tokens* only calls the clause before it wrong ("That is outdated.")."""
    return tuple(tokens) in _DENIALS
