"""Generate the four built-in attack packs: corpora, cases, labels and default thresholds.

    python -m ragleaklab_packgen           # (re)write every pack file and calibration copy
    python -m ragleaklab_packgen --check   # regenerate in memory; exit 1 if any file differs

Run from the repository root (the package is not installed with ragleaklab); it prints one
summary line per pack, and with ``--check`` names each file that differs on stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .checks import check_pack
from .output import ROOT, differing, pack_files, write_files
from .registry import PACKS, SEED
from .summary import summary_line


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
    for build, offset, hardened in PACKS.values():
        pack = build(SEED + offset)
        check_pack(pack)
        files.update(pack_files(pack))
        print(summary_line(pack, hardened))
    if args.check:
        stale = differing(files)
        for path in stale:
            print(f"differs: {path.relative_to(ROOT)}", file=sys.stderr)
        return 1 if stale else 0
    write_files(files)
    return 0


if __name__ == "__main__":
    sys.exit(main())
