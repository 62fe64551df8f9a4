"""One row of a phase's board: :class:`Entry` (a system's best result, its ranks, tier,
intervals, status), shared by the ranking, the tiers and the exports.

Example:
    >>> import numpy as np
    >>> e = Entry(1, "blue", "s", {"m": 0.5}, {}, {}, "sig", "1", 0, np.array([0.5]), unscored={"judge_request_failed": 2})
    >>> e.n_unscored, e.status, e.tier_size
    (2, 'ranked', 1)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Comparison:
    """One comparison behind a tier: this system against ``head`` (a submission id), the raw
    and Holm p-values, the round's size, whether it joined and why (``test``, ``floor``,
    ``interval``; empty when it did not)."""

    tier: int
    head: int
    p_raw: float
    p_holm: float
    m: int
    joined: bool
    why: tuple[str, ...] = ()


@dataclass
class Entry:
    """One ranked system (``rescoring``: its submission is queued to be scored again and
    this is its current result)."""

    submission_id: int
    team: str
    system: str
    metrics: dict[str, float]
    ci: dict[str, tuple[float, float]]
    meta: Mapping[str, Any]
    signature: str
    scorer_version: str
    created_at: Any
    values: np.ndarray = field(repr=False)
    rank: int = 0
    tier: int = 0
    p_vs_tier_best: float | None = None
    comparisons: list[Comparison] = field(default_factory=list)
    rescoring: bool = False
    rank_interval: tuple[int, int] | None = None
    p_first: float | None = None
    #: Counted claims left unscored (a failed or unparseable judge request), per reason.
    unscored: dict[str, int] = field(default_factory=dict)
    #: The evidence audit on the counted claims (:func:`~averitec_tools.leaderboard.audit_flags.visible_audit`).
    audit: dict[str, Any] | None = None
    #: What the team declared (training data, dev claims used).
    declaration: dict[str, str] | None = None
    #: ``ranked``; ``incomplete`` (some claims still wait for the judge) or ``late`` (after
    #: the phase's deadline): listed apart, never ranked.
    status: str = "ranked"
    #: How many systems share this one's tier (more than one: shown as tied).
    tier_size: int = 1

    @property
    def n_unscored(self) -> int:
        return sum(self.unscored.values())


__all__ = ["Comparison", "Entry"]
