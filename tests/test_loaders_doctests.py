"""The runnable examples in the loader, label, leakage and FEVER-score docstrings."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

MODULES = [
    "averitec_tools.labels",
    "averitec_tools.records.fever",
    "averitec_tools.records.vitaminc",
    "averitec_tools.records.probability",
    "averitec_tools.records.standardized",
    "averitec_tools.loaders",
    "averitec_tools.loaders.base",
    "averitec_tools.loaders.api",
    "averitec_tools.loaders.fever",
    "averitec_tools.loaders.export",
    "averitec_tools.loaders.locate",
    "averitec_tools.loaders.catalogue",
    "averitec_tools.loaders.auto_download",
    "averitec_tools.downloads",
    "averitec_tools.downloads.sources",
    "averitec_tools.downloads.hub",
    "averitec_tools.downloads.archive",
    "averitec_tools.downloads.manifest",
    "averitec_tools.downloads.plan",
    "averitec_tools.downloads.fetch",
    "averitec_tools.cli.data",
    "averitec_tools.leakage",
    "averitec_tools.leakage.urls",
    "averitec_tools.leakage.dates",
    "averitec_tools.leakage.splits",
    "averitec_tools.leakage.audit",
    "averitec_tools.leakage.html_report",
    "averitec_tools.metrics.fever_score",
    "averitec_tools.leaderboard.profiles.fever",
    "averitec_tools.outputs",
    "averitec_tools.jsonio",
    "averitec_tools.leaderboard.subset",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0
