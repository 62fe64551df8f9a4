"""Every docstring example in ``averitec_tools`` runs and passes: one collector, no hand-kept list.

The modules are found by walking the package's files, so a new module is collected the
moment it exists. Per module the test checks (docs/testing.md, "Docstring examples"):

1. every ``>>>`` prompt in the file is an example doctest collects (none hides in a
   comment, a plain string or an object doctest cannot see) and every example passes
   (``ELLIPSIS`` allowed);
2. at least one example really runs: ``+SKIP`` is for what a test machine cannot have (a
   hub model, a GPU training run); a module whose examples all skip is in ``SKIP_ONLY``
   with the test that exercises it instead;
3. every docstring that runs examples shows an expected output (or exception) somewhere,
   so no docstring checks only that its examples do not raise;
4. a library module that defines a public function or class has an example. Exempt by
   rule: ``cli/`` (tested by running the commands), ``migrations/`` and ``__main__``
   (scripts) and private ``_modules``; exempt by name: ``NO_EXAMPLES``, a list that may
   only shrink.

Both lists are checked against the code: an entry that no longer applies fails, so they
cannot go stale. A module that needs an optional extra the environment lacks (or NLTK
data) skips locally and fails in CI, as missing shared data does.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import importlib.util
import io
import re
from pathlib import Path
from typing import Any

import pytest
from conftest import skip_or_fail

PACKAGE = Path(__file__).resolve().parents[1] / "averitec_tools"
PROMPT = re.compile(r"^\s*>>>", re.MULTILINE)

#: Files that are not importable on their own, with why; they must hold no examples.
NOT_IMPORTABLE = {
    "averitec_tools.leaderboard.migrations.env": "Alembic's env script: runs only inside `alembic upgrade`",
}

#: Modules whose every example is ``+SKIP``: what each needs, and the test that runs it instead.
SKIP_ONLY = {
    "averitec_tools.baselines.r2vc.stages.generation.generator": "a hub causal LM; tests/test_r2vc_generator.py runs a tiny one",
}

#: Library modules with public definitions and no example yet. This list may only shrink:
#: give a module an example and remove it here (the test says so when one has examples).
NO_EXAMPLES = {
    "averitec_tools.baselines.r2vc.types",
    "averitec_tools.engines.ray_engine",
    "averitec_tools.scoring.profiles.averitec2023",
    "averitec_tools.scoring.profiles.averitec2024",
    "averitec_tools.loaders.averitec",
    "averitec_tools.loaders.r2vc",
    "averitec_tools.loaders.vitaminc",
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


FILES = {_module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _exempt_by_rule(name: str) -> bool:
    parts = name.split(".")
    return (
        "cli" in parts
        or "migrations" in parts
        or parts[-1] == "__main__"
        or any(p.startswith("_") and p != "__main__" for p in parts[1:])
    )


def _defines_public(path: Path) -> bool:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    kinds = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return any(isinstance(node, kinds) and not node.name.startswith("_") for node in tree.body)


def _needs_example(name: str) -> bool:
    return not _exempt_by_rule(name) and name not in NOT_IMPORTABLE and _defines_public(FILES[name])


class _Runner(doctest.DocTestRunner):
    """A runner that also notes examples failing only because an optional module is missing."""

    def __init__(self) -> None:
        super().__init__(optionflags=doctest.ELLIPSIS)
        self.missing: list[str] = []

    def report_unexpected_exception(self, out: Any, test: doctest.DocTest, example: doctest.Example,
                                    exc_info: Any) -> None:
        from averitec_tools.errors import ResourceError

        exc = exc_info[1]
        if isinstance(exc, ModuleNotFoundError) and not (exc.name or "").startswith("averitec_tools"):
            self.missing.append(f"the optional module {exc.name!r}")
        elif isinstance(exc, ResourceError):
            self.missing.append(f"a resource ({exc}); set NLTK_DATA to ../shared/nltk_data")
        super().report_unexpected_exception(out, test, example, exc_info)


def _import(name: str) -> Any:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if (exc.name or "").startswith("averitec_tools"):
            raise
        skip_or_fail(f"{name} needs the optional module {exc.name!r} (pip install 'averitec-tools[all]')")


@pytest.fixture()
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Examples run in a scratch directory, with Hugging Face datasets' cache inside it."""
    monkeypatch.chdir(tmp_path)
    if importlib.util.find_spec("datasets") is not None:
        import datasets

        monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")


@pytest.mark.usefixtures("isolated")
@pytest.mark.parametrize("name", sorted(FILES))
def test_docstring_examples(name: str) -> None:
    n_prompts = len(PROMPT.findall(FILES[name].read_text(encoding="utf-8")))
    if name in NOT_IMPORTABLE:
        assert n_prompts == 0, f"{name} cannot be imported ({NOT_IMPORTABLE[name]}): its examples would never run"
        return
    module = _import(name)
    tests = doctest.DocTestFinder().find(module)
    n_examples = sum(len(t.examples) for t in tests)
    assert n_examples == n_prompts, (
        f"{name}: {n_prompts} '>>>' prompts in the file but {n_examples} examples collected; "
        "an example outside a docstring doctest can see never runs"
    )

    runner, out = _Runner(), io.StringIO()
    for test in tests:
        runner.run(test, out=out.write)
    if runner.missing:
        skip_or_fail(f"{name}: its examples need {'; '.join(sorted(set(runner.missing)))}")
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{name}: {result.failed} of {result.attempted} examples failed\n{out.getvalue()}"

    if name in SKIP_ONLY:
        assert n_examples > 0 and result.attempted == 0, f"{name} runs examples now: remove it from SKIP_ONLY"
    else:
        assert n_examples == 0 or result.attempted > 0, (
            f"{name}: all {n_examples} examples are +SKIP; give it one that runs (or list it in SKIP_ONLY with why)"
        )
    for test in tests:
        running = [e for e in test.examples if not e.options.get(doctest.SKIP)]
        assert not running or any(e.want.strip() or e.exc_msg for e in running), (
            f"{test.name}: its examples show no expected output, so they check nothing beyond 'does not raise'"
        )

    if name in NO_EXAMPLES:
        assert n_examples == 0, f"{name} has examples now: remove it from NO_EXAMPLES"
        assert _needs_example(name), f"{name} is exempt by rule: remove it from NO_EXAMPLES"
    elif _needs_example(name):
        assert n_examples > 0, (
            f"{name} defines public functions or classes but has no docstring example (the house style asks for one)"
        )


def test_collector_sees_the_whole_package() -> None:
    # The walk must reach nested packages and modules that no list ever named.
    for name in ("averitec_tools", "averitec_tools.metrics.hungarian_meteor", "averitec_tools.records.averitec",
                 "averitec_tools.baselines.r2vc.stages.retrieval.fusion", "averitec_tools.leaderboard.web.security"):
        assert name in FILES
    assert len(FILES) == sum(1 for _ in PACKAGE.rglob("*.py"))
    assert set(SKIP_ONLY) | set(NO_EXAMPLES) | set(NOT_IMPORTABLE) <= set(FILES), "an exemption names no module"
