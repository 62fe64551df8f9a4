"""The runnable examples in the leaderboard modules' docstrings."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "averitec_tools.leaderboard.warm",
    "averitec_tools.leaderboard.competition",
    "averitec_tools.leaderboard.store",
    "averitec_tools.leaderboard.db",
    "averitec_tools.leaderboard.ranking",
    "averitec_tools.leaderboard.export",
    "averitec_tools.leaderboard.web.security",
    "averitec_tools.leaderboard.web.site",
    "averitec_tools.leaderboard.names",
    "averitec_tools.leaderboard.limits",
    "averitec_tools.leaderboard.failures",
    "averitec_tools.leaderboard.deadline",
    "averitec_tools.leaderboard.health",
    "averitec_tools.leaderboard.worker",
    "averitec_tools.leaderboard.queue",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
