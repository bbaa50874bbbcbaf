"""Quantities in text, in any of six languages: a number (digits in any common format, or words)
with its unit, converted to one base unit per dimension, so ``90 days``, ``three months``,
``12.9 weeks`` and ``noventa días`` compare equal within a tolerance.

Used by the claim metric to find a claim's value however an answer writes it. Only the
vocabulary is per language (English, Spanish, French, German, Portuguese, Italian); digits,
dates and clock times are read the same everywhere.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation

from attrs import frozen


def _word_set(text: str) -> frozenset[str]:
    return frozenset(text.split())


_DAY = 86400.0
_MONTH = 30.44 * _DAY
_YEAR = 365.25 * _DAY

#: Unit words (casefolded, accents kept) -> (dimension, factor to the dimension's base unit).
#: Time is in seconds (frequencies are their period: "quarterly" is 3 months), money per
#: currency, sizes in bytes, percentages in percent.
UNITS: dict[str, tuple[str, float]] = {}


def _units(dimension: str, factor: float, *words: str) -> None:
    for w in words:
        UNITS[w] = (dimension, factor)


_units("time", 0.001, "millisecond", "milliseconds", "ms", "milisegundo", "milisegundos")
_units("time", 0.001, "milliseconde", "millisecondes", "millisekunde", "millisekunden")
_units("time", 0.001, "milissegundo", "milissegundos", "millisecondo", "millisecondi")
_units("time", 1, "second", "seconds", "sec", "secs", "s", "segundo", "segundos", "seconde")
_units("time", 1, "secondes", "sekunde", "sekunden", "sek", "secondo", "secondi")
_units("time", 60, "minute", "minutes", "min", "mins", "minuto", "minutos", "minuten", "minuti")
_units("time", 3600, "hour", "hours", "hr", "hrs", "h", "hora", "horas", "heure", "heures")
_units("time", 3600, "stunde", "stunden", "std", "ora", "ore")
_units("time", _DAY, "day", "days", "día", "días", "dia", "dias", "jour", "jours", "journée")
_units("time", _DAY, "d")  # "30d", as tickets and configs write it
_units("time", _DAY, "journées", "tag", "tage", "tagen", "giorno", "giorni", "werktag")
_units("time", _DAY, "werktage", "werktagen", "arbeitstag", "arbeitstage", "arbeitstagen")
_units("time", 7 * _DAY, "week", "weeks", "wk", "wks", "semana", "semanas", "semaine")
_units("time", 7 * _DAY, "semaines", "woche", "wochen", "settimana", "settimane")
_units("time", 14 * _DAY, "fortnight", "fortnights", "quincena", "quinzena", "quinzaine")
_units("time", _MONTH, "month", "months", "mes", "meses", "mois", "monat", "monate", "monaten")
_units("time", _MONTH, "mese", "mesi", "mo", "mos")
_units("time", 3 * _MONTH, "quarter", "quarters", "trimestre", "trimestres", "quartal")
_units("time", 3 * _MONTH, "quartale", "quartalen", "trimestri")
_units("time", _YEAR, "year", "years", "yr", "yrs", "año", "años", "ano", "anos", "an", "ans")
_units("time", _YEAR, "année", "années", "jahr", "jahre", "jahren", "jahres", "anno", "anni")
_units("eur", 1, "euro", "euros", "eur", "€", "euro's")
_units("usd", 1, "dollar", "dollars", "usd", "$", "dólar", "dólares", "dollari", "dollaro")
_units("gbp", 1, "pound", "pounds", "gbp", "£", "libra", "libras", "sterline")
_units("percent", 1, "percent", "%", "pct", "prozent", "porcentaje", "pourcent")
_units("bytes", 1e3, "kb", "kilobytes")
_units("bytes", 1e6, "mb", "megabytes")
_units("bytes", 1e9, "gb", "gigabytes")
_units("bytes", 1e12, "tb", "terabytes")

#: Currency codes that may stand before the amount, as symbols do ("EUR 150").
CURRENCY_CODES = frozenset(["eur", "usd", "gbp"])
#: A letter right after a number that makes it thousands ("0.4k lines", "$12K").
THOUSANDS_SUFFIX = frozenset(["k"])

#: Words between a number and its unit that do not change the unit ("2 business days").
UNIT_FILLERS = _word_set(
    "business working calendar full whole more hábiles hábil laborables naturales ouvrés "
    "ouvrables ouvré pleins úteis útil corridos lavorativi lavorativo solari de d di"
)

#: Number words -> value. Units and teens, tens, multipliers, per language.
_SMALL: dict[str, int] = {}
for _lang_words in (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty",
    "cero uno dos tres cuatro cinco seis siete ocho nueve diez once doce trece catorce quince "
    "dieciséis diecisiete dieciocho diecinueve veinte",
    "zéro un deux trois quatre cinq six sept huit neuf dix onze douze treize quatorze quinze "
    "seize dix-sept dix-huit dix-neuf vingt",
    "null eins zwei drei vier fünf sechs sieben acht neun zehn elf zwölf dreizehn vierzehn "
    "fünfzehn sechzehn siebzehn achtzehn neunzehn zwanzig",
    "zero um dois três quatro cinco seis sete oito nove dez onze doze treze catorze quinze "
    "dezesseis dezessete dezoito dezenove vinte",
    "zero uno due tre quattro cinque sei sette otto nove dieci undici dodici tredici "
    "quattordici quindici sedici diciassette diciotto diciannove venti",
):
    for _i, _w in enumerate(_lang_words.split()):
        _SMALL.setdefault(_w, _i)
_SMALL.update(
    {
        "a": 1,
        "an": 1,
        "una": 1,
        "une": 1,
        "ein": 1,
        "eine": 1,
        "einen": 1,
        "einem": 1,
        "einer": 1,
        "uma": 1,
        "duas": 2,
        "catorze": 14,
        "dezasseis": 16,
        "dezassete": 17,
        "dezanove": 19,
        "dozen": 12,
    }
)
#: Articles that mean "one" only before a unit ("a year"), never alone.
ARTICLES = frozenset(
    ["a", "an", "una", "une", "ein", "eine", "einen", "einem", "einer", "uma", "un", "uno"]
)
#: "The next working day" is one: like an article, these mean "one" only before a unit.
NEXT = _word_set(
    "next following nachsten naechsten prochain prochaine proximo proxima siguiente prossimo "
    "prossima volgende"
)
#: Words skipped between a number and its unit: fillers, articles, "per", "al"; never "d",
#: which right after a number is the day ("30d"), not French "de".
_SKIPPABLE = (UNIT_FILLERS | ARTICLES | {"per", "al"}) - {"d"}
_TENS: dict[str, int] = {}
for _lang_tens in (
    "twenty thirty forty fifty sixty seventy eighty ninety",
    "veinte treinta cuarenta cincuenta sesenta setenta ochenta noventa",
    "vingt trente quarante cinquante soixante soixante-dix quatre-vingt quatre-vingt-dix",
    "zwanzig dreißig vierzig fünfzig sechzig siebzig achtzig neunzig",
    "vinte trinta quarenta cinquenta sessenta setenta oitenta noventa",
    "venti trenta quaranta cinquanta sessanta settanta ottanta novanta",
):
    for _i, _w in enumerate(_lang_tens.split(), start=2):
        _TENS[_w] = _i * 10
_TENS.update({"quatre-vingts": 80, "dreissig": 30, "veinti": 20})
_TENS_PREFIXES = frozenset(w[:4] for w in _TENS)
MULTIPLIERS = {
    **dict.fromkeys(("hundred", "cien", "ciento", "cent", "cents", "hundert", "cem", "cento"), 100),
    **dict.fromkeys(("thousand", "mil", "mille", "tausend", "mila"), 1000),
    **dict.fromkeys(("million", "millions", "millón", "millones", "millionen", "milhão"), 10**6),
}
#: Joiners inside a spelled number ("twenty-four", "vinte e quatro", "trente et un").
NUMBER_JOINERS = frozenset(("and", "y", "e", "et", "und"))
HALF = frozenset(("half", "medio", "media", "demi", "demie", "halb", "halbe", "halben", "meio"))
HALF |= frozenset(("meia", "mezzo", "mezza", "mezz"))
#: Words before a value that make it approximate: the comparison then allows more slack.
APPROX = _word_set(
    "about around roughly approximately approx circa ca nearly almost some under over "
    "aproximadamente unos unas cerca casi environ presque quelque etwa ungefähr rund fast knapp "
    "quase quasi"
)
#: Frequencies written as one word -> their period in seconds.
FREQUENCIES = {
    **dict.fromkeys(("daily", "diario", "diaria", "quotidien", "täglich", "diário"), _DAY),
    **dict.fromkeys(("quotidiano", "quotidianamente", "diariamente"), _DAY),
    **dict.fromkeys(("weekly", "semanal", "hebdomadaire", "wöchentlich", "settimanale"), 7 * _DAY),
    **dict.fromkeys(("monthly", "mensual", "mensuel", "monatlich", "mensal", "mensile"), _MONTH),
    **dict.fromkeys(("quarterly", "trimestral", "trimestriel", "vierteljährlich"), 3 * _MONTH),
    **dict.fromkeys(("trimestrale", "trimestralmente", "trimestriellement"), 3 * _MONTH),
    **dict.fromkeys(("biannually", "semiannually", "semestral", "semestriel"), 6 * _MONTH),
    **dict.fromkeys(("halbjährlich", "semestrale", "semestralmente"), 6 * _MONTH),
    **dict.fromkeys(("annually", "yearly", "annual", "anual", "anualmente", "annuel"), _YEAR),
    **dict.fromkeys(("annuellement", "jährlich", "annuale", "annualmente"), _YEAR),
}
#: "every"/"each" words: "every quarter" is a period of one quarter.
EVERY = _word_set("every each cada chaque tous toutes jede jeden jedes jeder alle ogni todos todas")
#: "twice"/"N times" words before "a year"/"per year": the period is the unit divided by N.
TIMES = {"once": 1, "twice": 2, "thrice": 3}
TIMES_WORDS = frozenset(["times", "veces", "fois", "mal", "vezes", "volte"])

_NUM = re.compile(
    r"(?<![\w.,])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+(?:,\d+)?|\d+(?:[.,]\d+)?)"
    r"(?![\w])"
)
_CLOCK = re.compile(
    r"(?<![\d:])(\d{1,2})(?:[:h.](\d{2}))?\s*(?:(a\.?\s?m\.?|p\.?\s?m\.?)|uhr|h(?!\w))",
    re.IGNORECASE,
)
_CLOCK24 = re.compile(r"(?<![\d:.])([01]?\d|2[0-3]):([0-5]\d)(?![\d:])")
WEEKDAYS = {}
for _i, _names in enumerate(
    [
        "monday lunes lundi montag segunda lunedì lunedi mon",
        "tuesday martes mardi dienstag terça martedì martedi tue tues",
        "wednesday miércoles miercoles mercredi mittwoch quarta mercoledì mercoledi wed",
        "thursday jueves jeudi donnerstag quinta giovedì giovedi thu thurs",
        "friday viernes vendredi freitag sexta venerdì venerdi fri",
        "saturday sábado sabado samedi samstag sabato sat",
        "sunday domingo dimanche sonntag domenica sun",
    ],
    start=1,
):
    for _w in _names.split():
        WEEKDAYS[_w] = _i
        if _w.endswith("day"):
            WEEKDAYS[_w + "s"] = _i
for _w, _i in list(WEEKDAYS.items()):
    if len(_w) > 5 and not _w.endswith("s"):
        WEEKDAYS.setdefault(_w + "s", _i)  # "lunes" stays; "montags", "sextas"


@frozen
class Quantity:
    """A value in a dimension's base unit; ``approx`` when the text hedged it ("about")."""

    dimension: str
    value: float
    approx: bool = False

    def matches(self, other: Quantity) -> bool:
        """The same dimension and values within 3% for time (8% when either was approximate,
        in any dimension), equal otherwise."""
        if self.dimension != other.dimension:
            return False
        if self.approx or other.approx:
            tolerance = 0.08
        elif self.dimension in ("time", "period"):
            tolerance = 0.03  # unit conversions: "12.9 weeks" for 90 days
        else:
            tolerance = 0.0  # money, percentages, sizes: as written
        a, b = self.value, other.value
        return abs(a - b) <= tolerance * max(abs(a), abs(b)) + 1e-9


