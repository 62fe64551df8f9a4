"""The package's import graph points down only: no upward edge, no package cycle.

Every import in ``averitec_tools`` is read with ``ast`` — module level, inside functions
(lazy), under ``TYPE_CHECKING`` and ``importlib.import_module("averitec_tools...")`` with a
constant name — and mapped to its *unit*: a top-level module or package
(``metrics``, ``engines``, ``cli`` ...), except that each baseline (``baselines.r2vc``,
``baselines.averitec``) and their shared run room ``baselines._run`` are units of their own
(the run room sits below the baselines: both import it, it imports neither). Units sit in the declared :data:`LAYERS`,
lowest first; an import may go to a unit of a lower layer, or of the same layer unless
the layer is declared independent (the baselines: no baseline imports another). A
package's ``__main__`` is an entry point, so it counts as ``cli``. On top of the layer
rule the unit graph must have no cycle (two units of one layer importing each other).

A failure names each offending import as ``file:line: importer -> imported``.
"""

from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "averitec_tools"

#: The layers, lowest first: (name, units, independent). A unit may import units of lower
#: layers and, unless the layer is independent, of its own layer (without a cycle).
LAYERS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("foundation", ("averitec_tools", "_version", "errors", "registry", "outputs", "jsonio", "labels",
                    "resources", "records", "models", "cache", "hashing", "configfile"), False),
    ("domain", ("metrics", "loaders", "leakage", "downloads"), False),
    ("scoring", ("scoring",), False),
    ("engines", ("engines",), False),
    ("run", ("baselines._run",), False),
    ("baselines", ("baselines", "baselines.r2vc", "baselines.averitec"), True),
    ("leaderboard", ("leaderboard",), False),
    ("cli", ("cli",), False),
)



def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit(module: str) -> str:
    """The layer unit of a module name.

    >>> unit("averitec_tools.baselines.r2vc.stages.retrieval.dense"), unit("averitec_tools.metrics.fever")
    ('baselines.r2vc', 'metrics')
    >>> unit("averitec_tools.baselines.r2vc.training.__main__"), unit("averitec_tools")
    ('cli', 'averitec_tools')
    """
    parts = module.split(".")
    if parts[-1] == "__main__":
        return "cli"
    if len(parts) == 1:
        return parts[0]
    if parts[1] == "baselines" and len(parts) > 2:
        return ".".join(parts[1:3])
    return parts[1]


def _target(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(path: Path) -> list[tuple[int, str]]:
    """``(line, imported module)`` for every ``averitec_tools`` import in the file, lazy ones included."""
    module = _module_name(path)
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _target(node, module, path.name == "__init__.py")
            found.append((node.lineno, target))
            # ``from averitec_tools.x import y`` may import the submodule ``x.y``
            found += [(node.lineno, f"{target}.{a.name}") for a in node.names
                      if (PACKAGE.parent / f"{target}.{a.name}".replace(".", "/")).with_suffix(".py").exists()
                      or (PACKAGE.parent / f"{target}.{a.name}".replace(".", "/") / "__init__.py").exists()]
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"):
            found.append((node.lineno, node.args[0].value))
    return [(line, name) for line, name in found if name == "averitec_tools" or name.startswith("averitec_tools.")]


def _edges() -> list[tuple[str, int, str, str]]:
    """``(file, line, importer module, imported module)`` across units."""
    edges = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        for line, target in imports_of(path):
            if unit(module) != unit(target):
                edges.append((str(path.relative_to(PACKAGE.parent)), line, module, target))
    return edges


EDGES = _edges()
LAYER_OF = {u: (i, name, independent) for i, (name, units, independent) in enumerate(LAYERS) for u in units}


def _allowed(importer: str, imported: str) -> bool:
    if unit(imported) not in LAYER_OF or unit(importer) not in LAYER_OF:
        return True  # test_every_unit_has_a_layer names it
    (low, _, independent), (high, _, _) = LAYER_OF[unit(imported)], LAYER_OF[unit(importer)]
    return low < high or (low == high and not independent)


def test_every_unit_has_a_layer() -> None:
    units = {unit(m) for _, _, a, b in EDGES for m in (a, b)} | {
        unit(_module_name(p)) for p in PACKAGE.rglob("*.py")}
    missing = sorted(units - set(LAYER_OF))
    assert not missing, f"units without a declared layer (add them to LAYERS): {', '.join(missing)}"


def test_no_upward_or_sideways_import() -> None:
    bad = [f"{f}:{line}: {a} -> {b}  ({unit(a)} [{LAYER_OF[unit(a)][1]}] must not import "
           f"{unit(b)} [{LAYER_OF[unit(b)][1]}])"
           for f, line, a, b in EDGES if not _allowed(a, b)]
    assert not bad, "imports against the declared layers:\n" + "\n".join(bad)


def test_no_package_cycle() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    where: dict[tuple[str, str], str] = {}
    for f, line, a, b in EDGES:
        graph[unit(a)].add(unit(b))
        where.setdefault((unit(a), unit(b)), f"{f}:{line}: {a} -> {b}")
    cycles = _cycles(graph)
    assert not cycles, "package cycles:\n" + "\n".join(
        " -> ".join(c) + "\n    " + "\n    ".join(where[(x, y)] for x, y in zip(c, c[1:], strict=False))
        for c in cycles)


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component with more than one unit (closed path)."""
    seen: set[str] = set()
    cycles = []
    for start in sorted(graph):
        stack = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start and len(path) > 1 and not set(path) & seen:
                    cycles.append(path + [start])
                    seen |= set(path)
                elif nxt not in path and nxt not in seen:
                    stack.append((nxt, path + [nxt]))
    return cycles


@pytest.mark.parametrize(("graph", "expected"), [
    ({"a": {"b"}, "b": {"c"}}, []),
    ({"a": {"b"}, "b": {"a"}}, [["a", "b", "a"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c", "a"]]),
])
def test_cycle_finder(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert _cycles(graph) == expected


def test_walker_sees_lazy_relative_and_dynamic_imports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "averitec_tools" / "baselines" / "r2vc"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    source = pkg / "stage.py"
    source.write_text("import importlib\n"
                      "def f():\n"
                      "    from averitec_tools.baselines.averitec import models\n"
                      "    from . import other\n"
                      "    from ..averitec.config import X\n"
                      "    return importlib.import_module('averitec_tools.cli.main')\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", tmp_path / "averitec_tools")
    found = sorted(name for _, name in imports_of(source))
    assert found == ["averitec_tools.baselines.averitec", "averitec_tools.baselines.averitec.config",
                     "averitec_tools.baselines.r2vc", "averitec_tools.cli.main"]
    assert not _allowed("averitec_tools.baselines.r2vc.stage", "averitec_tools.baselines.averitec.models")
    assert not _allowed("averitec_tools.leaderboard.web", "averitec_tools.cli._json")
    assert _allowed("averitec_tools.cli.score", "averitec_tools.metrics")
