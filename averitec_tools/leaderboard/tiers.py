"""Point ranks and tiers of a phase's ranked systems: ties told as ties.

**Point rank**: the rank of each system's unresampled mean of the primary metric, systems
whose means agree to 12 digits sharing the best of their ranks (1, 1, 3). Tied systems are
listed by team and system name (case-folded): never by submission time or row order, and
the rank cell says ``=1`` for each of them.

**Tiers**: the best remaining system opens a tier; every other remaining system joins it
when any of these holds, else waits for the next round:

* the paired test against the head is not significant at α after Holm's correction over
  the round's comparisons (:func:`holm`; the paired bootstrap on the phase's shared
  resamples, :func:`shared_p_value`, or approximate randomisation);
* the difference of their means is below the phase's resolution floor
  (:mod:`~averitec_tools.leaderboard.floor`: too small for the claim count to resolve);
* its rank interval overlaps the head's (it could rank where the head does).

Every comparison is kept with the reasons it joined (:class:`Comparison`), and the page
shows them. A tier of more than one system is shown as tied.

Example:
    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from averitec_tools.leaderboard.entry import Comparison

if TYPE_CHECKING:
    from averitec_tools.leaderboard.entry import Entry

#: Scores that agree to this many digits are equal (a shared point rank).
SCORE_DIGITS = 12


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (step-down, monotone, capped at 1).

    Example:
        >>> holm([0.01, 0.04, 0.03])
        [0.03, 0.06, 0.06]
    """
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = round(running, 15)
    return adjusted


def shared_p_value(head: np.ndarray, other: np.ndarray, *, observed: float) -> float:
    """Two-sided paired bootstrap p-value from resampled scores of two systems on the same
    resamples: ``(1 + #{|δ* − δ| ≥ |δ|}) / (B + 1)``, as in :func:`~averitec_tools.metrics.paired.paired_test`.

    Example:
        >>> shared_p_value(np.array([0.6, 0.5, 0.7]), np.array([0.4, 0.5, 0.3]), observed=0.2)
        0.75
    """
    dist = head - other
    hits = int(np.sum(np.abs(dist - observed) >= abs(observed) - 1e-12))
    return (1 + hits) / (dist.size + 1)


def score_of(entry: Entry, primary: str) -> float:
    return round(entry.metrics[primary], SCORE_DIGITS)


def order_and_rank(entries: list[Entry], *, primary: str) -> None:
    """Sort by the primary mean, tied systems by team and system name; set each point rank (min rank on ties)."""
    entries.sort(key=lambda e: (-score_of(e, primary), e.team.casefold(), e.system.casefold(), e.submission_id))
    for i, e in enumerate(entries):
        e.rank = entries[i - 1].rank if i and score_of(entries[i - 1], primary) == score_of(e, primary) else i + 1
        e.comparisons = []


def _p_values(head: Entry, rest: Sequence[Entry], *, test: str, alpha: float, n_resamples: int, seed: int,
              resampled: Mapping[int, np.ndarray] | None) -> list[float]:
    from averitec_tools.metrics.paired import paired_test

    p_raw = []
    for other in rest:
        if len(other.values) != len(head.values):
            p_raw.append(0.0)  # different claim sets cannot share a tier
        elif test == "bootstrap" and resampled and head.submission_id in resampled and other.submission_id in resampled:
            observed = float(np.nanmean(head.values) - np.nanmean(other.values))
            p_raw.append(shared_p_value(resampled[head.submission_id], resampled[other.submission_id], observed=observed))
        else:
            both = ~(np.isnan(head.values) | np.isnan(other.values))  # the claims both systems have scores for
            result = paired_test(a=head.values[both], b=other.values[both], test=test, n_resamples=n_resamples, alpha=alpha, seed=seed)  # type: ignore[arg-type]
            p_raw.append(result.p_value)
    return p_raw


