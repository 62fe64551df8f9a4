"""The runnable examples in the scorer's docstrings (scoring helpers, --lenient, convert, fever8)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "averitec_tools.jsonio",
    "averitec_tools.registry",
    "averitec_tools.errors",
    "averitec_tools.metrics.signature",
    "averitec_tools.leaderboard.scoring",
    "averitec_tools.leaderboard.lenient",
    "averitec_tools.leaderboard.convert",
    "averitec_tools.leaderboard.submission",
    "averitec_tools.leaderboard.formats",
    "averitec_tools.metrics.ev2r",
    "averitec_tools.metrics.ev2r_judges",
    "averitec_tools.metrics.ev2r_runner",
    "averitec_tools.metrics.ev2r_official",
    "averitec_tools.metrics.agreement",
    "averitec_tools.leaderboard.fever8_inputs",
    "averitec_tools.leaderboard.judge_agreement",
    "averitec_tools.metrics._lean",
    "averitec_tools.metrics.prepared_cache",
    "averitec_tools.metrics.warm_pool",
    "averitec_tools.metrics._gc",
    "averitec_tools.metrics.porter",
    "averitec_tools.cli._tables",
    "averitec_tools.leaderboard.processing",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
