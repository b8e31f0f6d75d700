"""The import rules of ARCHITECTURE.md, read from the source with ``ast`` (nothing is
imported): no file-level import cycles, each layer imports only the layers below it,
and no platform imports another platform's code.

Every ``import`` counts, wherever it stands (a function-level import is a dependency
too, and so is one under ``TYPE_CHECKING``). ``from pkg import name`` is an edge to the
module ``pkg.name`` when there is one, else to ``pkg`` itself.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "catalog", "adapters", "bot")

PLATFORMS = {
    "slack": ("adapters.slack",),
    "discord": ("adapters.discord",),
    "terminal": ("adapters.cli", "adapters.terminal", "adapters.launch"),
}
"""Each front end's modules (a prefix covers a package)."""
ROOT_MODULES = ("bot.runtime", "bot.__main__")
"""The composition root: the process that starts the platforms (may import anything)."""
ENGINE_EXCEPTIONS = {("engine.estimate", "catalog.loader")}
"""``estimate(request)`` without a catalog loads the packaged one (a function-level
import, so the engine stays importable without the catalog's files)."""


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@cache
def modules() -> dict[str, Path]:
    """Every project module: ``engine.memory`` -> its file."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


def _targets(node: ast.AST, module: str, is_package: bool) -> Iterator[str]:
    known = modules()
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
    elif isinstance(node, ast.ImportFrom):
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            source = ".".join([*base, *([node.module] if node.module else [])])
        else:
            source = node.module or ""
        for alias in node.names:
            candidate = f"{source}.{alias.name}"
            yield candidate if candidate in known else source


@cache
def imports() -> dict[str, frozenset[str]]:
    """Each project module's imports of other project modules."""
    known = modules()
    graph: dict[str, frozenset[str]] = {}
    for name, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        targets = {
            target
            for node in ast.walk(tree)
            if isinstance(node, ast.Import | ast.ImportFrom)
            for target in _targets(node, name, path.name == "__init__.py")
        }
        graph[name] = frozenset(t for t in targets if t in known and t != name)
    return graph


def _in(module: str, prefixes: tuple[str, ...] | str) -> bool:
    prefixes = (prefixes,) if isinstance(prefixes, str) else prefixes
    return any(module == p or module.startswith(p + ".") for p in prefixes)


def platform_of(module: str) -> str | None:
    for platform, prefixes in PLATFORMS.items():
        if _in(module, prefixes):
            return platform
    return None


def edges() -> list[tuple[str, str]]:
    return [(src, dst) for src, targets in sorted(imports().items()) for dst in sorted(targets)]


def cycles(graph: Mapping[str, frozenset[str]] | None = None) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), of the
    project's import graph unless ``graph`` is given."""
    graph = imports() if graph is None else graph
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for succ in graph[node]:
            if succ not in index:
                visit(succ)
                low[node] = min(low[node], low[succ])
            elif succ in on_stack:
                low[node] = min(low[node], index[succ])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


# -- the reader of imports reads them right --------------------------------------------


def test_the_reader_finds_the_modules_and_their_imports():
    graph = imports()

    assert {"engine.request", "bot.service", "adapters.cli", "catalog.loader"} <= set(graph)
    assert "engine.request" in graph["engine.memory"]
    assert "bot.service" in graph["adapters.cli"]
    assert "catalog.loader" in graph["engine.estimate"]  # a function-level import counts


def test_the_cycle_finder_finds_a_cycle_and_only_it():
    graph = {"a": frozenset({"b"}), "b": frozenset({"c"}), "c": frozenset({"a"}),
             "d": frozenset({"a"}), "e": frozenset()}

    assert cycles(graph) == [["a", "b", "c"]]


# -- the rules ------------------------------------------------------------------------------


def test_no_file_level_import_cycles():
    assert cycles() == [], "import cycles (break each by moving the shared piece down a layer)"


def test_the_engine_imports_nothing_above_it():
    bad = [
        (src, dst) for src, dst in edges()
        if _in(src, "engine") and not _in(dst, "engine") and (src, dst) not in ENGINE_EXCEPTIONS
    ]

    assert bad == []


def test_the_catalog_imports_only_itself_and_the_engine():
    bad = [(src, dst) for src, dst in edges()
           if _in(src, "catalog") and not _in(dst, ("catalog", "engine"))]

    assert bad == []


def test_the_language_and_report_import_no_bot_and_no_platform():
    """adapters/*.py and adapters/query: the neutral language, report, help, listings and
    chart sit below the conversation service and every front end."""
    bad = [
        (src, dst) for src, dst in edges()
        if _in(src, "adapters") and platform_of(src) is None
        and (_in(dst, "bot") or platform_of(dst) is not None)
    ]

    assert bad == []


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_a_platform_imports_no_other_platform(platform):
    bad = [
        (src, dst) for src, dst in edges()
        if platform_of(src) == platform and platform_of(dst) not in (None, platform)
    ]

    assert bad == []


def test_only_the_composition_root_imports_platform_code():
    bad = [
        (src, dst) for src, dst in edges()
        if platform_of(dst) is not None and platform_of(src) is None
        and not _in(src, ROOT_MODULES)
    ]

    assert bad == []


def test_the_service_layer_imports_no_platform():
    bad = [(src, dst) for src, dst in edges()
           if _in(src, "bot") and not _in(src, ROOT_MODULES) and platform_of(dst) is not None]

    assert bad == []