@functools.lru_cache(maxsize=65536)
def fold(word: str) -> str:
    """Casefold and drop accents: the form words are compared in."""
    decomposed = unicodedata.normalize("NFKD", word.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def parse_number(token: str) -> float | None:
    """A number written in digits in any common format, or None.

    ``1,250,000``, ``1.250.000`` and ``1 250 000`` (joined by the tokeniser) are 1250000; a
    single separator followed by exactly three digits is a thousands separator only when a
    point and a comma both appear, so ``1.500`` and ``1,500`` are read as 1500 and ``3,5``,
    ``3.5`` as 3.5. A number beyond a float's range (``9`` written 400 times) is None: it
    measures nothing another value could equal, and as infinity it would break the arithmetic
    of what follows it ("... times a year").
    """
    t = token.replace("\u00a0", "").replace(" ", "")
    if "," in t and "." in t:
        t = (
            t.replace(",", "")
            if t.rfind(".") > t.rfind(",")
            else t.replace(".", "").replace(",", ".")
        )
    elif t.count(",") > 1 or t.count(".") > 1 or re.fullmatch(r"\d{1,3}[.,]\d{3}", t):
        t = t.replace(",", "").replace(".", "")
    else:
        t = t.replace(",", ".")
    try:
        value = float(Decimal(t))
    except InvalidOperation:
        return None
    return value if math.isfinite(value) else None


@functools.lru_cache(maxsize=65536)
def word_number(word: str) -> int | None:
    """A spelled number in one word: ``seven``, ``veinticuatro``, ``ventiquattro``,
    ``vierundzwanzig``, ``twenty-four``; None when *word* is not one."""
    if word in _SMALL and word not in ARTICLES:
        return _SMALL[word]
    if word in _TENS:
        return _TENS[word]
    if word in MULTIPLIERS:
        return MULTIPLIERS[word]
    if "-" in word:
        parts = [word_number(p) for p in word.split("-") if p not in NUMBER_JOINERS]
        if parts and all(p is not None for p in parts):
            return sum(p for p in parts if p is not None)
        return None
    if "und" in word[1:]:  # German: vierundzwanzig
        ones, _, tens_part = word.partition("und")
        u, t = _SMALL.get(ones if ones != "ein" else "eins"), _TENS.get(tens_part)
        if u is not None and t is not None:
            return t + u
    if word[:4] not in _TENS_PREFIXES:
        return None
    for tens_word, tens_value in _TENS.items():  # veinticuatro, ventiquattro, ventuno, trentotto
        for prefix in (tens_word, tens_word[:-1]):
            if len(prefix) >= 4 and word.startswith(prefix) and word != prefix:
                rest = word[len(prefix) :]
                if rest in _SMALL and 0 < _SMALL[rest] < 10 and rest not in ("a", "an"):
                    return tens_value + _SMALL[rest]
    return None


MONTHS: dict[str, int] = {}
for _lang_months in (
    "january february march april may june july august september october november december",
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "januar februar märz april mai juni juli august september oktober november dezember",
    "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
    "jan feb mar apr may jun jul aug sep oct nov dec",
):
    for _i, _w in enumerate(_lang_months.split(), start=1):
        MONTHS.setdefault(fold(_w), _i)
MONTHS["sept"] = 9

# Tokens: a numeric date, a clock time, a number (any format), a word (with inner hyphens and
# apostrophes), a currency or percent sign, or one punctuation character.
_TOKEN = re.compile(
    r"(?P<ndate>(?<![\d/.-])\d{1,4}[/.-]\d{1,2}[/.-]\d{1,4}(?![\d/-]|\.\d))"
    r"|(?P<clock>(?<![\d:.])(?:[01]?\d|2[0-3])[:h][0-5]\d(?:\s*[ap]\.?\s?m\b\.?)?(?![\d:])"
    r"|(?<![\d:.])(?:1[0-2]|0?\d)\s*[ap]\.?\s?m\b\.?)"
    r"|(?P<ord>(?<![\w.,])\d{1,2}(?:st|nd|rd|th|er|º|ª)(?!\w))"
    r"|(?P<num>(?<![\w.,])(?:\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:\.\d{3})+(?:,\d+)?"
    r"|\d{1,3}(?:[\u00a0 ]\d{3})+(?![\d.,]\d)|\d+(?:[.,]\d+)?))"
    r"|(?P<word>[^\W\d_]+(?:['’\-][^\W\d_]+)*)"
    r"|(?P<sym>[%€$£~≈])"
    r"|(?P<punct>[^\w\s])",
)


_NUMBER_HYPHEN = re.compile(r"(\d)-(?=[^\W\d_])")
_REPEATED_DIGITS = re.compile(r"(?<=[^\W\d_])\s*\(\s*\d[\d.,]*\s*\)")


@frozen
class Tok:
    """One token: its text as written, folded (casefold, no accents), and kind."""

    text: str
    folded: str
    kind: str  # ndate, clock, num, word, sym, punct


def tokenise(text: str) -> tuple[Tok, ...]:
    """The tokens of *text* (see :func:`_tokenise`), cached: a pack repeats its claims."""
    return _tokenise(text) if len(text) > 2000 else _cached_tokens(text)


@functools.lru_cache(maxsize=16384)
def _cached_tokens(text: str) -> tuple[Tok, ...]:
    return _tokenise(text)


def _tokenise(text: str) -> tuple[Tok, ...]:
    """The tokens of *text* (NFKC first; "30-day" is "30 day", "thirty (30)" is "thirty")."""
    text = unicodedata.normalize("NFKC", text)
    text = _NUMBER_HYPHEN.sub(r"\1 ", text)
    text = _REPEATED_DIGITS.sub("", text)
    out: list[Tok] = []
    for m in _TOKEN.finditer(text):
        kind, value = m.lastgroup or "punct", m.group()
        if kind == "ord":  # 4th, 1er, 2º: the number
            kind, value = "num", re.match(r"\d+", value).group()  # type: ignore[union-attr]
        out.append(Tok(value, fold(value).replace("’", "'"), kind))
    return tuple(out)


def _clock(text: str) -> str | None:
    m = re.fullmatch(r"(\d{1,2})(?:[:h](\d{2}))?\s*(?:([ap])\.?\s?m\.?)?", text.casefold())
    if m is None:
        return None
    hour, minute = int(m.group(1)), int(m.group(2) or 0)
    if m.group(3) == "p" and hour < 12:
        hour += 12
    if m.group(3) == "a" and hour == 12:
        hour = 0
    return f"t{hour:02d}:{minute:02d}" if hour < 24 and minute < 60 else None


def _date(year: int, month: int, day: int) -> str | None:
    if year < 100:
        year += 2000
    if 1 <= month <= 12 and 1 <= day <= 31 and 1000 <= year <= 2999:
        return f"d{year:04d}-{month:02d}-{day:02d}"
    return None


@frozen
class Values:
    """What a stretch of tokens holds: quantities, and exact values (bare numbers as written,
    clock times, weekdays, dates) as canonical strings."""

    quantities: tuple[tuple[int, Quantity], ...]
    exact: tuple[tuple[int, str], ...]


def read_values(toks: Sequence[Tok]) -> Values:
    """The quantities and exact values in *toks*.

    A number is digits or spelled words (several words add up: "twenty four", "vinte e
    quatro"; "hundred" and "thousand" multiply); "a"/"an"/"un"/"ein"... count as one only
    before a unit ("a year"); "and a half" and "half a/an" work in English and the other five
    languages' common forms. A unit up to two filler words after the number makes a quantity
    ("2 business days"); "every"/"each" + unit, "twice a year", "N times a year" and one-word
    frequencies ("quarterly") are periods. A unit right after another quantity's unit with
    "a"/"per" ("20 days per year") is a rate, not a second quantity.
    """
    quantities: list[tuple[int, Quantity]] = []
    exact: list[tuple[int, str]] = []
    n = len(toks)
    i = 0
    while i < n:
        t = toks[i]
        f = t.folded
        if t.kind == "clock":
            clock = _clock(t.text)
            if clock:
                exact.append((i, clock))
            i += 1
            continue
        if t.kind == "ndate":
            parts = [int(p) for p in re.split(r"[/.-]", t.text)]
            for y, mo, d in ((parts[0], parts[1], parts[2]), (parts[2], parts[1], parts[0])):
                date = _date(y, mo, d) if y >= 1000 or len(str(y)) == 4 else None
                if date:
                    exact.append((i, date))
            if parts[2] >= 1000:
                alt = _date(parts[2], parts[0], parts[1])
                if alt:
                    exact.append((i, alt))
            i += 1
            continue
        if f in WEEKDAYS and t.kind == "word" and (len(f) > 3 or t.text[0].isupper()):
            exact.append((i, f"w{WEEKDAYS[f]}"))
            i += 1
            continue
        money_first = t.kind == "sym" or (t.kind == "word" and f in CURRENCY_CODES)
        if money_first and f in UNITS and i + 1 < n and toks[i + 1].kind == "num":
            value = parse_number(toks[i + 1].text)
            if value is not None and i + 2 < n and toks[i + 2].folded in THOUSANDS_SUFFIX:
                value, i = value * 1000, i + 1  # "$1.5k"
            if value is not None and math.isfinite(value):  # €500, $1,000, EUR 150
                dimension, factor = UNITS[f]
                quantities.append((i, Quantity(dimension, value * factor)))
            i += 2
            continue
        if f in FREQUENCIES:
            quantities.append((i, Quantity("period", FREQUENCIES[f])))
            i += 1
            continue
        # a date written with a month name: 4 March 2021, March 4, 2021, 4 de marzo de 2021
        if f in MONTHS and t.kind == "word" and (len(f) > 3 or t.text[0].isupper()):
            date = _month_date(toks, i)
            if date:
                exact.append((i, date))
        approx = i > 0 and (toks[i - 1].folded in APPROX or toks[i - 1].folded in ("~", "≈"))
        number, j = _read_number(toks, i)
        every = 0
        if number is None and f in EVERY:
            number, j = _read_number(toks, i + 1)  # "every 3 months", "every quarter"
            number, every = number if number is not None else 1.0, 1
            j = max(j, i + 1)
        if number is None and f in TIMES:
            number, j, every = 1.0, i + 1, TIMES[f]
        if number is None:
            i += 1
            continue
        # "3 times a year" / "dos veces al año"
        k = j
        if every == 0 and k < n and toks[k].folded in TIMES_WORDS:
            every, number, k = int(number), 1.0, k + 1
        unit = None
        per = k + 1 < n and toks[k].folded in ("per", "por", "pour")
        if per and toks[k + 1].folded in ("cent", "ciento", "cento"):
            unit, k = UNITS["percent"], k + 1  # "12 per cent", "doce por ciento"
        while unit is None and k < n and k - j < 2 and toks[k].folded in _SKIPPABLE:
            k += 1
        if unit is None and k < n and toks[k].folded in HALF and every == 0:
            k += 1
        if unit is None:
            unit = UNITS.get(toks[k].folded) if k < n else None
        if unit is None and every == 0:
            share = _share_unit(toks, j)  # "3 of your 5 working days": 3 days
            if share is not None:
                quantities.append((i, Quantity(share[0], number * share[1], approx)))
                i = max(j, i + 1)  # the whole ("5 working days") is read next
                continue
        if unit is not None:
            dimension, factor = unit
            value = number * factor
            end = k + 1
            # "an hour and a half"
            if end + 2 < n + 1 and [x.folded for x in toks[end : end + 3]] in (
                ["and", "a", "half"],
                ["y", "media", ""],
            ):
                value += 0.5 * factor
                end += 3
            elif (
                end + 1 < n and toks[end].folded in NUMBER_JOINERS and toks[end + 1].folded in HALF
            ):
                value += 0.5 * factor
                end += 2
            if every > 1:
                value = factor / every
            if every and dimension == "time":
                dimension = "period"  # "every quarter" is how often, not how long
            quantities.append((i, Quantity(dimension, value, approx)))
            # "20 days per year": skip the rate's unit
            if (
                end + 1 < n
                and toks[end].folded
                in (
                    "per",
                    "a",
                    "an",
                    "al",
                    "par",
                    "pro",
                    "por",
                    "all",
                )
                and toks[end + 1].folded in UNITS
            ):
                end += 2
            i = max(end, i + 1)
            continue
        if every == 0 and f not in ARTICLES:  # a number without a unit: exact, as a value
            written = t.text if re.fullmatch(r"0\d+", t.text) else _canonical(number)
            exact.append((i, f"n{written}"))  # "007" is a code, not 7
        i = max(j, i + 1)
    return Values(tuple(quantities), tuple(exact))


#: What joins a part to its whole: "3 of 5 days", "3 out of 5", "3 von 5 Tagen", "3 sur 5".
_SHARE_OF = frozenset(("of", "von", "de", "sur", "su", "van"))
#: Words that may stand between "of" and the whole's number: "3 of your 5 days", "3 of the 5".
_BEFORE_WHOLE = frozenset(("your", "our", "their", "its", "his", "her", "my", "the")) | ARTICLES


def _share_unit(toks: Sequence[Tok], j: int) -> tuple[str, float] | None:
    """The unit of a whole that the number ending before *j* is a part of ("3 of your 5 working
    days", "3 out of 5 days"), or None."""
    n = len(toks)
    k = j
    if k + 1 < n and toks[k].folded == "out" and toks[k + 1].folded == "of":
        k += 2
    elif k < n and toks[k].folded in _SHARE_OF:
        k += 1
    else:
        return None
    if k < n and toks[k].folded in _BEFORE_WHOLE:
        k += 1
    if k >= n:
        return None  # "... 3 of" ends the text: no whole
    whole, end = _read_number(toks, k)
    if whole is None:
        return None
    while end < n and end - k < 4 and toks[end].folded in _SKIPPABLE:
        end += 1
    return UNITS.get(toks[end].folded) if end < n else None


def _canonical(number: float) -> str:
    return format(Decimal(repr(number)).normalize(), "f")


def _read_number(toks: Sequence[Tok], i: int) -> tuple[float | None, int]:
    """The number starting at token *i* and the index after it, or (None, i); (None, i) when
    *i* is past the end ("every" or "each" closing a piece: "of each") and for a number beyond
    a float's range ("999...k": as infinity it would break what is computed from it)."""
    if i >= len(toks):
        return None, i
    number, j = _read_finite_or_not(toks, i)
    if number is None or not math.isfinite(number):
        return None, i
    return number, j


def _read_finite_or_not(toks: Sequence[Tok], i: int) -> tuple[float | None, int]:
    """:func:`_read_number` for an *i* within *toks*, whatever the number's size."""
    n = len(toks)
    t = toks[i]
    if t.kind == "num":
        value = parse_number(t.text)
        j = i + 1
        if value is not None and j < n and toks[j].folded in THOUSANDS_SUFFIX:
            value, j = value * 1000, j + 1  # "0.4k", "12K"
    elif t.folded in HALF and i + 1 < n and toks[i + 1].folded in ARTICLES | UNITS.keys():
        # "half a day", "half an hour", "une demi-heure" (demi-heure is one word: below)
        return 0.5, i + 2 if toks[i + 1].folded in ARTICLES else i + 1
    elif "-" in t.folded and t.folded.split("-")[0] in HALF and t.folded.split("-")[1] in UNITS:
        return None, i
    else:
        total = 0
        current = 0
        j = i
        seen = False
        while j < n:
            f = toks[j].folded
            w = word_number(f)
            if w is None and (f in ARTICLES or f in NEXT) and not seen and j + 1 < n:
                nxt = toks[j + 1].folded
                if nxt in UNITS or nxt in UNIT_FILLERS or nxt in HALF:
                    w = 1
            if w is not None:
                if f in MULTIPLIERS:
                    current = max(current, 1) * w
                    if w >= 1000:
                        total, current = total + current, 0
                else:
                    current += w
                seen = True
                j += 1
                continue
            if seen and f in NUMBER_JOINERS and j + 1 < n:
                nxt = toks[j + 1].folded
                if word_number(nxt) or (
                    nxt in ARTICLES and nxt in _SMALL and nxt not in ("a", "an")
                ):
                    j += 1
                    current += 1 if word_number(nxt) is None else 0
                    if word_number(nxt) is None:
                        j += 1
                    continue
            break
        if not seen:
            return None, i
        value = float(total + current)
    if value is None:
        return None, i
    # "one and a half", "1 y medio"
    joined = j + 2 < n and toks[j].folded in NUMBER_JOINERS and toks[j + 1].folded in ARTICLES
    if joined and toks[j + 2].folded in HALF:
        return value + 0.5, j + 3
    if j + 1 < n and toks[j].folded in NUMBER_JOINERS and toks[j + 1].folded in HALF:
        return value + 0.5, j + 2
    return value, j


def _month_date(toks: Sequence[Tok], i: int) -> str | None:
    month = MONTHS[toks[i].folded]
    nums_before = [t for t in toks[max(0, i - 3) : i] if t.kind == "num" and t.text.isdigit()]
    nums_after = [t for t in toks[i + 1 : i + 5] if t.kind == "num" and t.text.isdigit()]
    years = [int(t.text) for t in nums_after if len(t.text) == 4]
    if not years:
        return None
    days = [int(t.text) for t in nums_before if len(t.text) <= 2] or [
        int(t.text) for t in nums_after if len(t.text) <= 2
    ]
    if not days:
        return None
    return _date(years[0], month, days[-1] if nums_before else days[0])
