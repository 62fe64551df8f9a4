"""Metric objects: small parameterised definitions with metadata, in one registry.

A metric is a frozen dataclass instance with a ``name``, its ``params``, whether higher
is better, and a citation. Registration rejects duplicate names and lookups suggest
close names (see :class:`averitec_tools.registry.Registry`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from averitec_tools.registry import Registry


@dataclass(frozen=True)
class MetricInfo:
    """Metadata describing one metric.

    Example:
        >>> info = MetricInfo(name="brier", higher_is_better=False,
        ...                   description="mean squared error of confidence vs correctness")
        >>> info.higher_is_better
        False
    """

    name: str
    higher_is_better: bool
    description: str
    params: dict[str, Any] = field(default_factory=dict)
    citation: str = ""
    #: Value range, for documentation and property tests.
    bounds: tuple[float, float] = (0.0, 1.0)


#: The global metric registry: ``METRICS.get("ece")`` returns the metric's object.
METRICS: Registry[Any] = Registry("metric")


def register_metric(obj: Any) -> Any:
    """Register a metric object (anything with an ``info: MetricInfo`` attribute)."""
    METRICS.add(obj.info.name, obj)
    return obj


__all__ = ["METRICS", "MetricInfo", "register_metric"]
