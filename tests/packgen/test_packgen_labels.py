"""The built-in packs' labels come from the reference target's instrumentation, never from a metric.

Two checks, one static and one dynamic:

- no module of the generator imports a metric, except the ones whose job is to read one
  (``scoring`` fits the default threshold, ``summary`` and ``quality`` measure the metric);
- every pack, rebuilt with every built-in metric sabotaged (constructing or scoring one raises),
  yields exactly the labels and hard-case tags that are shipped. So no label, and no hard-case
  kind, can have been decided by a score.
"""

from __future__ import annotations

import ast
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from ragleaklab_core import load_plugin
from ragleaklab_core.calibration.labelling import target_identity
from tests.support.packgen import packgen

ROOT = Path(__file__).resolve().parents[2]
PACKGEN = ROOT / "ragleaklab_packgen"
PACKS = ROOT / "plugins" / "ragleaklab_plugins" / "packs"
#: The generator modules allowed to read a metric, and why: none of them labels a case.
READS_METRICS = {"scoring", "summary", "quality"}
METRIC_MODULES = ("ragleaklab_plugins.metrics",)


def imported_modules(path: Path) -> set[str]:
    """Every module *path* imports, relative imports resolved inside ragleaklab_packgen."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = f"ragleaklab_packgen.{base}" if base else "ragleaklab_packgen"
                names.update(f"{base}.{alias.name}" for alias in node.names)
            names.add(base)
    return names


def test_no_labelling_module_imports_a_metric() -> None:
    modules = sorted(p for p in PACKGEN.glob("*.py") if p.stem not in READS_METRICS)
    assert len(modules) > 10  # the scan sees the package, not an empty folder
    offenders = {
        p.name: sorted(n for n in imported_modules(p) if n.startswith(METRIC_MODULES))
        for p in modules
    }
    assert {k: v for k, v in offenders.items() if v} == {}


def test_the_scan_would_see_a_metric_import(tmp_path: Path) -> None:
    module = tmp_path / "bad.py"
    module.write_text("from ragleaklab_plugins.metrics.claim import ClaimMetric\n")
    assert any(n.startswith(METRIC_MODULES) for n in imported_modules(module))


def _shipped(pack_dir: Path) -> list[tuple[str, str, list[str]]]:
    cases = [json.loads(line) for line in (pack_dir / "cases.jsonl").read_text().splitlines()]
    labels = [json.loads(line) for line in (pack_dir / "labels.jsonl").read_text().splitlines()]
    hard = [sorted(t for t in c.get("tags", []) if t.startswith("hard:")) for c in cases]
    return [(row["test_id"], row["label"], h) for row, h in zip(labels, hard, strict=True)]


@pytest.mark.parametrize(
    ("pack", "module", "builder", "offset"),
    [
        ("relevance_hijack", "relevance_hijack", "relevance_hijack", 1),
        ("sentinel_takeover_safe", "sentinel_takeover", "sentinel_takeover_safe", 2),
        ("claim_corruption", "claim_corruption", "claim_corruption", 3),
        ("verbatim_extraction", "verbatim_extraction", "verbatim_extraction", 4),
        ("markdown_exfiltration", "markdown_exfiltration", "markdown_exfiltration", 5),
        ("cross_tenant", "cross_tenant", "cross_tenant", 6),
        ("context_extraction", "context_extraction", "context_extraction", 8),
    ],
)
def test_labels_survive_every_metric_being_broken(
    monkeypatch: pytest.MonkeyPatch, pack: str, module: str, builder: str, offset: int
) -> None:
    from ragleaklab_plugins.metrics import (
        access,
        claim,
        exfiltration,
        retrieval,
        sentinel,
        verbatim,
    )

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a metric was used while labelling")

    for mod, cls in (
        (claim, "ClaimMetric"),
        (retrieval, "RetrievalMetric"),
        (sentinel, "SentinelMetric"),
        (verbatim, "VerbatimMetric"),
        (exfiltration, "ExfiltrationMetric"),
        (access, "AccessMetric"),
    ):
        monkeypatch.setattr(getattr(mod, cls), "__init__", broken)
        monkeypatch.setattr(getattr(mod, cls), "score", broken)

    # The generator is a tool of this checkout that the wheel leaves out (a non-editable
    # install does not have it): put the checkout on sys.path for its import only. The
    # packages it imports are already loaded from the installation, so none is shadowed.
    import ragleaklab_plugins.targets.reference  # noqa: F401

    sys.path.insert(0, str(ROOT))
    try:
        registry = importlib.import_module("ragleaklab_packgen.registry")
        build = importlib.import_module("ragleaklab_packgen.build")
        pack_module = importlib.import_module(f"ragleaklab_packgen.{module}")
    finally:
        sys.path.remove(str(ROOT))
    # The default threshold is fitted on scores; with the metrics broken, score nothing.
    monkeypatch.setattr(pack_module, "scorer", lambda *a, **k: lambda docs: lambda c, r: 0.0)
    monkeypatch.setattr(build, "exact_threshold", lambda scores, labels, fpr: (0.0, 0, 0))
    data = getattr(pack_module, builder)(registry.SEED + offset)
    rebuilt = [
        (row["test_id"], row["label"], sorted(t for t in case.tags if t.startswith("hard:")))
        for case, row in zip(data.cases, data.labels, strict=True)
    ]
    assert rebuilt == _shipped(PACKS / pack)


def _break_every_metric(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a metric was used while labelling")

    for name in ("access", "claim", "exfiltration", "retrieval", "sentinel", "verbatim"):
        mod = importlib.import_module(f"ragleaklab_plugins.metrics.{name}")
        for cls in vars(mod).values():
            if isinstance(cls, type) and cls.__name__.endswith("Metric") and hasattr(cls, "score"):
                monkeypatch.setattr(cls, "__init__", broken)
                monkeypatch.setattr(cls, "score", broken)


def test_the_new_pack_starter_is_labelled_by_the_default_target_never_a_metric(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # new-pack's starter labels are what the default reference target recorded doing with each
    # case (so `calibrate --pack NAME` on that target fits a threshold as created), and its
    # manifest template names that target by the identity a run records for it.
    _break_every_metric(monkeypatch)
    starter = packgen("starter")
    output = packgen("output")
    files = starter.starter_files()
    assert {path: path.read_bytes() for path in files} == files  # regenerated == shipped
    rows = [json.loads(line) for line in files[starter.STARTER_DIR / "labels.jsonl"].splitlines()]
    positives = [r["test_id"] for r in rows if r["label"] == "positive"]
    assert positives == ["c01", "c02", "c03", "c06", "c07", "c13"]
    assert rows[-1]["notes"].startswith("hard positive:")  # c13's payload has no sentinel
    manifest = files[starter.MANIFEST_TEMPLATE].decode("utf-8")
    assert 'label_source = "instrumentation"' in manifest
    default = load_plugin("ragleaklab.targets", "reference", {}).provenance()
    assert f'label_target = "{target_identity(default)}"' in manifest
    assert target_identity(default) == output.LABEL_TARGET
