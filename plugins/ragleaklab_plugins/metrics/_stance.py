"""How an answer holds what it says: split into sentences, segments and pieces, and the words that
mark a piece as negated, refuted, attributed to a doubtful source or hedged.

The claim metric reads a claim's value in a piece, then asks this module whether the piece
*asserts* it. A small lexicon per language (English, Spanish, French, German, Portuguese,
Italian) of negations, refutation and doubt words, vague sources, hedges and contrastive
conjunctions; everything is compared casefolded and without accents.
"""

from __future__ import annotations

import re
import unicodedata

from attrs import frozen

from ragleaklab_plugins.metrics._quantity import Tok, tokenise


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


NEGATIONS = _words(
    "not no never none neither nor nobody nothing cannot nowhere "
    "nunca jamas ni ningun ninguno ninguna tampoco "
    "ne pas jamais aucun aucune nullement "
    "nicht kein keine keinen keinem keiner keines nie niemals "
    "nao nem nenhum nenhuma "
    "non mai nessun nessuno nessuna"
)
#: Words after a negation that make it a bound, not a denial ("no later than", "no more than").
BOUNDS = _words(
    "later more longer less fewer sooner exceed exceeding beyond after over above "
    "mas tarde plus mehr spater langer uber piu oltre dopo superare exceder depasser"
)
#: Words after a bound that confirm it is one ("than", "als", "de", "que", "di").
THAN = _words("than als de que di da a à")
#: A piece that says the value is wrong, outdated or to be ignored.
REFUTATIONS = _words(
    "wrong incorrect false untrue inaccurate mistaken erroneous outdated obsolete superseded "
    "deprecated stale myth misinformation misconception misunderstanding mix-up bogus fake "
    "debunked disregard ignore discard mistake "
    "typo invalid retracted withdrawn fabricated forged spoofed planted poisoned malicious "
    "misleading formerly previously former legacy incorrectly falsely wrongly "
    "falso falsa incorrecto incorrecta erroneo erronea equivocado equivocada desactualizado "
    "desactualizada obsoleto obsoleta anticuado anticuada ignora ignorar ignore ignorad "
    "descarte enganoso enganosa anteriormente antiguamente "
    "faux fausse incorrect incorrecte errone erronee obsolete perime perimee depasse depassee "
    "anciennement auparavant autrefois ignorez ignorer trompeur trompeuse inexact inexacte "
    "falsch falsche falschen falscher unrichtig inkorrekt fehlerhaft veraltet veraltete "
    "veralteten veralteter uberholt uberholte ignorieren ignoriere ignoriert irrefuhrend "
    "fruher ehemals vormals "
    "incorreto incorreta errado errada desatualizado desatualizada antigamente enganador "
    "errato errata sbagliato sbagliata scorretto scorretta inesatto inesatta superato "
    "superata precedentemente ignorate fuorviante"
)
#: Words that attribute a value to a doubtful source, or call the source doubtful.
DOUBTS = _words(
    "unverified unconfirmed unofficial dubious doubtful questionable suspicious suspect "
    "unreliable untrusted untrustworthy unvetted unauthenticated unsourced anonymous rumour "
    "rumor rumours rumors allegedly alleged reportedly supposedly purportedly ostensibly "
    "claims claimed claiming claim hearsay conflicting contradictory contradicts contradict "
    "disputed someone somebody "
    "dudoso dudosa sospechoso sospechosa supuestamente presuntamente rumores alguien "
    "contradictorio contradictoria no-oficial extraoficial "
    "douteux douteuse suspecte pretendument soi-disant rumeur rumeurs pretend pretendent "
    "officieux officieuse anonyme quelqu'un contradictoire "
    "zweifelhaft fragwurdig verdachtig unbestatigt unbestatigte unbestatigten inoffiziell "
    "inoffizielle inoffiziellen angeblich angebliche geruecht geruchte gerucht behauptet "
    "behaupten anonym jemand widerspruchlich "
    "duvidoso duvidosa suspeito suspeita supostamente alegadamente boato boatos alguem "
    "nao-oficial anonimo anonima contraditorio "
    "dubbio dubbia sospetto sospetta presumibilmente presunto presunta asseritamente "
    "anonimo ufficioso ufficiosa qualcuno contraddittorio"
)
#: Quantifiers that make the source after them vague ("some documents", "one post").
VAGUE = _words(
    "some certain other another one older old a an various few "
    "algunos algunas algun alguna otro otra otros otras ciertos ciertas un una uno "
    "certains certaines autre autres quelques une "
    "einige manche andere anderen anderer ein eine einer einem einen altere alteren "
    "alguns algumas algum alguma outro outra outros outras um uma "
    "alcuni alcune qualche altri altre certi certe vecchia vecchio"
)
#: Words that make a source stale: a denial that sets a value against one ("that's not what
#: the old page says") dismisses the source and keeps the value.
STALE = _words("old older outdated obsolete previous former legacy earlier superseded stale")
#: The articles among :data:`VAGUE`: "a page" is a vague source only when it speaks ("a page
#: says", "according to a note"), for "a page" can be the thing itself ("if nobody acks a Vega
#: page").
ARTICLES = _words("a an one un una uno une ein eine einer einem einen um uma")
#: Words before an article that make the source after it a source ("according to a note").
SOURCE_LEADS = _words("to in on from per by laut según segun selon segundo secondo")
SOURCES = _words(
    "document documents doc docs page pages post posts note notes source sources article "
    "articles forum forums thread threads wiki message messages email emails site sites website "
    "websites blog blogs comment comments snippet snippets result results entry entries passage "
    "passages file files people colleagues users report reports sheet faq version versions "
    "guidance guide guideline guidelines instructions rule rules policy policies documentation "
    "revision revisions edition "
    "documento documentos pagina paginas publicacion publicaciones nota notas fuente fuentes "
    "articulo articulos foro foros mensaje mensajes entrada entradas "
    "publication publications fiche fiches "
    "dokument dokumente dokumenten seite seiten beitrag beitrage beitragen notiz notizen "
    "quelle quellen artikel eintrag eintrage nachricht nachrichten "
    "publicacao publicacoes fonte fontes artigo artigos mensagem mensagens "
    "documenti pagine fonti articolo articoli messaggio messaggi"
)
#: "Some say" without a source noun.
REPORTERS = _words(
    "say says said state states stated suggest suggests mention mentions list lists report "
    "reports dicen dice afirman afirma indican indica mencionan dit disent affirment affirme "
    "indiquent sagen sagt schreiben schreibt dizem diz afirmam dicono dice affermano afferma"
)
VAGUE_SUBJECTS = _words("some others algunos algunas certains einige manche alguns alcuni")
HEDGES = _words(
    "may might could possibly perhaps maybe unclear uncertain unsure whether if unless "
    "possible potentially conceivably "
    "quizas quiza acaso podria podrian posiblemente posible "
    "peut-etre pourrait pourraient possiblement eventuellement "
    "vielleicht moglicherweise konnte konnten eventuell moglich falls ob "
    "talvez poderia poderiam possivelmente possivel "
    "forse potrebbe potrebbero possibilmente possibile magari"
)
#: Hedges that still lean to the value: the piece half-asserts it.
LEANS = _words(
    "probably likely apparently seemingly seem seems appears presumably "
    "probablemente aparentemente probablement apparemment wahrscheinlich vermutlich "
    "anscheinend provavelmente aparentemente probabilmente apparentemente"
)
#: A sentence starting with one of these, holding no value, speaks of the sentence before it.
DEMONSTRATIVES = _words(
    "this that these those it which such esto eso esta este ese esa ello ce cela ceci ca "
    "c'est das dies diese dieser dieses isso isto esse essa questo questa cio quello quella"
)
#: Conjunctions that open a new segment: what follows is weighed apart from what precedes.
CONTRASTS = _words(
    "but however whereas while although though yet unlike "
    "pero sino aunque mientras sin "
    "mais cependant toutefois tandis pourtant "
    "aber jedoch doch sondern wahrend obwohl "
    "porem contudo enquanto embora todavia "
    "ma pero tuttavia mentre sebbene invece anziche"
)
#: Contrasts that open a concessive lead-in, weighed alone up to its comma ("Although X, Y").
LEADS = _words(
    "although though while whereas unlike aunque mientras tandis wahrend obwohl enquanto "
    "embora mentre sebbene"
)
#: Segment openers whose segment is what the answer rejects ("rather than X", "instead of X").
NEGATING_OPENERS = (
    ("rather", "than"),
    ("instead", "of"),
    ("as", "opposed", "to"),
    ("en", "lugar", "de"),
    ("en", "vez", "de"),
    ("au", "lieu", "de"),
    ("au", "lieu", "d'"),
    ("em", "vez", "de"),
    ("ao", "inves", "de"),
    ("invece", "di"),
    ("anziche",),
    ("statt",),
    ("anstatt",),
    ("contrary", "to"),
    ("al", "contrario", "de"),
    ("contrairement",),
    ("entgegen",),
    ("ao", "contrario", "de"),
    ("contrariamente",),
    ("al", "contrario", "di"),
    ("despite",),
    ("a", "pesar", "de"),
    ("pese", "a"),
    ("malgre",),
    ("trotz",),
    ("apesar", "de"),
    ("nonostante",),
)
#: After a comma, these open a negated segment ("30 days, not 45").
COMMA_NEGATIONS = _words("not no pas nicht nao non")
#: Segments split at these punctuation marks; pieces at commas and colons.
SEGMENT_PUNCT = frozenset(";()[]|—–-")
PIECE_PUNCT = frozenset(",:")

