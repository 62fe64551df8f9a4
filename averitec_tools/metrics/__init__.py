"""Metrics: Hungarian METEOR, AVeriTeC score, label metrics, FEVER score, calibration,
selective prediction and significance. One module per metric; see :data:`METRICS`.

Metric modules register themselves when imported. Importing this package stays cheap;
:func:`all_metrics` imports every metric module so the registry is complete.
"""

from __future__ import annotations

import importlib

from averitec_tools.metrics.base import METRICS, MetricInfo, register_metric

#: Every module that registers metrics (kept in sync by ``tests/test_metric_registry.py``).
METRIC_MODULES: tuple[str, ...] = (
    "meteor",
    "hungarian_meteor",
    "averitec_score",
    "label_metrics",
    "fever_score",
    "brier",
    "ece",
    "selective",
    "abstention",
    "ev2r",
)


def all_metrics() -> list[str]:
    """Import every metric module and return the sorted names in :data:`METRICS`.

    Example:
        >>> "ece" in all_metrics() and "hu-meteor" in all_metrics()
        True
    """
    for module in METRIC_MODULES:
        importlib.import_module(f"averitec_tools.metrics.{module}")
    return METRICS.names()


__all__ = ["METRICS", "METRIC_MODULES", "MetricInfo", "all_metrics", "register_metric"]
