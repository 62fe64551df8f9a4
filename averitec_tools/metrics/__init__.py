"""Metrics: Hungarian METEOR, AVeriTeC score, label metrics, FEVER score, calibration,
selective prediction, significance, and the evidence scorers the meta-evaluation compares
with people (:mod:`~averitec_tools.metrics.evidence_scorer`). One module per metric, one
registry (:data:`METRICS`), one spelling (``parse_metric``), one signature dialect
(:mod:`~averitec_tools.metrics.signature`).

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
    # evidence scorers (``averitec meta-eval``, ``averitec score --evidence-scorer``)
    "hu_meteor_study",
    "text_overlap",
    "stored_scores",
    "minilm_qa_f1",
    "minilm_verdict",
    "nli_verdict",
    "ev2r_scorer",
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
