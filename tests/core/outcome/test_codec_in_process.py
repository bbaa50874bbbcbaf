"""A run's own report.json document, before it is written, decodes to the outcome it encodes:
the renderings read that outcome in the process that made it, without the run's streamed
per-case lists being copied or read whole."""

from __future__ import annotations

import json

import attrs

from ragleaklab_core._walked import Walked
from ragleaklab_core.outcome import Verdict
from ragleaklab_core.outcome.codec import decode, encode
from ragleaklab_core.testing import sample_report


class _Counted(Walked[object]):
    """A list that counts how often it is walked (as a run's spool would be read)."""

    def __init__(self, items: list[object]) -> None:
        self.items, self.walks = items, 0

    def __iter__(self):
        self.walks += 1
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


def test_a_document_built_in_process_decodes_to_its_outcome():
    outcome = decode(sample_report(), source="sample")
    document = encode(outcome)  # verdicts as Verdict members, case lists produced as walked
    assert isinstance(document["verdict"], Verdict)
    again = decode(document, source="")
    assert again.verdict is outcome.verdict
    for pack, read in zip(outcome.packs, again.packs, strict=True):
        assert list(read.case_results) == list(pack.case_results)
        assert attrs.evolve(read, case_results=()) == attrs.evolve(pack, case_results=())
        assert getattr(read.case_results, "streamed", None) is True
    # A file's list is checked when read, and said not to be streamed: its counts are not
    # trusted to stop reading it early.
    from_file = decode(json.loads(json.dumps(sample_report())), source="sample")
    assert all(getattr(p.case_results, "streamed", None) is False for p in from_file.packs)


def test_a_streamed_case_list_is_not_walked_until_it_is_read():
    document = sample_report()
    cases = _Counted(document["packs"][0]["case_results"])
    ids = _Counted(document["packs"][0]["cases"]["ids"])
    document["packs"][0]["case_results"] = cases
    document["packs"][0]["cases"]["ids"] = ids
    outcome = decode(document, source="")
    assert (cases.walks, ids.walks) == (0, 0)  # neither checked nor copied
    assert outcome.packs[0].cases.ids is ids
    assert [c.test_id for c in outcome.packs[0].case_results] == [c["test_id"] for c in cases.items]
    assert cases.walks == 1
