"""The renderings read the finished run's attributes, never keys of ``report.json``.

A rendering is given the outcome (:class:`~ragleaklab_core.outcome.RunOutcome`, decoded once by
the outcome's codec): a field is added to the outcome and its codec, and every rendering reads
it as an attribute. A key read (``pack["name"]``, ``report.get("verdict")``) in a rendering
would be a second, unchecked reader of report.json's layout; this test finds every one.
"""

from __future__ import annotations

import ast
from pathlib import Path

import ragleaklab_plugins.reporters as reporters

import ragleaklab_core.reporting as reporting

#: The modules of the renderings and their shared helpers, and the built-in reporters.
MODULES = sorted(
    [*Path(reporting.__file__).parent.glob("*.py"), *Path(reporters.__file__).parent.glob("*.py")]
)
#: The outcome's lenient view for third-party reporters (``RunReport``): not a rendering.
NOT_RENDERINGS = {"model.py"}
#: Functions that read JSON which is not report.json's own layout, each with why.
READS_OTHER_JSON = {
    ("cases.py", "require_case_results"): "the check, before the codec decodes a report, that "
    "names a report an older ragleaklab wrote (no case_results) as such",
    ("html.py", "_calibration"): "a calibration_report.json (--calibration), not report.json",
    ("html.py", "_roc_svg"): "the ROC table of a calibration_report.json",
    ("wording.py", "comparison_lines"): "the comparison with a baseline as `diff --json` prints "
    "it, which the outcome holds untyped (GateRecord.baseline.diff)",
    ("sarif.py", "_still_failing"): "the same comparison with a baseline (its still failing ids)",
    ("outputs.py", "github_annotations"): "the gate's annotation_level, which takes report.json "
    "dicts",
}


def key_reads(source: str) -> list[tuple[str | None, int, str]]:
    """``(function, line, key)`` of every read by a string key in *source*: a subscript that is
    loaded (``x["k"]``) or a ``get``/``pop`` call (``x.get("k")``)."""
    found: list[tuple[str | None, int, str]] = []

    def visit(node: ast.AST, function: str | None) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and function is None:
            function = node.name
        key = None
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.ctx, ast.Load)
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):
            key = node.slice.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop")
            and not (
                isinstance(node.func.value, ast.Attribute) and node.func.value.attr == "environ"
            )
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            key = node.args[0].value
        if key is not None:
            found.append((function, getattr(node, "lineno", 0), key))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(ast.parse(source), None)
    return found


def test_the_check_finds_subscripts_and_gets_by_key():
    source = (
        "def render(report):\n"
        "    name = report['packs'][0].get('name')\n"
        "    step = os.environ.get('GITHUB_STEP_SUMMARY')\n"  # the environment is no report
        "    report['x'] = 1\n"  # a store is no read
        "    return report.pack(name).values[name]\n"  # neither is a key that is a variable
    )
    assert key_reads(source) == [("render", 2, "name"), ("render", 2, "packs")]


def test_no_rendering_reads_a_report_key():
    reads = []
    for path in MODULES:
        if path.name in NOT_RENDERINGS:
            continue
        for function, line, key in key_reads(path.read_text(encoding="utf-8")):
            if (path.name, function) not in READS_OTHER_JSON:
                reads.append(f"{path.parent.name}/{path.name}:{line} {function}: {key!r}")
    assert not reads, "read the outcome's attributes instead:\n" + "\n".join(reads)


def test_every_exception_is_still_needed():
    """An exception no longer reading any key is dropped here, so none outlives its reason."""
    by_name = {p.name: p for p in MODULES}
    for (module, function), _why in READS_OTHER_JSON.items():
        reads = key_reads(by_name[module].read_text(encoding="utf-8"))
        assert any(f == function for f, _, _ in reads), f"{module} {function} reads no key"
