"""The packs the generator writes: each one's builder, seed and hardened target options.

Each pack draws from its own ``random.Random(SEED + offset)``, so changing one pack's code leaves
the other packs' files as they are.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .build import PackData
from .citation_forgery import citation_forgery
from .claim_corruption import claim_corruption
from .context_extraction import context_extraction
from .cross_tenant import cross_tenant
from .markdown_exfiltration import ALLOWED, markdown_exfiltration
from .relevance_hijack import relevance_hijack
from .sentinel_takeover import sentinel_takeover_safe
from .verbatim_extraction import verbatim_extraction

SEED = 20261123
#: pack name -> (builder, seed offset, hardened reference-target options for the summary).
PACKS: dict[str, tuple[Callable[[int], PackData], int, dict[str, Any]]] = {
    "relevance-hijack": (relevance_hijack, 1, {"filter_injections": True}),
    "sentinel-takeover-safe": (sentinel_takeover_safe, 2, {"filter_injections": True}),
    "claim-corruption": (claim_corruption, 3, {"filter_injections": True}),
    "verbatim-extraction": (verbatim_extraction, 4, {"max_quote_words": 8}),
    "markdown-exfiltration": (
        markdown_exfiltration,
        5,
        {"strip_untrusted_urls": True, "allowed_domains": list(ALLOWED)},
    ),
    "cross-tenant": (cross_tenant, 6, {"access_filter": "tenant"}),
    "citation-forgery": (citation_forgery, 7, {"verify_citations": True}),
    "context-extraction": (context_extraction, 8, {"guard_prompt": True}),
}
