"""The one check for a probability read from a file (a prediction's confidence)."""

from __future__ import annotations

import math
from typing import Any

from averitec_tools.errors import UserError


def probability(value: Any, *, where: str, field: str) -> float:
    """``value`` as a float in [0, 1], or a :class:`UserError` naming ``where`` and ``field``.

    NaN, infinities, booleans and numbers outside [0, 1] are refused: calibration metrics,
    plots and tiers would otherwise be computed from them silently.

    Example:
        >>> probability(1, where="p.json[0]", field="confidence")
        1.0
        >>> probability(1.5, where="p.json[0]", field="confidence")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: p.json[0]: field 'confidence' must be a number in [0, 1], found 1.5
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise UserError(f"{where}: field {field!r} must be a number in [0, 1], found {value!r}")
    return float(value)


__all__ = ["probability"]
