"""Metrics: Hungarian METEOR, AVeriTeC score, label metrics, FEVER score, calibration,
selective prediction and significance. One module per metric; see :data:`METRICS`."""

from averitec_tools.metrics.base import METRICS, MetricInfo, register_metric

__all__ = ["METRICS", "MetricInfo", "register_metric"]
