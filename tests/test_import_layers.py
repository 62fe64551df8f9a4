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

Inside the units the same holds one level down:

- the *module* graph has no cycle anywhere in the package (an import of a package's own
  ``__init__`` from inside it is not an edge: the façade runs before any of its modules
  anyway, and ``from pkg import sub`` counts as an import of ``pkg.sub``);
- inside every package, its direct children (modules, and subpackages taken whole) import
  each other without a cycle;
- each baseline's *wings* (its subpackages and top modules: :data:`R2VC_LAYERS`,
  :data:`AVERITEC_LAYERS`) are layered. R2VC's: ``corpus`` / ``stages`` / ``io`` below the run, the presets' builders (``offline``,
  ``standard``) and ``training`` above it, then the assembly (presets, build, manifest),
  ``experiments``, and ``run.py`` (the one library call of the baseline) on top; no wing
  imports a higher one. The AVeriTeC baseline's: ``corpus`` (the knowledge store), ``io``,
  ``stages``, the run, ``training``, the assembly, ``experiments``, ``run.py``.

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
    ("foundation", ("averitec_tools", "_version", "errors", "registry", "outputs", "argtypes", "jsonio", "labels", "nli",
                    "resources", "records", "models", "cache", "hashing", "configfile", "jsonbounds", "forking"), False),
    ("domain", ("metrics", "loaders", "leakage", "downloads", "doctor"), False),
    ("scoring", ("scoring",), False),
    ("engines", ("engines",), False),
    ("run", ("baselines._run",), False),
    ("baselines", ("baselines", "baselines.r2vc", "baselines.averitec"), True),
    ("leaderboard", ("leaderboard",), False),
    ("cli", ("cli",), False),
)

R2VC = "averitec_tools.baselines.r2vc"
#: The R2VC wings, lowest first: (layer, wings). A wing is the first name under
#: ``baselines.r2vc`` (a subpackage or a top module); it may import wings of its own or a
#: lower layer. A top module not listed here sits on :data:`R2VC_DEFAULT_LAYER`.
R2VC_LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("", "types", "config_sections", "config")),
    ("corpus", ("corpus",)),
    ("stages", ("stages",)),
    ("io", ("io",)),
    ("run", ("pipeline", "reporting", "paper_scores", "request")),
    ("presets", ("offline", "standard", "training")),
    ("assembly", ("presets", "build", "claim_worker", "manifest")),
    ("experiments", ("experiments",)),
    ("entry", ("run",)),
)
R2VC_DEFAULT_LAYER = "run"

AVERITEC = "averitec_tools.baselines.averitec"
#: The AVeriTeC baseline's wings, lowest first, as :data:`R2VC_LAYERS` (its claims and QA
#: records, ``io``, sit below the stages that read them).
AVERITEC_LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("base", ("", "config", "variants", "models")),
    ("corpus", ("corpus",)),
    ("io", ("io",)),
    ("stages", ("stages",)),
    ("run", ("pipeline", "reporting")),
    ("training", ("training",)),
    ("assembly", ("build", "claim_worker")),
    ("experiments", ("experiments",)),
    ("entry", ("run",)),
)
#: Each baseline's wings: package → (layers, the layer of a top module not listed).
WINGS: dict[str, tuple[tuple[tuple[str, tuple[str, ...]], ...], str]] = {
    R2VC: (R2VC_LAYERS, R2VC_DEFAULT_LAYER),
    AVERITEC: (AVERITEC_LAYERS, "run"),
}



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


def wing(module: str, package: str = R2VC) -> str | None:
    """The wing of a module in a baseline ``package`` (``None`` outside it).

    >>> wing("averitec_tools.baselines.r2vc.stages.retrieval.dense"), wing("averitec_tools.baselines.r2vc.build")
    ('stages', 'build')
    >>> wing("averitec_tools.baselines.r2vc"), wing("averitec_tools.metrics") is None
    ('', True)
    >>> wing("averitec_tools.baselines.averitec.stages.verdict", AVERITEC)
    'stages'
    """
    if module != package and not module.startswith(package + "."):
        return None
    return module[len(package) + 1:].split(".")[0]


def wing_layer(name: str, package: str = R2VC) -> tuple[int, str]:
    """``(index, layer name)`` of a wing of a baseline ``package`` in its layers (:data:`WINGS`)."""
    layers, default = WINGS[package]
    for i, (layer, wings) in enumerate(layers):
        if name in wings:
            return i, layer
    return next((i, layer) for i, (layer, _) in enumerate(layers) if layer == default)


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


