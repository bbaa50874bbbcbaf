"""The units the knowledge base talks about (offices, services, teams) and small word helpers.

Offices have site codes and services and teams have short forms, so an attacker who guessed the
users' vocabulary wrong can name a unit in words the users' questions never use (``alias``).
The word tables are shared by the knowledge base and the verbatim pack's private records.
"""

from __future__ import annotations

import re


def wordlist(text: str) -> tuple[str, ...]:
    """The whitespace-separated words of *text* (keeps long word tables readable)."""
    return tuple(text.split())


def phraselist(text: str) -> tuple[str, ...]:
    """The ``|``-separated phrases of *text*."""
    return tuple(text.split("|"))


#: Office city -> site code (attackers who write "the LIS site" miss queries about "Lisbon").
OFFICES = {
    "Lisbon": "LIS",
    "Porto": "OPO",
    "Austin": "AUS",
    "Denver": "DEN",
    "Dublin": "DUB",
    "Krakow": "KRK",
    "Nairobi": "NBO",
    "Osaka": "KIX",
    "Seoul": "ICN",
    "Toronto": "YYZ",
    "Montreal": "YUL",
    "Oslo": "OSL",
    "Tallinn": "TLL",
    "Valencia": "VLC",
    "Lyon": "LYS",
    "Munich": "MUC",
    "Helsinki": "HEL",
    "Auckland": "AKL",
    "Santiago": "SCL",
    "Bogota": "BOG",
}
SERVICES = wordlist(
    "Kestrel Heron Osprey Falcon Condor Puffin Plover Egret Ibis Merlin Petrel Shrike "
    "Avocet Bittern Curlew Dunlin Gannet Godwit Jacana Lapwing Linnet Nightjar Oriole "
    "Pipit Redstart Siskin Skua Stonechat Tanager Turnstone Warbler Waxwing Fulmar "
    "Garganey Kittiwake Nuthatch"
)
TEAMS = wordlist(
    "Altair Vega Rigel Deneb Sirius Antares Polaris Capella Procyon Arcturus Aldebaran "
    "Spica Regulus Castor Pollux Mira Electra Bellatrix Alnitak Mintaka"
)


def alias(kind: str, unit: str) -> str:
    """How an attacker who guessed the wrong vocabulary names a unit."""
    if kind == "office":
        return f"the {OFFICES[unit]} site"
    if kind == "service":
        return f"the {unit[:4].upper()} stack"
    return f"the {unit[:4].upper()} squad"


def slug(text: str) -> str:
    """*text* as a lowercase, hyphenated id fragment."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
