"""Properties of the proof of ownership (:mod:`ragleaklab_core.run.ownership`): whatever a ledger
line says, only ids the target's own ``planted_ids`` gives for the line's run and pack are
claimed, spelt exactly; and the ids ragleaklab derives are canonical version-5 UUIDs, so no run
id, however chosen, derives an id of any other form."""

from __future__ import annotations

import importlib.util
import uuid
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ragleaklab_core._discovery import LoadedPlugin
from ragleaklab_core.run.ownership import derived
from ragleaklab_core.run.planted import Planting, planted_id, run_key
from ragleaklab_core.run.runner import load_pack

_SPEC = importlib.util.spec_from_file_location(
    "rlk_dirstore", Path(__file__).resolve().parent / "planting" / "rlk_dirstore.py"
)
assert _SPEC is not None and _SPEC.loader is not None
_MODULE = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_MODULE)
DirStoreTarget = _MODULE.DirStoreTarget

PACK = "context-extraction"
DOC_IDS = [d.doc_id for d in load_pack(PACK).obj.documents()]
STORE = "dirstore /kb"
TARGET = LoadedPlugin(
    "ragleaklab.targets", "dirstore", "rlk_dirstore:DirStoreTarget", "rlk-dirstore 1.0",
    DirStoreTarget(directory="/kb"), {},
)  # fmt: skip


def real_ids(run: str, pack: str = PACK) -> list[str]:
    return [planted_id(run_key(run, pack), d) for d in DOC_IDS]


@settings(max_examples=60, deadline=None)
@given(
    run=st.text(max_size=20),
    pack=st.sampled_from([PACK, f"{PACK} ", PACK.upper(), "", "relevance-hijack", "no-such"]),
    other=st.lists(st.text(max_size=40), max_size=6),
    picked=st.lists(st.integers(0, len(DOC_IDS) - 1), max_size=4),
    source_run=st.sampled_from(["a1b2c3d4e5f60718", "0000000000000000"]),
)
def test_only_what_planted_ids_gives_for_the_lines_run_and_pack_is_claimed(
    run: str, pack: str, other: list[str], picked: list[int], source_run: str
) -> None:
    """A line lists arbitrary text and real ids of some run (maybe another than its own): the
    claimed ids are exactly those the line's run and pack derive, every other id is refused
    with its exact spelling, and none is both."""
    listed = [real_ids(source_run)[i] for i in picked] + other
    claims = derived(TARGET, STORE, [Planting(run, pack, "dirstore", STORE, tuple(listed))])
    derivable = set(real_ids(run)) if run and pack == PACK else set()
    assert set(claims.ours) == set(listed) & derivable
    assert {r.id for r in claims.refused} == set(listed) - derivable
    assert all(r.store == STORE and r.reason for r in claims.refused)
    assert all(key == run_key(run, pack) for key in claims.ours.values())


@settings(max_examples=200)
@given(run=st.text(), pack=st.text(), doc_id=st.text())
def test_derived_ids_are_canonical_version_5_uuids(run: str, pack: str, doc_id: str) -> None:
    """So a team id that is not one (a path, a slug, a UUID4, an id with a space or an upper
    case letter) can never be derived, whatever run id a forged ledger names."""
    derived_id = planted_id(run_key(run, pack), doc_id)
    parsed = uuid.UUID(derived_id)
    assert parsed.version == 5 and str(parsed) == derived_id


@settings(max_examples=100, deadline=None)
@given(team_id=st.text(min_size=1, max_size=40), run=st.text(min_size=1, max_size=16))
def test_a_team_id_that_is_no_canonical_uuid5_is_never_claimed(team_id: str, run: str) -> None:
    try:
        canonical = uuid.UUID(team_id).version == 5 and str(uuid.UUID(team_id)) == team_id
    except ValueError:
        canonical = False
    claims = derived(TARGET, STORE, [Planting(run, PACK, "dirstore", STORE, (team_id,))])
    if not canonical:
        assert claims.ours == {} and [r.id for r in claims.refused] == [team_id]