def _modules(package: Path) -> dict[str, Path]:
    return {_module_name(p): p for p in sorted(package.rglob("*.py"))}


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The module an imported name lands in (``pkg.mod.Class`` → ``pkg.mod``)."""
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in modules else None


def module_edges(package: Path | None = None) -> list[tuple[str, int, str, str]]:
    """``(file, line, importer, imported module)`` between modules of the package, without
    the edges from inside a package to its own ``__init__`` (see the module docs)."""
    package = package or PACKAGE
    modules = _modules(package)
    edges = []
    for module, path in modules.items():
        for line, target in imports_of(path):
            imported = _resolve(target, modules)
            if imported is None or imported == module or module.startswith(imported + "."):
                continue
            edges.append((str(path.relative_to(package.parent)), line, module, imported))
    return edges


def _child(package: str, module: str) -> str:
    """The direct child of ``package`` that holds ``module``."""
    return f"{package}.{module[len(package) + 1:].split('.')[0]}"


def package_cycles(edges: list[tuple[str, int, str, str]]) -> list[str]:
    """Each cycle among the modules, and among the direct children of every package, with
    the import that closes each step."""
    packages = {m for _, _, a, b in edges for m in (a, b)}
    packages = {p for m in packages for p in (m.rsplit(".", i)[0] for i in range(1, m.count(".") + 1))}
    report = []
    for scope in [""] + sorted(packages):
        graph: dict[str, set[str]] = defaultdict(set)
        where: dict[tuple[str, str], str] = {}
        for f, line, a, b in edges:
            if a.endswith(".__main__"):
                continue  # an entry point (unit ``cli``): nothing imports it
            if scope and not (a.startswith(scope + ".") and b.startswith(scope + ".")):
                continue
            x, y = (a, b) if not scope else (_child(scope, a), _child(scope, b))
            if x != y:
                graph[x].add(y)
                where.setdefault((x, y), f"{f}:{line}: {a} -> {b}")
        for c in _cycles(graph):
            name = f"inside {scope}" if scope else "modules"
            report.append(f"{name}: " + " -> ".join(c) + "\n    " + "\n    ".join(
                where[(x, y)] for x, y in zip(c, c[1:], strict=False)))
    return list(dict.fromkeys(report))


MODULE_EDGES = module_edges()
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


def test_no_module_cycle_inside_any_package() -> None:
    cycles = package_cycles(MODULE_EDGES)
    assert not cycles, "import cycles inside the package:\n" + "\n".join(cycles)


def wing_violations(edges: list[tuple[str, int, str, str]]) -> list[str]:
    """Imports from a baseline's wing to a wing of a higher layer (:data:`WINGS`)."""
    bad = []
    for package in WINGS:
        name = package.rsplit(".", 1)[1]
        for f, line, a, b in edges:
            wa, wb = wing(a, package), wing(b, package)
            if wa is None or wb is None or wa == wb or a.endswith(".__main__"):
                continue
            (ia, la), (ib, lb) = wing_layer(wa, package), wing_layer(wb, package)
            if ib > ia:
                bad.append(f"{f}:{line}: {a} -> {b}  ({wa or name} [{la}] must not import {wb} [{lb}])")
    return bad


def test_baseline_wings_are_layered() -> None:
    bad = wing_violations(MODULE_EDGES)
    assert not bad, "baseline imports against the wing layers (WINGS):\n" + "\n".join(bad)


def test_every_declared_wing_is_real() -> None:
    for package, (layers, _) in WINGS.items():
        present = {wing(m, package) for m in _modules(PACKAGE)} - {None}
        declared = {w for _, wings in layers for w in wings}
        assert declared <= present, f"{package}: declared wings that do not exist: {sorted(declared - present)}"


def test_cycle_and_wing_checks_fail_on_planted_defects(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "averitec_tools"
    r2vc = root / "baselines" / "r2vc"
    for d in (root, root / "baselines", r2vc, r2vc / "stages", r2vc / "experiments", root / "metrics"):
        d.mkdir(exist_ok=True)
        (d / "__init__.py").write_text("")
    (root / "metrics" / "__init__.py").write_text("from averitec_tools.metrics import a\n")
    (root / "metrics" / "a.py").write_text("def f():\n    from averitec_tools.metrics.b import g\n")
    (root / "metrics" / "b.py").write_text("from averitec_tools.metrics import a\n")
    (root / "metrics" / "c.py").write_text("from averitec_tools.metrics import a\nfrom averitec_tools import metrics\n")
    (r2vc / "stages" / "s.py").write_text("from averitec_tools.baselines.r2vc.experiments.e import x\n")
    (r2vc / "experiments" / "e.py").write_text("from averitec_tools.baselines.r2vc.stages import s\n")
    monkeypatch.setattr(sys.modules[__name__], "PACKAGE", root)
    edges = module_edges(root)
    cycles = package_cycles(edges)
    assert any("averitec_tools.metrics.a -> averitec_tools.metrics.b -> averitec_tools.metrics.a" in c
               for c in cycles), cycles
    # the façade edges (metrics/__init__ <-> its modules) and c.py's are not cycles
    assert not any("metrics.c" in c or c.startswith("modules: averitec_tools.metrics ->") for c in cycles), cycles
    assert any(c.startswith("inside averitec_tools.baselines.r2vc: averitec_tools.baselines.r2vc.experiments")
               for c in cycles), cycles
    assert wing_violations(edges) == [
        "averitec_tools/baselines/r2vc/stages/s.py:1: averitec_tools.baselines.r2vc.stages.s -> "
        "averitec_tools.baselines.r2vc.experiments.e  (stages [stages] must not import experiments [experiments])"]


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (closed path, shortest from its first node) per strongly connected
    component of more than one node, in linear time (no path enumeration)."""
    nodes = sorted(set(graph) | {n for targets in graph.values() for n in targets})
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    cycles = []
    for component in sorted(components):
        members, start = set(component), component[0]
        previous: dict[str, str] = {}
        queue = [start]
        while queue and start not in previous:
            node = queue.pop(0)
            for nxt in sorted(graph.get(node, ())):
                if nxt in members and nxt not in previous:
                    previous[nxt] = node
                    queue.append(nxt)
        path = [start]
        while path[-1] != start or len(path) == 1:
            path.append(previous[path[-1]])
        cycles.append(path[::-1])
    return cycles


@pytest.mark.parametrize(("graph", "expected"), [
    ({"a": {"b"}, "b": {"c"}}, []),
    ({"a": {"b"}, "b": {"a"}}, [["a", "b", "a"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c", "a"]]),
    ({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}, []),
    ({"a": {"b"}, "b": {"c", "a"}, "c": {"b"}, "x": {"y"}, "y": {"x"}}, [["a", "b", "a"], ["x", "y", "x"]]),
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
