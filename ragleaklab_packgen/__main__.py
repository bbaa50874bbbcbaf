"""Generate the built-in attack packs: corpora, cases, labels and default thresholds.

    python -m ragleaklab_packgen           # (re)write every pack file and calibration copy
    python -m ragleaklab_packgen --check   # regenerate in memory; exit 1 if any file differs

Run from the repository root (the package is not installed with ragleaklab); it prints one
summary line per pack, writes the quality cards into docs/packs.md and the defence effects into
docs/reference-target.md, labels ``ragleaklab new-pack``'s starter pack (``starter``), and with
``--check`` names each file that differs on stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .checks import check_pack
from .output import ROOT, differing, pack_files, write_files
from .quality import (
    DEFENCES_END,
    DEFENCES_START,
    QualityCard,
    card,
    render_defences,
    render_markdown,
    replace_section,
)
from .registry import PACKS, SEED
from .starter import starter_files
from .summary import measure, summary_line

#: The pages whose generated sections (quality cards, defence effects) the generator writes.
PACKS_DOC = ROOT / "docs" / "packs.md"
TARGET_DOC = ROOT / "docs" / "reference-target.md"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m ragleaklab_packgen", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="regenerate in memory and exit 1 if any committed file differs",
    )
    args = parser.parse_args(argv)
    files: dict[Path, bytes] = {}
    cards: list[QualityCard] = []
    for build, offset, hardened in PACKS.values():
        pack = build(SEED + offset)
        check_pack(pack)
        files.update(pack_files(pack))
        defended = measure(pack, hardened)
        print(summary_line(pack, hardened, defended))
        cards.append(card(pack, hardened, defended))
    doc = replace_section(PACKS_DOC.read_text(encoding="utf-8"), render_markdown(cards))
    files[PACKS_DOC] = doc.encode("utf-8")
    target_doc = replace_section(
        TARGET_DOC.read_text(encoding="utf-8"),
        render_defences(cards),
        DEFENCES_START,
        DEFENCES_END,
    )
    files[TARGET_DOC] = target_doc.encode("utf-8")
    files.update(starter_files())
    if args.check:
        stale = differing(files)
        for path in stale:
            print(f"differs: {path.relative_to(ROOT)}", file=sys.stderr)
        return 1 if stale else 0
    write_files(files)
    return 0


if __name__ == "__main__":
    sys.exit(main())
