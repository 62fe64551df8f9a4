"""The package's import graph points down only: no upward edge, no package cycle.

The rules — the layers of the package, each baseline's wings, how an import is read and
mapped to its unit — are the package's own, :mod:`averitec_tools.layers` (which
``docs/gen_architecture.py`` draws too); this file holds the package to them:

- every unit has a declared layer, and no import goes up or sideways against
  :data:`~averitec_tools.layers.LAYERS`;
- the unit graph has no cycle (two units of one layer importing each other);
- the *module* graph has no cycle anywhere in the package, nor do the direct children of
  any package;
- each baseline's wings (:data:`~averitec_tools.layers.WINGS`: R2VC's and the AVeriTeC
  baseline's) are layered: no wing imports a higher one.

A failure names each offending import as ``file:line: importer -> imported``.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from averitec_tools.layers import (
    LAYER_OF,
    WINGS,
    allowed,
    find_cycles,
    imports_of,
    module_edges,
    modules,
    package_cycles,
    unit,
    unit_edges,
    wing,
    wing_violations,
)

EDGES = unit_edges()
MODULE_EDGES = module_edges()


def test_every_unit_has_a_layer() -> None:
    units = {unit(m) for _, _, a, b in EDGES for m in (a, b)} | {
        unit(m) for m in modules()}
    missing = sorted(units - set(LAYER_OF))
    assert not missing, f"units without a declared layer (add them to LAYERS): {', '.join(missing)}"


def test_no_upward_or_sideways_import() -> None:
    bad = [f"{f}:{line}: {a} -> {b}  ({unit(a)} [{LAYER_OF[unit(a)][1]}] must not import "
           f"{unit(b)} [{LAYER_OF[unit(b)][1]}])"
           for f, line, a, b in EDGES if not allowed(a, b)]
    assert not bad, "imports against the declared layers:\n" + "\n".join(bad)


def test_no_package_cycle() -> None:
    graph: dict[str, set[str]] = defaultdict(set)
    where: dict[tuple[str, str], str] = {}
    for f, line, a, b in EDGES:
        graph[unit(a)].add(unit(b))
        where.setdefault((unit(a), unit(b)), f"{f}:{line}: {a} -> {b}")
    cycles = find_cycles(graph)
    assert not cycles, "package cycles:\n" + "\n".join(
        " -> ".join(c) + "\n    " + "\n    ".join(where[(x, y)] for x, y in zip(c, c[1:], strict=False))
        for c in cycles)


def test_no_module_cycle_inside_any_package() -> None:
    cycles = package_cycles(MODULE_EDGES)
    assert not cycles, "import cycles inside the package:\n" + "\n".join(cycles)


def test_baseline_wings_are_layered() -> None:
    bad = wing_violations(MODULE_EDGES)
    assert not bad, "baseline imports against the wing layers (WINGS):\n" + "\n".join(bad)


def test_every_declared_wing_is_real() -> None:
    for package, (layers, _) in WINGS.items():
        present = {wing(m, package) for m in modules()} - {None}
        declared = {w for _, wings in layers for w in wings}
        assert declared <= present, f"{package}: declared wings that do not exist: {sorted(declared - present)}"


def test_cycle_and_wing_checks_fail_on_planted_defects(tmp_path: Path) -> None:
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


@pytest.mark.parametrize(("graph", "expected"), [
    ({"a": {"b"}, "b": {"c"}}, []),
    ({"a": {"b"}, "b": {"a"}}, [["a", "b", "a"]]),
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c", "a"]]),
    ({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}, []),
    ({"a": {"b"}, "b": {"c", "a"}, "c": {"b"}, "x": {"y"}, "y": {"x"}}, [["a", "b", "a"], ["x", "y", "x"]]),
])
def test_cycle_finder(graph: dict[str, set[str]], expected: list[list[str]]) -> None:
    assert find_cycles(graph) == expected


def test_walker_sees_lazy_relative_and_dynamic_imports(tmp_path: Path) -> None:
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
    found = sorted(name for _, name in imports_of(source, tmp_path / "averitec_tools"))
    assert found == ["averitec_tools.baselines.averitec", "averitec_tools.baselines.averitec.config",
                     "averitec_tools.baselines.r2vc", "averitec_tools.cli.main"]
    assert not allowed("averitec_tools.baselines.r2vc.stage", "averitec_tools.baselines.averitec.models")
    assert not allowed("averitec_tools.leaderboard.web", "averitec_tools.cli._json")
    assert allowed("averitec_tools.cli.score", "averitec_tools.metrics")
