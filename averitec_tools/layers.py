"""The package's layer rules: which part may import which, and the import graph they are read against.

Every import in ``averitec_tools`` is read with ``ast`` — module level, inside functions
(lazy), under ``TYPE_CHECKING`` and ``importlib.import_module("averitec_tools...")`` with a
constant name — and mapped to its *unit*: a top-level module or package (``metrics``,
``engines``, ``cli`` ...), except that each baseline (``baselines.r2vc``,
``baselines.averitec``) and their shared run room ``baselines._run`` are units of their own.
Units sit in the declared :data:`LAYERS`, lowest first; an import may go to a unit of a
lower layer, or of the same layer unless the layer is declared independent (the
baselines: no baseline imports another). A package's ``__main__`` is an entry point, so it
counts as ``cli``. One level down, each baseline's *wings* (:data:`WINGS`) are layered the
same way, and no package holds an import cycle among its modules or its direct children.

``tests/test_import_layers.py`` holds the package to these rules and
``docs/gen_architecture.py`` draws them (``docs/architecture.md``); both import this module.
It imports nothing of the package, so reading it costs no import of anything else.

Example:
    >>> unit("averitec_tools.baselines.r2vc.stages.retrieval.dense"), wing("averitec_tools.baselines.r2vc.build")
    ('baselines.r2vc', 'build')
    >>> allowed("averitec_tools.cli.score", "averitec_tools.metrics"), allowed("averitec_tools.metrics", "averitec_tools.cli")
    (True, False)
    >>> find_cycles({"a": {"b"}, "b": {"a"}})
    [['a', 'b', 'a']]
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

#: The package directory whose imports are read.
PACKAGE = Path(__file__).resolve().parent
#: One import: ``(file, line, importer module, imported module)``.
Edge = tuple[str, int, str, str]

#: The layers, lowest first: (name, units, independent). A unit may import units of lower
#: layers and, unless the layer is independent, of its own layer (without a cycle).
LAYERS: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("foundation", ("averitec_tools", "_version", "errors", "registry", "outputs", "argtypes", "atomicio", "jsonio",
                    "labels", "nli", "images", "resources", "records", "models", "cache", "hashing", "configfile", "jsonbounds",
                    "forking", "environment", "layers"), False),
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
    ("base", ("", "config_sections", "config", "variants", "models")),
    ("corpus", ("corpus",)),
    ("io", ("io",)),
    ("stages", ("stages",)),
    ("run", ("pipeline", "reporting")),
    ("training", ("training",)),
    ("assembly", ("build", "claim_worker")),
    ("experiments", ("experiments",)),
    ("entry", ("run", "claim_only")),
)
#: Each baseline's wings: package → (layers, the layer of a top module not listed).
WINGS: dict[str, tuple[tuple[tuple[str, tuple[str, ...]], ...], str]] = {
    R2VC: (R2VC_LAYERS, R2VC_DEFAULT_LAYER),
    AVERITEC: (AVERITEC_LAYERS, "run"),
}



LAYER_OF = {u: (i, name, independent) for i, (name, units, independent) in enumerate(LAYERS) for u in units}


def module_name(path: Path, package: Path = PACKAGE) -> str:
    """The dotted name of the module at ``path`` in ``package`` (a package's ``__init__``: the package)."""
    parts = path.relative_to(package.parent).with_suffix("").parts
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


def allowed(importer: str, imported: str) -> bool:
    """Whether ``importer`` may import ``imported`` under :data:`LAYERS` (a unit without a layer: yes; the
    layer test names it)."""
    if unit(imported) not in LAYER_OF or unit(importer) not in LAYER_OF:
        return True
    (low, _, independent), (high, _, _) = LAYER_OF[unit(imported)], LAYER_OF[unit(importer)]
    return low < high or (low == high and not independent)


def _target(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".") if is_package else module.split(".")[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join(base + ([node.module] if node.module else []))


def imports_of(path: Path, package: Path = PACKAGE) -> list[tuple[int, str]]:
    """``(line, imported module)`` for every ``averitec_tools`` import in the file, lazy ones included."""
    module = module_name(path, package)
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _target(node, module, path.name == "__init__.py")
            found.append((node.lineno, target))
            # ``from averitec_tools.x import y`` may import the submodule ``x.y``
            found += [(node.lineno, f"{target}.{a.name}") for a in node.names
                      if (package.parent / f"{target}.{a.name}".replace(".", "/")).with_suffix(".py").exists()
                      or (package.parent / f"{target}.{a.name}".replace(".", "/") / "__init__.py").exists()]
        elif (isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)
              and getattr(node.func, "attr", getattr(node.func, "id", None)) == "import_module"):
            found.append((node.lineno, node.args[0].value))
    return [(line, name) for line, name in found if name == "averitec_tools" or name.startswith("averitec_tools.")]


def modules(package: Path = PACKAGE) -> dict[str, Path]:
    """Every module of ``package`` by its dotted name."""
    return {module_name(p, package): p for p in sorted(package.rglob("*.py"))}


def unit_edges(package: Path = PACKAGE) -> list[Edge]:
    """The imports of ``package`` from one unit to another."""
    edges = []
    for path in sorted(package.rglob("*.py")):
        module = module_name(path, package)
        for line, target in imports_of(path, package):
            if unit(module) != unit(target):
                edges.append((str(path.relative_to(package.parent)), line, module, target))
    return edges


def _resolve(name: str, found: dict[str, Path]) -> str | None:
    """The module an imported name lands in (``pkg.mod.Class`` → ``pkg.mod``)."""
    while name not in found and "." in name:
        name = name.rsplit(".", 1)[0]
    return name if name in found else None


def module_edges(package: Path = PACKAGE) -> list[Edge]:
    """The imports between modules of ``package``, without the edges from inside a package to its
    own ``__init__`` (its façade runs before any of its modules anyway, and ``from pkg import sub``
    counts as an import of ``pkg.sub``)."""
    found = modules(package)
    edges = []
    for module, path in found.items():
        for line, target in imports_of(path, package):
            imported = _resolve(target, found)
            if imported is None or imported == module or module.startswith(imported + "."):
                continue
            edges.append((str(path.relative_to(package.parent)), line, module, imported))
    return edges


def _child(package: str, module: str) -> str:
    """The direct child of ``package`` that holds ``module``."""
    return f"{package}.{module[len(package) + 1:].split('.')[0]}"


def package_cycles(edges: list[Edge]) -> list[str]:
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
        for c in find_cycles(graph):
            name = f"inside {scope}" if scope else "modules"
            report.append(f"{name}: " + " -> ".join(c) + "\n    " + "\n    ".join(
                where[(x, y)] for x, y in zip(c, c[1:], strict=False)))
    return list(dict.fromkeys(report))


def wing_violations(edges: list[Edge]) -> list[str]:
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


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle (closed path, shortest from its first node) per strongly connected
    component of more than one node, in linear time (no path enumeration)."""
    return [_shortest_cycle(graph, component) for component in sorted(_components(graph))]


class _Tarjan:
    """Tarjan's strongly connected components, iteratively (no recursion limit)."""

    def __init__(self, graph: dict[str, set[str]]) -> None:
        self.graph = graph
        self.index: dict[str, int] = {}
        self.low: dict[str, int] = {}
        self.on_stack: set[str] = set()
        self.stack: list[str] = []
        self.components: list[list[str]] = []

    def _enter(self, node: str) -> tuple[str, Iterator[str]]:
        self.index[node] = self.low[node] = len(self.index)
        self.stack.append(node)
        self.on_stack.add(node)
        return node, iter(sorted(self.graph.get(node, ())))

    def _close(self, node: str) -> None:
        """Pop ``node``'s component off the stack where ``node`` is its root."""
        if self.low[node] != self.index[node]:
            return
        component = []
        while True:
            member = self.stack.pop()
            self.on_stack.discard(member)
            component.append(member)
            if member == node:
                break
        if len(component) > 1:
            self.components.append(sorted(component))

    def visit(self, root: str) -> None:
        work = [self._enter(root)]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    self.low[work[-1][0]] = min(self.low[work[-1][0]], self.low[node])
                self._close(node)
            elif child not in self.index:
                work.append(self._enter(child))
            elif child in self.on_stack:
                self.low[node] = min(self.low[node], self.index[child])


def _components(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one node, each sorted."""
    tarjan = _Tarjan(graph)
    for root in sorted(set(graph) | {n for targets in graph.values() for n in targets}):
        if root not in tarjan.index:
            tarjan.visit(root)
    return tarjan.components


def _shortest_cycle(graph: dict[str, set[str]], component: list[str]) -> list[str]:
    """The shortest closed path from the component's first node back to it (breadth first)."""
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
    return path[::-1]


__all__ = ["AVERITEC", "AVERITEC_LAYERS", "LAYERS", "LAYER_OF", "PACKAGE", "R2VC", "R2VC_DEFAULT_LAYER", "R2VC_LAYERS",
           "WINGS", "Edge", "allowed", "find_cycles", "imports_of", "module_edges", "module_name", "modules",
           "package_cycles", "unit", "unit_edges", "wing", "wing_layer", "wing_violations"]
