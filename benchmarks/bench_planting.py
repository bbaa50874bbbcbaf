"""What recording and checking planted documents costs, against planting them by hand.

A pack's documents are planted in a Chroma collection on disk and removed again, two ways,
timed best of ``--repeat`` (``time.perf_counter``), each on a fresh collection:

* the baseline, the floor a careful app could reach: ``store.add_texts(texts, metadatas, ids)``
  then ``store.delete(ids)``, nothing else;
* ragleaklab: the python target in a target session, as a run does it: the run's ids
  (``planted_ids``), the ledger line written and fsynced, the store's lock taken, the store
  asked for ids it already holds (``get_by_ids``), ``add_texts``, then reset (``delete``), the
  check that nothing is left (``remove_planted``: ``delete`` again and ``get_by_ids``) and the
  ``removed`` line.

It prints both times and their ratio. The goal: at most 1.5x the baseline for a whole pack
(the checks are one extra round trip each way, not one per document). Needs the ``stores``
dependency group (Chroma)::

    pip install -e . --group stores
    python benchmarks/bench_planting.py --pack relevance-hijack --repeat 5
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

from ragleaklab_core import load_pack
from ragleaklab_core._discovery import TARGETS, load_plugin
from ragleaklab_core.run.executor import PackTarget
from ragleaklab_core.run.planted import PlantLedger, new_run_id
from ragleaklab_core.run.records import RunSettings


def _store(directory: Path) -> Any:
    from langchain_chroma import Chroma
    from langchain_core.embeddings import DeterministicFakeEmbedding

    return Chroma(
        collection_name="bench",
        embedding_function=DeterministicFakeEmbedding(size=32),
        persist_directory=str(directory),
    )


def baseline(documents: list[Any], directory: Path) -> float:
    store = _store(directory)
    ids = [f"bench-{d.doc_id}" for d in documents]
    start = time.perf_counter()
    store.add_texts(
        [d.text for d in documents], metadatas=[{"doc_id": d.doc_id} for d in documents], ids=ids
    )
    store.delete(ids=ids)
    return time.perf_counter() - start


def ragleaklab(documents: list[Any], directory: Path, pack: str) -> float:
    module = types.ModuleType("rlk_bench_store")
    module.store = _store(directory)  # type: ignore[attr-defined]
    sys.modules["rlk_bench_store"] = module
    target = load_plugin(TARGETS, "python", {"callable": "rlk_bench_store:store"})
    ledger = PlantLedger(directory / "out", new_run_id())
    session = PackTarget(target, RunSettings(), ledger=ledger, pack=pack)

    async def plant_and_remove() -> list[str]:
        await session.ingest(documents)
        return await session.close()

    start = time.perf_counter()
    problems = asyncio.run(plant_and_remove())
    elapsed = time.perf_counter() - start
    ledger.finish()
    if problems or (directory / "out" / "planted.jsonl").exists():
        raise SystemExit(f"planting went wrong: {problems}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pack", default="relevance-hijack")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    documents = list(load_pack(args.pack).obj.documents())
    times: dict[str, list[float]] = {"baseline": [], "ragleaklab": []}
    for _ in range(args.repeat):
        for name in times:
            directory = Path(tempfile.mkdtemp(prefix="rlk-bench-"))
            try:
                if name == "baseline":
                    times[name].append(baseline(documents, directory))
                else:
                    times[name].append(ragleaklab(documents, directory, args.pack))
            finally:
                shutil.rmtree(directory, ignore_errors=True)
    best = {name: min(values) for name, values in times.items()}
    ratio = best["ragleaklab"] / best["baseline"]
    print(f"pack {args.pack}: {len(documents)} documents planted and removed in Chroma on disk")
    print(f"  baseline (add_texts + delete):        {best['baseline']:.3f} s")
    print(f"  ragleaklab (recorded, checked):       {best['ragleaklab']:.3f} s")
    print(f"  ratio: {ratio:.2f}x (goal: at most 1.5x) -> {'met' if ratio <= 1.5 else 'NOT met'}")


if __name__ == "__main__":
    main()
