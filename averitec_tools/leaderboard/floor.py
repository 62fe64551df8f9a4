"""A phase's resolution floor: the smallest difference of its primary metric that its claim
count can resolve, stated before any submission.

The board's paired bootstrap test (:func:`~averitec_tools.leaderboard.ranking.shared_p_value`)
calls a difference δ between two systems significant at α when ``(1 + #{|δ* − δ| ≥ |δ|}) /
(B + 1) < α`` on the phase's B shared resamples. ``δ* − δ`` is the resampled mean of the
centred per-claim differences, so whether δ is resolved depends only on how those
differences vary. The floor is the smallest |δ| that passes for a difference vector with

* a **stated variance** (``resolution: {difference_variance: V}``; default 0.5: two systems
  whose per-claim scores lie in [0, 1], each at the largest variance such a score can have,
  1/4, and uncorrelated -- systems that err on the same claims, the usual case, resolve
  smaller differences; anti-correlated ones could need up to V = 1), or
* the **baseline submission's** variance (``resolution: {baseline: {team: T, system: S}}``):
  √2 times its centred per-claim values (two systems with the baseline's spread,
  uncorrelated), once that submission is scored; the stated variance until then,

on the phase's counted claims (the public split before the reveal), resampled with the
board's own seed and B. The floor is shown on the phase page, in ``show``, in every
export (``resolution_floor``) and in the board's signature (``floor:``); rows whose
difference from their tier's head is below it share that tier. Holm's correction makes a
round of m comparisons stricter still: the floor is the single-comparison figure.

Example:
    >>> round(resolution_floor(n_claims=500, alpha=0.05, n_resamples=1000, seed=0), 4)
    0.0594
    >>> resolution_floor(n_claims=500, alpha=0.05, n_resamples=1000, seed=0, values=[1.0] * 500)
    0.0
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

#: The default stated variance of a per-claim difference (see the module docstring).
DEFAULT_DIFFERENCE_VARIANCE = 0.5


@dataclass(frozen=True)
class Floor:
    """A phase's floor, the claims it is for and how it was found (``variance`` or ``baseline``)."""

    value: float
    n_claims: int
    method: str

    def as_json(self) -> dict[str, float | int | str]:
        return {"value": self.value, "n_claims": self.n_claims, "method": self.method}

    def field(self) -> str:
        """The board signature's ``floor`` value, e.g. ``0.0623(variance)``."""
        return f"{self.value:.4f}({self.method})"


def _unit_vector(n: int) -> np.ndarray:
    """n values of mean 0 and population variance 1 (alternating ±1; one 0 when n is odd)."""
    z = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    if n % 2:
        z[-1] = 0.0
        z *= math.sqrt(n / (n - 1)) if n > 1 else 0.0
    return z


def resolution_floor(*, n_claims: int, alpha: float, n_resamples: int, seed: int,
                     variance: float = DEFAULT_DIFFERENCE_VARIANCE, values: Sequence[float] | None = None) -> float:
    """The smallest |δ| the board's paired bootstrap resolves at ``alpha`` (see the module
    docstring): from the stated ``variance`` of a per-claim difference, or -- given the
    baseline's per-claim ``values`` -- from √2 times their centred values."""
    from averitec_tools.leaderboard.rank_intervals import resample_indices, resampled_means

    if n_claims < 1:
        return float("nan")
    if values is not None:
        v = np.asarray(values, dtype=np.float64)
        v = v[~np.isnan(v)]
        if v.size == 0:
            return float("nan")
        diff = math.sqrt(2.0) * (v - v.mean())
    else:
        diff = math.sqrt(variance) * _unit_vector(n_claims)
    idx = resample_indices(n_claims=diff.size, n_resamples=n_resamples, seed=seed)
    spread = np.sort(np.abs(resampled_means(diff[None, :], idx)[:, 0]))[::-1]
    allowed = math.ceil(round(alpha * (n_resamples + 1) - 1, 9)) - 1  # p < α: at most this many resamples as far out
    if allowed < 0:
        return float("inf")
    return float(spread[min(allowed, spread.size - 1)]) if allowed < spread.size else 0.0


__all__ = ["DEFAULT_DIFFERENCE_VARIANCE", "Floor", "resolution_floor"]