def _why(head: Entry, other: Entry, p: float, *, alpha: float, primary: str, floor: float) -> tuple[str, ...]:
    """Why ``other`` shares ``head``'s tier (empty: it does not)."""
    same_claims = len(other.values) == len(head.values)
    reasons = []
    if p >= alpha:
        reasons.append("test")
    if same_claims and floor > 0 and abs(score_of(head, primary) - score_of(other, primary)) < floor:
        reasons.append("floor")
    a, b = head.rank_interval, other.rank_interval
    if same_claims and a is not None and b is not None and b[0] <= a[1] and a[0] <= b[1]:
        reasons.append("interval")
    return tuple(reasons)


def assign_tiers(
    entries: list[Entry], *, primary: str, alpha: float, test: str, n_resamples: int, seed: int = 0,
    resampled: Mapping[int, np.ndarray] | None = None, floor: float = 0.0,
) -> list[Entry]:
    """Order and point-rank ``entries`` (:func:`order_and_rank`), then tier them in place
    (see the module docstring). ``resampled`` (submission id → its scores on the phase's
    shared bootstrap resamples) makes the paired bootstrap use those resamples; ``floor``
    is the phase's resolution floor; rank intervals already set on the entries are used.

    Example:
        >>> from averitec_tools.leaderboard.entry import Entry
        >>> a, b, c = (Entry(i, t, "s", {"m": v}, {}, {}, "sig", "1", i, np.array([v] * 4)) for i, t, v in ((1, "b", .5), (2, "a", .5), (3, "c", .2)))
        >>> [(e.team, e.rank) for e in assign_tiers([c, a, b], primary="m", alpha=0.05, test="bootstrap", n_resamples=10)]
        [('a', 1), ('b', 1), ('c', 3)]
    """
    order_and_rank(entries, primary=primary)
    remaining = list(entries)
    tier = 0
    while remaining:
        tier += 1
        head, rest = remaining[0], remaining[1:]
        head.tier, head.p_vs_tier_best = tier, None
        if not rest:
            break
        p_raw = _p_values(head, rest, test=test, alpha=alpha, n_resamples=n_resamples, seed=seed, resampled=resampled)
        next_remaining = []
        for other, raw, p in zip(rest, p_raw, holm(p_raw), strict=True):
            why = _why(head, other, p, alpha=alpha, primary=primary, floor=floor)
            other.p_vs_tier_best = p
            other.comparisons.append(Comparison(tier, head.submission_id, float(raw), float(p), len(rest), bool(why), why))
            if why:
                other.tier = tier
            else:
                next_remaining.append(other)
        remaining = next_remaining
    sizes: dict[int, int] = {}
    for e in entries:
        sizes[e.tier] = sizes.get(e.tier, 0) + 1
    for e in entries:
        e.tier_size = sizes[e.tier]
    return entries


def rank_cell(entry: Entry, entries: Sequence[Entry]) -> str:
    """The rank as shown: ``=1`` when another system shares the point rank, the status of an unranked row.

    Example:
        >>> from types import SimpleNamespace as E
        >>> rows = [E(rank=1, status="ranked"), E(rank=1, status="ranked"), E(rank=3, status="ranked"), E(rank=0, status="late")]
        >>> [rank_cell(e, rows) for e in rows]
        ['=1', '=1', '3', 'late']
    """
    if entry.status != "ranked":
        return entry.status
    shared = sum(1 for e in entries if e.status == "ranked" and e.rank == entry.rank) > 1
    return f"={entry.rank}" if shared else str(entry.rank)


def tier_cell(entry: Entry) -> str:
    """The tier as shown: ``1 (tied, 3)`` when the tier holds more than one system; empty for an unranked row.

    Example:
        >>> from types import SimpleNamespace as E
        >>> tier_cell(E(tier=1, tier_size=3, status="ranked")), tier_cell(E(tier=2, tier_size=1, status="ranked"))
        ('1 (tied, 3)', '2')
    """
    if entry.status != "ranked":
        return ""
    return f"{entry.tier} (tied, {entry.tier_size})" if entry.tier_size > 1 else str(entry.tier)


__all__ = ["SCORE_DIGITS", "Comparison", "assign_tiers", "holm", "order_and_rank", "rank_cell", "shared_p_value", "tier_cell"]
