"""``cli/`` parses and prints: no function there takes an ``argparse.Namespace`` and
returns a result (issue 21 §1, "a thin CLI").

A function with a ``Namespace`` parameter must return an exit code (``int``) or nothing:
the work is a library call with keyword arguments (e.g.
:func:`averitec_tools.scoring.calibration.calibration_report`). The only exceptions are
the argument resolvers below, which turn options into the library's inputs (a path, an
options mapping, a store handle) and do no work of their own; the list may only shrink,
and an entry that no longer applies fails.
"""

from __future__ import annotations

import ast
from pathlib import Path

CLI = Path(__file__).resolve().parents[1] / "averitec_tools" / "cli"

#: ``module:function`` → what it resolves (no scoring, ranking or model work).
ARGUMENT_RESOLVERS = {
    "_judge_options:judge_options": "the --judge-* options as the profile's keyword options",
    "baseline_r2vc_train:_settings": "--config/--model/--max-steps/--limit as the stage's training settings",
    "data:_out": "--out, or the default download root",
    "data:_sources": "NAME/--split as the catalogue's sources",
    "data:_repo": "--repo/--repo-type/--revision as a hub location",
    "judge_agreement:_specs": "the --judge-*/--second-judge-* options as judge specs",
    "_leaderboard_store:_store": "--db (or AVERITEC_LEADERBOARD_DB) as an open store",
    "score:_options": "the score options as the profile's keyword options",
}
EXIT_OR_NOTHING = {"int", "None"}


def _namespace_functions(folder: Path = CLI) -> dict[str, str]:
    """``module:function`` → its return annotation, for every function taking a Namespace."""
    found: dict[str, str] = {}
    for path in sorted(folder.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            params = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            if any(p.annotation is not None and "Namespace" in ast.unparse(p.annotation) for p in params):
                found[f"{path.stem}:{node.name}"] = ast.unparse(node.returns) if node.returns else "<none>"
    return found


def test_cli_functions_taking_arguments_return_an_exit_code() -> None:
    found = _namespace_functions()
    assert "calibration:run" in found and "compare:run" in found  # the walk sees the commands
    offenders = {name: ret for name, ret in found.items() if ret not in EXIT_OR_NOTHING and name not in ARGUMENT_RESOLVERS}
    assert not offenders, f"cli functions that take a Namespace and return a result: {offenders}"


def test_argument_resolver_list_is_not_stale() -> None:
    found = _namespace_functions()
    stale = [name for name in ARGUMENT_RESOLVERS if found.get(name, "int") in EXIT_OR_NOTHING]
    assert not stale, f"no longer Namespace → result functions; remove from ARGUMENT_RESOLVERS: {stale}"


def test_the_walk_finds_a_namespace_returning_result(tmp_path: Path) -> None:
    (tmp_path / "mod.py").write_text(
        "import argparse\n"
        "class C:\n    def compute(self, *, args: argparse.Namespace) -> dict:\n        return {}\n"
        "def run(args: argparse.Namespace) -> int:\n    return 0\n"
        "def other(x: int) -> dict:\n    return {}\n"
    )
    assert _namespace_functions(tmp_path) == {"mod:compute": "dict", "mod:run": "int"}
