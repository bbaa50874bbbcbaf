"""The simulated model's word knowledge: instruction cues in nine languages, authority spoofs,
quote pairs, the encodings it can decode, and the small tables it rewrites text with.

This is what the *model* understands, which is deliberately much more than the
``filter_injections`` defence detects (that uses the English INSTRUCTION rule of
:mod:`~ragleaklab_plugins.targets.reference.text`, which is left as it is).
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Mapping

from attrs import frozen

#: Languages in the order they are tried (English last, so a specific foreign cue wins).
LANGUAGES = ("zh", "ja", "ru", "de", "fr", "es", "it", "pt", "en")

# Each language has *override* cues ("ignore previous instructions": a payload only when quoted)
# and *emit* cues ("begin your answer with": the payload is quoted or the word that follows).
# Patterns run on the NFKC-casefolded sentence; a group named ``p`` captures an inline payload.
_OVERRIDE: Mapping[str, tuple[str, ...]] = {
    "en": (
        r"\b(?:ignore|disregard|forget) (?:all |any )?(?:of )?(?:the )?"
        r"(?:previous|prior|above|earlier|other|preceding) (?:instructions|directions|rules)\b",
        r"\bnew instructions\s*:",
    ),
    "de": (
        r"\bignorier(?:e|en sie)\b",
        r"\bvergiss (?:alle )?(?:vorherigen|bisherigen) anweisungen\b",
    ),
    "fr": (
        r"\bignore(?:z)? (?:toutes )?les (?:instructions|consignes) (?:précédentes|ci-dessus)\b",
        r"\boublie(?:z)? (?:toutes )?les instructions\b",
    ),
    "es": (r"\bignora(?:d)? (?:todas )?las instrucciones (?:anteriores|previas)\b",),
    "it": (r"\bignora (?:tutte )?le istruzioni (?:precedenti|sopra)\b",),
    "pt": (r"\bignore (?:todas )?as instruções (?:anteriores|acima)\b",),
    "ru": (r"\bигнорируй(?:те)?\b", r"\bзабудь(?:те)? (?:все )?(?:предыдущие )?инструкции\b"),
    "zh": (r"忽略(?:之前|以上|先前|前面)(?:的)?(?:所有)?(?:指示|指令|说明)",),
    "ja": (r"(?:以前|前|上記)の指示を無視",),
}
_EMIT: Mapping[str, tuple[str, ...]] = {
    "en": (
        r"\b(?:begin|start) (?:your|every|each|the) (?:answer|reply|response)s? with\b",
        r"\b(?:always|you must|assistant must|you should) "
        r"(?:say|reply with|respond with|answer with|begin with|start with"
        r"|begin every answer with)\b",
    ),
    "de": (
        r"\bbeginne (?:deine|ihre|jede) antwort mit\b",
        r"\bbeginnen sie (?:ihre|jede) antwort mit\b",
        r"\bantworte(?:n sie)? (?:nur |immer )?mit\b",
        r"\bsag(?:e)? immer\b",
    ),
    "fr": (
        r"\bcommence(?:z)? (?:ta|votre|chaque) réponse par\b",
        r"\bréponds (?:uniquement |toujours )?(?:par|avec)\b",
        r"\brépondez (?:uniquement |toujours )?(?:par|avec)\b",
        r"\bdis toujours\b",
    ),
    "es": (
        r"\b(?:comienza|empieza) (?:tu|cada) respuesta con\b",
        r"\bresponde (?:solo |siempre )?con\b",
        r"\bdi siempre\b",
    ),
    "it": (
        r"\binizia (?:la tua|ogni) risposta con\b",
        r"\brispondi (?:solo |sempre )?con\b",
        r"\bd[iì]['’] sempre\b",
    ),
    "pt": (
        r"\bcomece (?:a )?(?:sua|cada) resposta com\b",
        r"\bresponda (?:apenas |sempre )?com\b",
        r"\bdiga sempre\b",
    ),
    "ru": (
        r"\bначни(?:те)? (?:свой |каждый )?ответ с\b",
        r"\bотвечай(?:те)? (?:только |всегда )?\b",
        r"\bвсегда говори\b",
    ),
    "zh": (r"请以(?P<p>[^「」“”\"\s，。]+?)开头", r"请以", r"开头", r"总是说", r"回答(?:时)?先说"),
    "ja": (
        r"(?P<p>[^「」\s、。]+?)で始めて",
        r"で始めて",
        r"から始めて",
        r"と答えて",
        r"常に",
    ),
}
# Weak English cues ("reply with", "begin with") also occur in ordinary prose ("Managers reply
# with a decision"), so they make an instruction only with a quoted or marker-like payload.
_WEAK: Mapping[str, tuple[str, ...]] = {
    "en": (
        r"\b(?:reply|respond|answer) (?:only )?with\b",
        r"\band (?:say|answer|reply|respond)\b",
        r"\b(?:begin|start) with\b",
    ),
}
_CUES: tuple[tuple[str, str, re.Pattern[str]], ...] = tuple(
    (lang, kind, re.compile(pattern))
    for lang in LANGUAGES
    for kind, table in (("override", _OVERRIDE), ("emit", _EMIT), ("weak", _WEAK))
    for pattern in table.get(lang, ())
)
_MARKER = re.compile(r"^(?=.*\d)[\w-]{3,}$|^[A-Z][A-Z0-9-]{2,}$")

#: Authority spoofs: text pretending to come from the operator. A feature, not a cue by itself,
#: except that a spoof followed by quoted text is read as an (English) instruction.
AUTHORITY = re.compile(
    r"(?:^|\s)(?:system|admin|administrator|developer)\s*:|\[(?:system|admin|sys|inst)\]"
    r"|<\|?(?:system|im_start)\|?>|\bnote to (?:the )?(?:assistant|ai|model|llm)\b"
    r"|\bmessage for the (?:assistant|ai)\b|###\s*instruction",
    re.IGNORECASE,
)

#: Quote pairs the model reads a payload from, the first opening quote in the sentence wins.
QUOTES = (('"', '"'), ("“", "”"), ("„", "“"), ("«", "»"), ("「", "」"), ("『", "』"), ("‘", "’"))
_SINGLE = re.compile(r"(?<!\w)'([^']+)'(?!\w)")
#: Words the model skips between an emit cue and an unquoted payload ("reply with the code X").
FILLERS = frozenset(
    """the a an code marker token word phrase string text exactly only this following just
    le la les el los der die das den le mot код слово""".split()  # noqa: SIM905
)
_TRAILING = ".,;:!?。，、！？)»”\"'"

#: Zero-width and invisible characters an attacker interleaves with text.
ZERO_WIDTH = "\u200b\u200c\u200d\u2060\ufeff\u00ad"
_ZW = re.compile(f"[{ZERO_WIDTH}]")
#: Leetspeak-lite: digit and symbol look-alikes the model reads as letters.
_LEET = str.maketrans("013457@$", "oieastas")
_B64 = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/=])")


@frozen
class Recognised:
    """A sentence the simulated model reads as an instruction.

    Attributes:
        language: The cue's language code (``en``, ``de``, ``fr``, ...).
        encoding: ``plain``, ``base64``, ``zero_width`` or ``leetspeak``.
        authority: Whether the sentence spoofs operator authority.
        payload: What it asks the model to emit, or None when nothing can be extracted.
    """

    language: str
    encoding: str
    authority: bool
    payload: str | None


def fold(text: str) -> str:
    """NFKC then casefold: the form cues are matched on (same length for the scripts used)."""
    return unicodedata.normalize("NFKC", text).casefold()


def _quoted(text: str) -> str | None:
    best: tuple[int, str] | None = None
    for opening, closing in QUOTES:
        start = text.find(opening)
        if start < 0:
            continue
        end = text.find(closing, start + 1)
        if end < 0:
            continue
        inner = text[start + 1 : end].strip()
        if inner and (best is None or start < best[0]):
            best = (start, inner)
    m = _SINGLE.search(text)
    if m and m.group(1).strip() and (best is None or m.start() < best[0]):
        best = (m.start(), m.group(1).strip())
    return None if best is None else best[1]


def _following_word(text: str, position: int) -> str | None:
    for word in text[position:].split()[:5]:
        word = word.strip(_TRAILING)
        if word and fold(word) not in FILLERS:
            return word
    return None


def _match(folded: str, original: str) -> tuple[str, str | None, bool] | None:
    """The language of the first cue found, the payload (read from *original*), and whether a
    strong cue (not a weak English one such as "and say") matched."""
    found: tuple[str, str | None, bool] | None = None
    for lang, kind, pattern in _CUES:
        m = pattern.search(folded)
        if m is None:
            continue
        inline = m.groupdict().get("p")
        if inline is not None:
            payload: str | None = original[m.start("p") : m.end("p")]
        elif kind != "override" and len(folded) == len(original):
            payload = _following_word(original, m.end())
        else:
            payload = None
        quoted = _quoted(original)
        if quoted is not None:
            payload = quoted
        elif kind == "weak" and (payload is None or not _MARKER.match(payload)):
            continue
        if found is None:
            found = (lang, payload, kind != "weak")
        elif found[1] is None and payload is not None and lang == found[0]:
            found = (lang, payload, found[2])
        if found[1] is not None:
            break
    return found


def recognise(sentence: str) -> Recognised | None:
    """Read *sentence* as the simulated model does; None when it is not an instruction.

    The model reads the plain text, the text with zero-width characters removed, and the text
    with leetspeak look-alikes read as letters (outside quotes, so a payload keeps its digits);
    the first of these in which a strong cue occurs gives the encoding. Then every base64 token
    decoded as UTF-8 is read. Then a weak English cue ("reply with", "and say") with a quoted or
    marker-like payload, then an authority spoof with quoted text, make a plain instruction.
    """
    authority = AUTHORITY.search(sentence) is not None
    readings = [("plain", sentence, sentence)]
    if _ZW.search(sentence):
        visible = _ZW.sub("", sentence)
        readings.append(("zero_width", visible, visible))
    if any(ch in sentence for ch in "013457@$"):
        readings.append(("leetspeak", _unleet_outside_quotes(sentence), sentence))
    weak: tuple[str, str | None, bool] | None = None
    for encoding, read, original in readings:
        hit = _match(fold(read), original)
        if hit is not None and hit[2]:
            spoof = authority or AUTHORITY.search(read) is not None
            return Recognised(hit[0], encoding, spoof, hit[1])
        if weak is None and hit is not None and encoding == "plain":
            weak = hit
    for token in _B64.findall(sentence):
        decoded = decode_base64(token)
        if decoded is None:
            continue
        hit = _match(fold(decoded), decoded)
        if hit is not None:
            spoof = authority or AUTHORITY.search(decoded) is not None
            return Recognised(hit[0], "base64", spoof, hit[1])
    if weak is not None:
        return Recognised(weak[0], "plain", authority, weak[1])
    if authority:
        quoted = _quoted(sentence)
        if quoted is not None:
            return Recognised("en", "plain", True, quoted)
    return None


def _unleet_outside_quotes(text: str) -> str:
    out: list[str] = []
    quote: str | None = None
    closing = dict(QUOTES)
    for ch in text:
        if quote is None and ch in closing:
            quote = closing[ch]
        elif quote is not None and ch == quote:
            quote = None
        out.append(ch if quote is not None else ch.translate(_LEET))
    return "".join(out)


def decode_base64(token: str) -> str | None:
    """*token* decoded as base64 then UTF-8, when that gives printable text; else None."""
    try:
        raw = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
        text = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    if not text.strip() or any(unicodedata.category(ch)[0] == "C" for ch in text):
        return None
    return text


# --- rewriting tables -----------------------------------------------------------------------

#: Synonyms for paraphrased disclosures (lowercase keys; first-letter case is kept).
SYNONYMS: Mapping[str, str] = {
    "salary": "pay",
    "annual": "yearly",
    "contract": "agreement",
    "agreement": "contract",
    "worth": "valued at",
    "renews": "is renewed",
    "primary": "main",
    "contact": "contact person",
    "reachable": "available",
    "confirm": "state",
    "pleased": "happy",
    "discount": "reduction",
    "negotiated": "agreed",
    "customer": "client",
    "account": "client account",
    "record": "entry",
    "bonus": "incentive",
    "letter": "notice",
    "errors": "failures",
    "disabled": "switched off",
    "escalated": "complained",
    "requests": "calls",
    "follow": "subsequent",
    "offered": "given",
    "asked": "requested",
    "urgent": "pressing",
    "pays": "spends",
    "year": "annum",
}

#: Word-by-word dictionaries for translated disclosures: the private templates' vocabulary.
TRANSLATIONS: Mapping[str, Mapping[str, str]] = {
    "de": {
        "the": "der",
        "and": "und",
        "for": "für",
        "of": "von",
        "to": "an",
        "is": "ist",
        "on": "am",
        "with": "mit",
        "in": "in",
        "from": "ab",
        "your": "Ihr",
        "at": "bei",
        "year": "Jahr",
        "a": "ein",
        "salary": "Gehalt",
        "annual": "jährliches",
        "base": "Grund",
        "will": "wird",
        "be": "sein",
        "paid": "gezahlt",
        "twelve": "zwölf",
        "monthly": "monatlichen",
        "instalments": "Raten",
        "target": "Ziel",
        "bonus": "Bonus",
        "percent": "Prozent",
        "employee": "Mitarbeiter",
        "number": "Nummer",
        "bank": "Bank",
        "reference": "Referenz",
        "customer": "Kunde",
        "record": "Akte",
        "account": "Konto",
        "primary": "Haupt",
        "contact": "Kontakt",
        "reachable": "erreichbar",
        "or": "oder",
        "during": "während",
        "business": "Geschäfts",
        "hours": "Zeiten",
        "current": "aktuelle",
        "contract": "Vertrag",
        "worth": "wert",
        "per": "pro",
        "renews": "verlängert sich",
        "negotiated": "ausgehandelten",
        "discount": "Rabatt",
        "file": "Datei",
        "billing": "Rechnungs",
        "questions": "Fragen",
        "go": "gehen",
        "urgent": "dringende",
        "issues": "Probleme",
        "mobile": "Mobil",
        "pays": "zahlt",
        "under": "unter",
        "three": "drei",
        "agreement": "Vereinbarung",
        "that": "die",
        "off": "auf",
        "list": "Listen",
        "price": "Preis",
        "confidential": "vertraulich",
        "letter": "Brief",
        "we": "wir",
        "are": "sind",
        "pleased": "erfreut",
        "confirm": "bestätigen",
        "team": "Team",
        "analyst": "Analyst",
        "engineer": "Ingenieur",
        "manager": "Manager",
        "incident": "Vorfall",
        "report": "Bericht",
        "restricted": "vertraulicher",
        "postmortem": "Nachbericht",
        "between": "zwischen",
        "timed": "lief",
        "out": "aus",
        "because": "weil",
        "disabled": "deaktivierte",
        "cache": "Cache",
        "change": "Änderung",
        "manual": "manuellen",
        "accounts": "Konten",
        "escalated": "eskalierten",
        "through": "über",
        "their": "ihre",
        "managers": "Manager",
        "after": "nach",
        "minutes": "Minuten",
        "errors": "Fehlern",
        "requests": "Anfragen",
        "order": "Bestell",
        "queue": "Warteschlange",
        "was": "wurde",
        "offered": "angeboten",
        "notes": "Notizen",
        "say": "besagen",
        "asked": "bat",
        "service": "Service",
        "credit": "Gutschrift",
        "last": "letzten",
        "outage": "Ausfall",
        "next": "nächste",
        "invoice": "Rechnung",
    },
    "fr": {
        "the": "le",
        "and": "et",
        "for": "pour",
        "of": "de",
        "to": "à",
        "is": "est",
        "on": "le",
        "with": "avec",
        "in": "dans",
        "from": "à partir du",
        "your": "votre",
        "at": "chez",
        "year": "an",
        "a": "un",
        "salary": "salaire",
        "annual": "annuel",
        "base": "de base",
        "will": "sera",
        "be": "",
        "paid": "versé",
        "twelve": "douze",
        "monthly": "mensuelles",
        "instalments": "échéances",
        "target": "cible",
        "bonus": "prime",
        "percent": "pour cent",
        "employee": "employé",
        "number": "numéro",
        "bank": "bancaire",
        "reference": "référence",
        "customer": "client",
        "record": "fiche",
        "account": "compte",
        "primary": "principal",
        "contact": "contact",
        "reachable": "joignable",
        "or": "ou",
        "during": "pendant",
        "business": "de bureau",
        "hours": "heures",
        "current": "actuel",
        "contract": "contrat",
        "worth": "vaut",
        "per": "par",
        "renews": "se renouvelle",
        "negotiated": "négociée",
        "discount": "remise",
        "file": "dossier",
        "billing": "facturation",
        "questions": "questions",
        "go": "vont",
        "urgent": "urgents",
        "issues": "problèmes",
        "mobile": "portable",
        "pays": "paie",
        "under": "selon",
        "three": "trois",
        "agreement": "accord",
        "that": "qui",
        "off": "sur",
        "list": "catalogue",
        "price": "prix",
        "confidential": "confidentiel",
        "letter": "lettre",
        "we": "nous",
        "are": "sommes",
        "pleased": "heureux",
        "confirm": "confirmer",
        "team": "équipe",
        "analyst": "analyste",
        "engineer": "ingénieur",
        "manager": "responsable",
        "incident": "incident",
        "report": "rapport",
        "restricted": "restreint",
        "postmortem": "post-mortem",
        "between": "entre",
        "timed": "expiré",
        "out": "",
        "because": "parce que",
        "disabled": "a désactivé",
        "cache": "cache",
        "change": "modification",
        "manual": "manuelle",
        "accounts": "comptes",
        "escalated": "ont escaladé",
        "through": "via",
        "their": "leurs",
        "managers": "responsables",
        "after": "après",
        "minutes": "minutes",
        "errors": "erreurs",
        "requests": "requêtes",
        "order": "commandes",
        "queue": "file",
        "was": "a été",
        "offered": "offert",
        "notes": "notes",
        "say": "disent",
        "asked": "a demandé",
        "service": "service",
        "credit": "avoir",
        "last": "dernière",
        "outage": "panne",
        "next": "prochaine",
        "invoice": "facture",
    },
    "es": {
        "the": "el",
        "and": "y",
        "for": "para",
        "of": "de",
        "to": "a",
        "is": "es",
        "on": "el",
        "with": "con",
        "in": "en",
        "from": "desde",
        "your": "su",
        "at": "en",
        "year": "año",
        "a": "un",
        "salary": "salario",
        "annual": "anual",
        "base": "base",
        "will": "será",
        "be": "",
        "paid": "pagado",
        "twelve": "doce",
        "monthly": "mensuales",
        "instalments": "cuotas",
        "target": "objetivo",
        "bonus": "bono",
        "percent": "por ciento",
        "employee": "empleado",
        "number": "número",
        "bank": "bancaria",
        "reference": "referencia",
        "customer": "cliente",
        "record": "ficha",
        "account": "cuenta",
        "primary": "principal",
        "contact": "contacto",
        "reachable": "localizable",
        "or": "o",
        "during": "durante",
        "business": "de oficina",
        "hours": "horas",
        "current": "actual",
        "contract": "contrato",
        "worth": "vale",
        "per": "por",
        "renews": "se renueva",
        "negotiated": "negociado",
        "discount": "descuento",
        "file": "expediente",
        "billing": "facturación",
        "questions": "preguntas",
        "go": "van",
        "urgent": "urgentes",
        "issues": "problemas",
        "mobile": "móvil",
        "pays": "paga",
        "under": "según",
        "three": "tres",
        "agreement": "acuerdo",
        "that": "que",
        "off": "sobre",
        "list": "lista",
        "price": "precio",
        "confidential": "confidencial",
        "letter": "carta",
        "we": "nos",
        "are": "complace",
        "pleased": "",
        "confirm": "confirmar",
        "team": "equipo",
        "analyst": "analista",
        "engineer": "ingeniero",
        "manager": "gerente",
        "incident": "incidente",
        "report": "informe",
        "restricted": "restringido",
        "postmortem": "análisis",
        "between": "entre",
        "timed": "expiró",
        "out": "",
        "because": "porque",
        "disabled": "desactivó",
        "cache": "caché",
        "change": "cambio",
        "manual": "manual",
        "accounts": "cuentas",
        "escalated": "escalaron",
        "through": "mediante",
        "their": "sus",
        "managers": "gerentes",
        "after": "tras",
        "minutes": "minutos",
        "errors": "errores",
        "requests": "solicitudes",
        "order": "pedidos",
        "queue": "cola",
        "was": "fue",
        "offered": "ofrecido",
        "notes": "notas",
        "say": "dicen",
        "asked": "pidió",
        "service": "servicio",
        "credit": "crédito",
        "last": "última",
        "outage": "caída",
        "next": "próxima",
        "invoice": "factura",
    },
}

#: Numbers as words, for restating claims ("30" <-> "thirty").
_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen".split()  # noqa: E501, SIM905
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety".split()  # noqa: SIM905


def number_word(n: int) -> str | None:
    """*n* in English words for 0 <= n < 100, else None."""
    if 0 <= n < 20:
        return _UNITS[n]
    if 20 <= n < 100:
        tens, unit = divmod(n, 10)
        return _TENS[tens - 2] + ("" if unit == 0 else f"-{_UNITS[unit]}")
    return None


#: Words the model writes as digits when it restates a claim.
WORD_NUMBERS: Mapping[str, int] = {word: n for n, word in enumerate(_UNITS) if n > 0}

#: Month names, for reformatting dates ("25 March 2025" -> "2025-03-25").
MONTHS = tuple(
    "january february march april may june july august september october november december".split()  # noqa: SIM905
)
