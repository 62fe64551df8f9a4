"""The metric registry: complete, consistently named, with metadata, no duplicates."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from averitec_tools.errors import UserError
from averitec_tools.metrics import METRIC_MODULES, METRICS, all_metrics, register_metric
from averitec_tools.metrics.base import MetricInfo

METRICS_DIR = Path(__file__).resolve().parents[1] / "averitec_tools" / "metrics"


def test_every_registering_module_is_listed() -> None:
    registering = {
        p.stem for p in METRICS_DIR.glob("*.py") if "register_metric(" in p.read_text() and p.stem not in {"base", "__init__"}
    }
    assert registering == set(METRIC_MODULES)


def test_names_are_lowercase_hyphenated_and_have_metadata() -> None:
    names = all_metrics()
    assert {"hu-meteor", "meteor", "averitec-score", "label-accuracy", "fever-score", "brier", "ece", "mce", "aurc", "e-aurc"} <= set(names)
    for name in names:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9.]+)*", name), name
        info = METRICS.get(name).info
        assert isinstance(info, MetricInfo) and info.name == name and info.description


def test_duplicates_rejected_and_close_names_suggested() -> None:
    all_metrics()
    existing = METRICS.get("ece")
    with pytest.raises(ValueError, match="duplicate metric name 'ece'"):
        register_metric(existing)
    with pytest.raises(UserError, match="did you mean: ece"):
        METRICS.get("eces")
