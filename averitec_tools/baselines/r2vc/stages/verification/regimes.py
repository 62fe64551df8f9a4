"""y_NLI thresholds per evidence regime: how decisive a claim's retrieved pool is.

One set of (T_ent, T_contr, δ) for every claim treats a pool of background passages like
a pool holding a passage that settles the claim. :class:`RegimeThresholds` splits claims
by the pool's **decisiveness** — the largest non-neutral probability over the pool,
``max_j (1 − p_neutral(j))`` — at fitted edges, and gives each regime its own
thresholds. The offline configuration fits the edges (quantiles of the calibration
slice) and each regime's thresholds there (``offline.threshold_regimes``,
:func:`~averitec_tools.baselines.r2vc.offline.rules.fit_regime_thresholds`); one regime
is the single global set.

Example:
    >>> import numpy as np
    >>> rt = RegimeThresholds(edges=(0.5,), thresholds=((0.3, 0.3, 0.0), (0.8, 0.7, 0.1)))
    >>> weak = np.array([[0.2, 0.7, 0.1]]); strong = np.array([[0.05, 0.05, 0.9]])
    >>> rt.regime(weak), rt.regime(strong), rt.for_probs(strong)
    (0, 1, (0.8, 0.7, 0.1))
    >>> RegimeThresholds.from_dict(rt.to_dict()) == rt
    True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from averitec_tools.nli import NEUT


def decisiveness(probs: np.ndarray) -> float:
    """``max_j (1 − p_neutral(j))`` over a pool's NLI probabilities (0 for an empty pool).

    Example:
        >>> decisiveness(np.array([[0.1, 0.8, 0.1], [0.3, 0.4, 0.3]]))
        0.6
    """
    p = np.asarray(probs, dtype=np.float64).reshape(-1, 3)
    return float(1.0 - p[:, NEUT].min()) if len(p) else 0.0


@dataclass(frozen=True)
class RegimeThresholds:
    """Edges on decisiveness and one (T_ent, T_contr, δ) per regime (``len(edges) + 1``)."""

    edges: tuple[float, ...]
    thresholds: tuple[tuple[float, float, float], ...]

    def __post_init__(self) -> None:
        if len(self.thresholds) != len(self.edges) + 1:
            raise ValueError("one threshold triple per regime (len(edges) + 1) is required")

    def regime(self, probs: np.ndarray) -> int:
        """The regime of a pool: how many edges its decisiveness reaches."""
        return int(np.searchsorted(np.asarray(self.edges), decisiveness(probs), side="right"))

    def for_probs(self, probs: np.ndarray) -> tuple[float, float, float]:
        """(T_ent, T_contr, δ) of the pool's regime."""
        return self.thresholds[self.regime(probs)]

    def to_dict(self) -> dict[str, Any]:
        return {"edges": list(self.edges), "thresholds": [list(t) for t in self.thresholds]}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RegimeThresholds:
        return cls(edges=tuple(float(e) for e in data["edges"]),
                   thresholds=tuple((float(a), float(b), float(c)) for a, b, c in data["thresholds"]))


__all__ = ["RegimeThresholds", "decisiveness"]
