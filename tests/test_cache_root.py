"""Every cache of the package lives under the one cache root (``averitec_tools.cache``).

Each resolver is called with ``XDG_CACHE_HOME`` set (and ``AVERITEC_CACHE_DIR`` unset),
then with ``AVERITEC_CACHE_DIR`` set: all must land below the expected root, so caches
never split between two folders. A scan checks that no other module reads the two
variables itself.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "averitec_tools"


def _resolvers() -> dict[str, Callable[[], Path]]:
    from averitec_tools.baselines.averitec.config import builtin_config
    from averitec_tools.baselines.averitec.config import cache_dir as averitec_cache
    from averitec_tools.baselines.r2vc.config import builtin_config as r2vc_builtin
    from averitec_tools.baselines.r2vc.offline.data import cache_root as r2vc_cache
    from averitec_tools.leaderboard.processing import default_cache_dir as leaderboard_cache
    from averitec_tools.loaders.locate import download_root
    from averitec_tools.metrics.ev2r_official import FEVER8_PROMPT_SOURCE, cached_file
    from averitec_tools.metrics.ev2r_runner import default_cache_path

    return {
        "loaders.locate (data downloads)": download_root,
        "metrics.ev2r_runner (judgements)": default_cache_path,
        "metrics.ev2r_official (judge prompts)": lambda: cached_file(FEVER8_PROMPT_SOURCE),
        "leaderboard.processing": leaderboard_cache,
        "baselines.r2vc.offline.data": lambda: r2vc_cache(r2vc_builtin("offline-minilm")),
        "baselines.averitec.config": lambda: averitec_cache(builtin_config("offline-minilm")),
    }


@pytest.mark.parametrize("variable", ["XDG_CACHE_HOME", "AVERITEC_CACHE_DIR"])
def test_every_cache_is_under_the_one_root(variable: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AVERITEC_CACHE_DIR", raising=False)
    monkeypatch.setenv(variable, str(tmp_path))
    root = tmp_path / "averitec-tools" if variable == "XDG_CACHE_HOME" else tmp_path
    outside = {name: str(resolve()) for name, resolve in _resolvers().items()
               if not resolve().is_relative_to(root)}
    assert not outside, f"caches outside {root} with {variable} set: {outside}"


def test_the_cache_environment_is_read_in_one_place() -> None:
    readers = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "cache.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in ("XDG_CACHE_HOME", "AVERITEC_CACHE_DIR"):
                readers.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    assert not readers, f"use averitec_tools.cache.cache_root instead of reading the variables: {readers}"
