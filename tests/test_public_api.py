"""The public surface: everything in __all__ resolves, and built-ins use nothing else."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ragleaklab_core

PLUGINS = Path(__file__).resolve().parents[1] / "plugins" / "ragleaklab_plugins"


def test_every_public_name_resolves():
    for name in ragleaklab_core.__all__:
        assert getattr(ragleaklab_core, name) is not None, name
    assert sorted(dir(ragleaklab_core)) == sorted(ragleaklab_core.__all__)


def test_unknown_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        ragleaklab_core.nope  # noqa: B018


def test_builtins_use_only_the_public_api():
    files = sorted(PLUGINS.rglob("*.py"))
    assert files
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
            elif isinstance(node, ast.Import):
                module = " ".join(a.name for a in node.names)
            else:
                continue
            assert "ragleaklab_core." not in module, (
                f"{path.relative_to(PLUGINS)} imports {module}; "
                "use 'from ragleaklab_core import ...'"
            )


def test_the_core_never_imports_a_builtin():
    core = Path(ragleaklab_core.__file__).parent
    for path in sorted(core.rglob("*.py")):
        assert "ragleaklab_plugins" not in path.read_text(encoding="utf-8"), path.name


def test_the_core_has_no_import_cycle():
    """The layers of docs/architecture.md: every import inside ragleaklab_core (at module level
    or deferred into a function) points down, so the graph is acyclic."""
    import ast
    import graphlib
    from pathlib import Path

    package = Path(__file__).resolve().parents[1] / "ragleaklab_core"
    modules = {p.stem for p in package.glob("*.py")}
    graph: dict[str, set[str]] = {}
    for path in package.glob("*.py"):
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            for name in names:
                parts = name.split(".")
                if parts[0] == "ragleaklab_core" and len(parts) > 1 and parts[1] in modules:
                    deps.add(parts[1])
        graph[path.stem] = deps - {path.stem}
    assert len(graph) > 30
    order = list(graphlib.TopologicalSorter(graph).static_order())  # raises CycleError
    assert set(order) == set(graph)
