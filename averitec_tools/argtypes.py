"""Numeric command-line options checked when they are parsed (argparse types; a base module,
so that ``cli`` and ``engines`` share them) (issue 39: ``meta-eval --lite -5``
ran 9 minutes and printed a meaningless τ). Every numeric option of every command uses one
of these types instead of a bare ``int`` or ``float`` (``tests/test_cli_round3.py`` walks the
parser and checks), so a value out of range is argparse's one-line usage error, exit 2,
before any work.

Example:
    >>> import argparse
    >>> p = argparse.ArgumentParser(prog="x", exit_on_error=False)
    >>> _ = p.add_argument("--lite", type=count(0))
    >>> p.parse_args(["--lite", "5"]).lite
    5
    >>> count(1)("-5")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: expected a whole number of at least 1, got '-5'
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable


def count(minimum: int = 1, maximum: int | None = None) -> Callable[[str], int]:
    """A whole number in ``[minimum, maximum]``."""

    def parse(text: str) -> int:
        stripped = text.strip()
        digits = stripped[1:] if stripped[:1] in "+-" else stripped
        if not digits.isascii() or not digits.isdigit() or len(digits) > 18:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text[:30]!r}")
        value = int(stripped)
        if value < minimum or (maximum is not None and value > maximum):
            upper = "" if maximum is None else f" and at most {maximum}"
            raise argparse.ArgumentTypeError(f"expected a whole number of at least {minimum}{upper}, got {text[:30]!r}")
        return value

    parse.__name__ = "count"  # argparse names the type in its message
    return parse


def number(low: float = 0.0, high: float = math.inf, *, low_open: bool = False, high_open: bool = False) -> Callable[[str], float]:
    """A finite number in the interval from ``low`` to ``high`` (each end open or closed).

    Example:
        >>> number(0, 1, low_open=True, high_open=True)("0.95"), number(0)("2.5")
        (0.95, 2.5)
    """
    left, right = "(" if low_open else "[", ")" if high_open else "]"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a number, got {text[:30]!r}") from None
        inside = (value > low if low_open else value >= low) and (value < high if high_open else value <= high)
        if not math.isfinite(value) or not inside:
            raise argparse.ArgumentTypeError(f"expected a number in {left}{low:g}, {high:g}{right}, got {text[:30]!r}")
        return value

    parse.__name__ = "number"
    return parse


#: The usual shapes.
POSITIVE = count(1)
NON_NEGATIVE = count(0)
SEED = count(0, 2**32 - 1)
LEVEL = number(0, 1, low_open=True, high_open=True)  # a confidence level, α
UNIT = number(0, 1)  # a probability, a risk, a threshold on [0, 1]
SECONDS = number(0, 86_400, low_open=True)
PORT = count(0, 65_535)

__all__ = ["LEVEL", "NON_NEGATIVE", "PORT", "POSITIVE", "SECONDS", "SEED", "UNIT", "count", "number"]