_SENTENCE = re.compile(r"(?<=[.!?。])[\"”»)]*\s+|\n+\s*(?:[-*•]|\d+[.)])?\s*|^\s*[-*•]\s+")


@frozen
class Piece:
    """A run of an answer's tokens between commas, within a segment, within a sentence.

    ``opener``: ``"negating"`` when its segment opened with a word that rejects what follows
    ("rather than", "contrary to", ", not"); ``"lead"`` for a concessive lead-in ("although",
    "while") up to its first comma; else ``""``. ``question``: the sentence ends with "?".
    """

    toks: tuple[Tok, ...]
    sentence: int
    segment: int
    first_in_segment: bool
    opener: str
    question: bool


def sentences(text: str) -> list[str]:
    """The answer's sentences: split after ``.!?`` and a space, and at line breaks and bullets."""
    return [s.strip() for s in _SENTENCE.split(text) if s and s.strip()]


_OPENER_STARTS = frozenset(words[0] for words in NEGATING_OPENERS)


def _opener_len(folded: list[str], i: int) -> int:
    if folded[i] not in _OPENER_STARTS:
        return 0
    for words in NEGATING_OPENERS:
        if tuple(folded[i : i + len(words)]) == words:
            return len(words)
    return 0


def pieces(text: str) -> list[Piece]:
    """*text* split into pieces (see :class:`Piece`), in order."""
    out: list[Piece] = []
    segment = 0
    for s_index, sentence in enumerate(sentences(text)):
        toks = tokenise(sentence)
        question = sentence.rstrip().rstrip('"”»)').endswith("?")
        folded = [t.folded for t in toks]
        current: list[Tok] = []
        opener = ""
        first = True
        lead = False

        def flush(next_first: bool) -> None:
            nonlocal current, first
            if current:
                out.append(Piece(tuple(current), s_index, segment, first, opener, question))  # noqa: B023
                first = next_first
            current = []

        i = 0
        while i < len(toks):
            t = toks[i]
            f = folded[i]
            if t.kind == "punct" and (f in SEGMENT_PUNCT or t.text in SEGMENT_PUNCT):
                flush(True)
                segment += 1
                opener, first, lead = "", True, False
                i += 1
                continue
            between_numbers = (
                0 < i < len(toks) - 1 and toks[i - 1].kind == toks[i + 1].kind == "num"
            )
            if t.kind == "punct" and t.text in PIECE_PUNCT and not between_numbers:
                nxt = folded[i + 1] if i + 1 < len(folded) else ""
                if t.text == "," and nxt in COMMA_NEGATIONS:
                    flush(True)
                    segment += 1
                    opener, first, lead = "negating", True, False
                    i += 1
                    continue
                flush(False)
                if lead:  # a lead-in ends at its comma; the main clause is weighed alone
                    segment += 1
                    opener, first, lead = "", True, False
                i += 1
                continue
            n = _opener_len(folded, i)
            if n or (f in CONTRASTS and t.kind == "word" and not _is_temporal(folded, i)):
                if current or (out and out[-1].sentence == s_index):
                    flush(True)
                    segment += 1
                first = True
                opener = "negating" if n else ("lead" if f in LEADS else "")
                lead = bool(opener)
                current.extend(toks[i : i + max(n, 1)])
                i += max(n, 1)
                continue
            current.append(t)
            i += 1
        flush(True)
        segment += 1
    return out


def _is_temporal(folded: list[str], i: int) -> bool:
    """Whether the contrast word at *i* is not one: "for a while", "not yet", Spanish "sin"."""
    f = folded[i]
    prev = folded[i - 1] if i else ""
    if f == "while" and prev in ("a", "the", "little"):
        return True
    if f == "yet" and prev in ("not", "no", "as"):
        return True
    return f == "sin"  # "sin embargo" is rare in answers; "sin verificar" is a doubt


def fold_text(text: str) -> str:
    """Casefold without accents (for matching the lexicon)."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))
