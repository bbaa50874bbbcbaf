"""Numbers and durations written as words, in the languages answers are commonly written in.

An answer may say "ninety days", "noventa días", "three months" or "12,9 semaines" where its
source says "90 days": :func:`canonical_tokens` turns word tokens (from
:func:`ragleaklab_plugins.metrics._text.words`) into tokens where number words are digits and a
number followed by a unit of time also gives one duration token in minutes, so all of those meet.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from decimal import Decimal, InvalidOperation

# English, Spanish, French, German, Italian, Portuguese (and Dutch for the small ones): the
# languages machine translation and multilingual chat models most often produce for these users.
_UNITS: dict[int, tuple[str, ...]] = {
    0: ("zero", "cero", "zéro", "null", "nulla", "nul"),
    1: ("one", "uno", "una", "un", "une", "eins", "eine", "ein", "einen", "um", "uma", "een"),
    2: ("two", "dos", "deux", "zwei", "due", "dois", "duas", "twee"),
    3: ("three", "tres", "trois", "drei", "tre", "três", "drie"),
    4: ("four", "cuatro", "quatre", "vier", "quattro", "quatro"),
    5: ("five", "cinco", "cinq", "fünf", "funf", "cinque", "vijf"),
    6: ("six", "seis", "sechs", "sei", "zes"),
    7: ("seven", "siete", "sept", "sieben", "sette", "sete", "zeven"),
    8: ("eight", "ocho", "huit", "acht", "otto", "oito"),
    9: ("nine", "nueve", "neuf", "neun", "nove", "negen"),
    10: ("ten", "diez", "dix", "zehn", "dieci", "dez", "tien"),
    11: ("eleven", "once", "onze", "elf", "undici"),
    12: ("twelve", "doce", "douze", "zwölf", "zwolf", "dodici", "doze", "twaalf", "dozen"),
    13: ("thirteen", "trece", "treize", "dreizehn", "tredici", "treze"),
    14: ("fourteen", "catorce", "quatorze", "vierzehn", "quattordici", "catorze"),
    15: ("fifteen", "quince", "quinze", "fünfzehn", "funfzehn", "quindici"),
    16: ("sixteen", "dieciséis", "dieciseis", "seize", "sechzehn", "sedici", "dezesseis"),
    17: ("seventeen", "diecisiete", "siebzehn", "diciassette", "dezessete"),
    18: ("eighteen", "dieciocho", "achtzehn", "diciotto", "dezoito"),
    19: ("nineteen", "diecinueve", "neunzehn", "diciannove", "dezenove"),
    20: ("twenty", "veinte", "vingt", "zwanzig", "venti", "vinte"),
    30: ("thirty", "treinta", "trente", "dreißig", "dreissig", "trenta", "trinta"),
    40: ("forty", "cuarenta", "quarante", "vierzig", "quaranta", "quarenta"),
    50: ("fifty", "cincuenta", "cinquante", "fünfzig", "funfzig", "cinquanta", "cinquenta"),
    60: ("sixty", "sesenta", "soixante", "sechzig", "sessanta", "sessenta"),
    70: ("seventy", "setenta", "septante", "siebzig", "settanta"),
    80: ("eighty", "ochenta", "octante", "achtzig", "ottanta", "oitenta"),
    90: ("ninety", "noventa", "nonante", "neunzig", "novanta"),
}
#: Number word -> value.
NUMBER_WORDS: dict[str, int] = {w: n for n, ws in _UNITS.items() for w in ws if w.isalpha()}
# "un", "una", "ein" and friends are also articles: they count as 1 only before a unit of time
# ("un mois", "a week"), where the article is the number.
_ARTICLES = frozenset(
    {"a", "an", "un", "una", "une", "ein", "eine", "einen", "einer", "einem", "um", "uma", "een"}
)
_MULTIPLIERS: dict[str, int] = {
    **dict.fromkeys(("hundred", "cien", "ciento", "cent", "hundert", "cento", "cem"), 100),
    **dict.fromkeys(("thousand", "mil", "mille", "tausend", "duizend"), 1000),
    **dict.fromkeys(("million", "millón", "millon", "millions", "millionen", "milione"), 10**6),
}

#: Units of time, in minutes (a year is 365 days; a month is read both as 30 days and as a
#: twelfth of a year, see :data:`_MONTH_AS_YEAR`, so "3 months" meets "90 days" and "12 months"
#: meets "one year").
_DURATIONS: dict[str, int] = {
    **dict.fromkeys(("minute", "minutes", "min", "mins", "minuto", "minutos", "minuti"), 1),
    **dict.fromkeys(("minuten",), 1),
    **dict.fromkeys(("hour", "hours", "hr", "hrs", "h", "hora", "horas", "heure", "heures"), 60),
    **dict.fromkeys(("stunde", "stunden", "ora", "ore", "uur"), 60),
    **dict.fromkeys(("day", "days", "día", "dia", "días", "dias", "jour", "jours"), 1440),
    **dict.fromkeys(("tag", "tage", "tagen", "giorno", "giorni", "dag", "dagen"), 1440),
    **dict.fromkeys(("week", "weeks", "semana", "semanas", "semaine", "semaines"), 10080),
    **dict.fromkeys(("woche", "wochen", "settimana", "settimane", "weken"), 10080),
    **dict.fromkeys(("month", "months", "mes", "meses", "mois", "monat", "monate"), 43200),
    **dict.fromkeys(("monaten", "mese", "mesi", "maand", "maanden", "mês"), 43200),
    **dict.fromkeys(("year", "years", "año", "años", "ano", "anos", "an", "ans"), 525600),
    **dict.fromkeys(("année", "années", "jahr", "jahre", "jahren", "anno", "anni"), 525600),
    **dict.fromkeys(("jaar", "jaren"), 525600),
}
_MONTH = 43200
_MONTH_AS_YEAR = 43800
_YEAR = 525600
# "8h", "30min", "2wks": a number and a unit written as one token.
_GLUED = re.compile(r"(\d+)(h|hr|hrs|min|mins|d|wk|wks|mo|mos|yr|yrs)")
_GLUED_UNITS = {"d": "day", "wk": "week", "wks": "week", "mo": "month", "mos": "month"}
_GLUED_UNITS |= {"yr": "year", "yrs": "year"}
# A fortnight and the like are a number and a unit in one word; so are the adverbs of a period
# ("yearly" is "every year"), a month's among them read both ways, as a unit of months is.
_QUARTER = (129600, 131400)
_HALF_YEAR = (259200, 262800)
_WHOLE_DURATIONS: dict[str, tuple[int, ...]] = {
    **dict.fromkeys(("fortnight", "quincena", "quinzaine", "fortnightly", "biweekly"), (20160,)),
    **dict.fromkeys(("hourly",), (60,)),
    **dict.fromkeys(("daily", "täglich", "taglich", "diario", "diariamente"), (1440,)),
    **dict.fromkeys(("weekly", "wöchentlich", "wochentlich", "semanal", "hebdomadaire"), (10080,)),
    **dict.fromkeys(("monthly", "monatlich", "mensual", "mensuel", "mensile"), (43200, 43800)),
    **dict.fromkeys(("quarterly", "vierteljährlich", "trimestral", "trimestriel"), _QUARTER),
    **dict.fromkeys(("semiannually", "biannually", "semiannual", "halbjährlich"), _HALF_YEAR),
    **dict.fromkeys(("yearly", "annually", "annual", "jährlich", "jahrlich", "anual"), (525600,)),
    **dict.fromkeys(("anualmente", "annuel", "annuelle", "annuale", "annualmente"), (525600,)),
}
#: Words before a unit that make it one of it ("every year", "each week", "per month").
_ONE_OF = frozenset({"every", "each", "per", "cada", "chaque", "jede", "jeden", "jedes", "ogni"})
#: "twice a year" is every six months: how many times a period its word says.
_TIMES = {"twice": 2, "thrice": 3}
#: The prefix of a duration token: no word token starts with it.
DURATION = "⏱"


def _decimal(token: str) -> Decimal | None:
    try:
        return Decimal(token)
    except InvalidOperation:
        return None


def _values(tokens: Sequence[str]) -> list[str]:
    """*tokens* with number words as digits: "twenty four" -> "24", "two hundred" -> "200"."""
    out: list[str] = []
    for i, token in enumerate(tokens):
        value = NUMBER_WORDS.get(token)
        if token == "once" and tokens[i + 1 : i + 2] and tokens[i + 1] in _ARTICLES | _ONE_OF:
            value = None  # "once a year": once, not Spanish eleven
        if value is not None and token not in _ARTICLES:
            previous = _decimal(out[-1]) if out else None
            # "twenty four", "vingt quatre" (the hyphen is gone): a tens word then a unit word
            if previous is not None and 20 <= previous < 100 and previous % 10 == 0 and value < 10:
                out[-1] = str(previous + value)
                continue
            out.append(str(value))
            continue
        multiplier = _MULTIPLIERS.get(token)
        if multiplier is not None:
            previous = _decimal(out[-1]) if out else None
            if previous is not None:
                out[-1] = format((previous * multiplier).normalize(), "f")
            else:
                out.append(str(multiplier))
            continue
        out.append(token)
    return out


def canonical_tokens(tokens: Iterable[str]) -> list[str]:
    """Word tokens with numbers as digits, each followed by a duration token where one applies.

    ``["ninety", "days"]``, ``["90", "days"]`` and ``["three", "months"]`` each give their tokens
    and ``"⏱129600"``; ``["1", "5", "hours"]`` (``1.5`` split by the word tokeniser) reads as
    1.5 hours, ``"⏱90"``, like ``["90", "minutes"]``.
    """
    values = _values(_unglued(tokens))
    out: list[str] = []
    for i, token in enumerate(values):
        out.append(token)
        whole = _WHOLE_DURATIONS.get(token)
        if whole is not None:
            out += [f"{DURATION}{m}" for m in whole]
            continue
        minutes = _DURATIONS.get(token)
        if minutes is None or i == 0:
            continue
        amount = _amount(values, i)
        if amount is None:
            continue
        # "twice a year", "3 times a year": the period is the unit over the count
        per = _times(values, i)
        if per is not None:
            out.append(_duration(minutes / per))
            if minutes == _MONTH:
                out.append(_duration(_MONTH_AS_YEAR / per))
            elif minutes == _YEAR:  # "twice a year" also meets "every six months" of 30 days
                out.append(_duration(12 * _MONTH / per))
            continue
        out.append(_duration(amount * minutes))
        if minutes == _MONTH:
            out.append(_duration(amount * _MONTH_AS_YEAR))
    return out


def _duration(minutes: Decimal) -> str:
    return f"{DURATION}{format(minutes.normalize(), 'f')}"


def _unglued(tokens: Iterable[str]) -> list[str]:
    """*tokens* with "8h", "30min" split into a number and a unit word."""
    out: list[str] = []
    for token in tokens:
        glued = _GLUED.fullmatch(token)
        if glued is None:
            out.append(token)
        else:
            unit = glued.group(2)
            out += [glued.group(1), _GLUED_UNITS.get(unit, unit)]
    return out


def _times(values: Sequence[str], unit_at: int) -> Decimal | None:
    """How many times per the unit at *unit_at* ("twice a year": 2, "3 times per month": 3),
    or None."""
    if unit_at < 2 or values[unit_at - 1] not in _ARTICLES | _ONE_OF:
        return None
    word = values[unit_at - 2]
    if word in _TIMES:
        return Decimal(_TIMES[word])
    if word == "times" and unit_at >= 3 and values[unit_at - 3].isdigit():
        count = Decimal(values[unit_at - 3])
        return count if count > 0 else None
    return None


def _amount(values: Sequence[str], unit_at: int) -> Decimal | None:
    """The number before the unit at *unit_at*: a number token, "1 5" as 1.5, an article or
    "every", "each", "per"."""
    before = values[unit_at - 1]
    if before in _ARTICLES or before in _ONE_OF:
        return Decimal(1)
    number = _decimal(before) if before.isdigit() else None
    if number is None:
        return None
    # "1.5" and "1,5" reach here as "1", "5": a one-digit fraction after a whole number.
    if unit_at >= 2 and values[unit_at - 2].isdigit() and len(before) == 1:
        return Decimal(f"{values[unit_at - 2]}.{before}")
    return number
