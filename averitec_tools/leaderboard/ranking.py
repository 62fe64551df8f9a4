"""Rank a phase's systems with 95 % bootstrap CIs and Holm-corrected significance tiers.

Each (team, system) is represented by its best finished submission on the phase's
primary metric. Tiers are built greedily: the best remaining system opens a tier; every
other remaining system is compared with it by a paired test on the per-claim values
(paired bootstrap or approximate randomisation from :mod:`averitec_tools.metrics.bootstrap`);
the p-values of that round are Holm-corrected and the systems whose difference is not
significant at α join the tier. Repeat with the rest.

Ties: systems with the same primary score (to 12 digits) get the same rank (1, 1, 3);
the earlier submission is listed first. Every comparison behind a tier is kept
(:attr:`Entry.comparisons`: tier head, raw and Holm-adjusted p, the round's number of
comparisons m), and the board page shows them.

A property of the method, shown on the page: Holm multiplies a round's smallest p-value
by m, the number of systems compared in that round, so any new system -- of any team --
below a tier's head raises m and can move another system into the head's tier (or, as a
new head, out of it). The p-values and m on the page say which comparison moved it.

Rescoring: a submission queued again keeps its current result on the board until the
new one replaces it (:data:`~averitec_tools.leaderboard.store.BOARD_STATES`).

Private splits: until a phase is revealed only the public claims count (``private``
visibility) or nothing is shown (``hidden``); afterwards the private claims rank.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from averitec_tools.leaderboard.competition import Competition, Phase


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


@dataclass(frozen=True)
class Comparison:
    """One paired test behind a tier: this system against ``head`` (a submission id)."""

    tier: int
    head: int
    p_raw: float
    p_holm: float
    m: int
    joined: bool


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


def claim_mask(phase: Phase, n_claims: int, *, revealed: bool) -> np.ndarray | None:
    """Which claims count now (``None``: nothing may be shown)."""
    if phase.visibility == "hidden" and not revealed:
        return None
    if phase.split is None:
        return None if phase.visibility == "private" and not revealed else np.ones(n_claims, dtype=bool)
    public = np.asarray(phase.split.public_mask(n_claims), dtype=bool)
    if phase.visibility == "public":
        return np.ones(n_claims, dtype=bool)
    return ~public if revealed else public


def _current_result(results: Sequence[Mapping[str, Any]], profile: str) -> Mapping[str, Any] | None:
    for r in results:  # newest first
        if r["profile"] == profile:
            return r
    return None


def build_entries(
    *, phase: Phase, submissions: Sequence[Mapping[str, Any]], results: Mapping[int, Sequence[Mapping[str, Any]]], revealed: bool, n_resamples: int
) -> list[Entry]:
    """The best finished submission per (team, system), with metrics on the counted claims."""
    from averitec_tools.leaderboard.store import BOARD_STATES
    from averitec_tools.metrics.bootstrap import mean_ci

    best: dict[tuple[str, str], Entry] = {}
    for sub in submissions:
        if sub["state"] not in BOARD_STATES:
            continue
        res = _current_result(results.get(int(sub["id"]), ()), phase.profile)
        if res is None:
            continue
        per_claim = res["per_claim"]
        mask = claim_mask(phase, len(per_claim), revealed=revealed)
        if mask is None or not mask.any():
            continue
        keys = [k for k in phase.columns if per_claim and k in per_claim[0]["values"]]
        metrics, ci = {}, {}
        for k in keys:
            vals = np.array([c["values"][k] for c in per_claim], dtype=np.float64)[mask]
            metrics[k] = float(vals.mean())
            if k == phase.primary_metric:
                interval = mean_ci(values=vals, n_resamples=n_resamples, seed=0)
                ci[k] = (interval.low, interval.high)
            elif k in res["cis"] and mask.all():
                ci[k] = (float(res["cis"][k][0]), float(res["cis"][k][1]))
        if phase.primary_metric not in metrics:
            continue
        primary = np.array([c["values"][phase.primary_metric] for c in per_claim], dtype=np.float64)[mask]
        entry = Entry(
            submission_id=int(sub["id"]),
            team=sub["team"],
            system=sub["system"],
            metrics=metrics,
            ci=ci,
            meta=sub.get("meta") or {},
            signature=res["signature"],
            scorer_version=res["scorer_version"],
            created_at=sub["created_at"],
            values=primary,
            rescoring=sub["state"] != "finished",
        )
        key = (sub["team"], sub["system"])
        if key not in best or entry.metrics[phase.primary_metric] > best[key].metrics[phase.primary_metric]:
            best[key] = entry
    return list(best.values())


def assign_tiers(entries: list[Entry], *, primary: str, alpha: float, test: str, n_resamples: int) -> list[Entry]:
    """Sort by ``primary`` (ties: the same rank, earlier submission first), then rank and
    tier in place (see the module docstring).

    Example:
        >>> a, b, c = (Entry(i, f"t{i}", "s", {"m": v}, {}, {}, "sig", "1", i, np.array([v] * 4)) for i, v in ((1, .5), (2, .5), (3, .2)))
        >>> [(e.team, e.rank) for e in assign_tiers([c, b, a], primary="m", alpha=0.05, test="bootstrap", n_resamples=10)]
        [('t1', 1), ('t2', 1), ('t3', 3)]
    """
    from averitec_tools.metrics.paired import paired_test

    def score(e: Entry) -> float:
        return round(e.metrics[primary], 12)

    entries.sort(key=lambda e: (-score(e), str(e.created_at), e.submission_id))
    for i, e in enumerate(entries):
        e.rank = entries[i - 1].rank if i and score(entries[i - 1]) == score(e) else i + 1
        e.comparisons = []
    remaining = list(entries)
    tier = 0
    while remaining:
        tier += 1
        head, rest = remaining[0], remaining[1:]
        head.tier, head.p_vs_tier_best = tier, None
        if not rest:
            break
        p_raw = []
        for other in rest:
            if len(other.values) != len(head.values):
                p_raw.append(0.0)  # different claim sets cannot share a tier
                continue
            result = paired_test(a=head.values, b=other.values, test=test, n_resamples=n_resamples, alpha=alpha, seed=0)  # type: ignore[arg-type]
            p_raw.append(result.p_value)
        adjusted = holm(p_raw)
        next_remaining = []
        for other, raw, p in zip(rest, p_raw, adjusted, strict=True):
            other.p_vs_tier_best = p
            other.comparisons.append(Comparison(tier, head.submission_id, float(raw), float(p), len(rest), p >= alpha))
            if p >= alpha:
                other.tier = tier
            else:
                next_remaining.append(other)
        remaining = next_remaining
    return entries


def rank_phase(
    *, competition: Competition, phase: Phase, submissions: Sequence[Mapping[str, Any]], results: Mapping[int, Sequence[Mapping[str, Any]]], revealed: bool
) -> list[Entry]:
    """Ranked, tiered entries of ``phase`` (empty while a hidden phase is not revealed)."""
    entries = build_entries(phase=phase, submissions=submissions, results=results, revealed=revealed, n_resamples=competition.n_resamples)
    return assign_tiers(entries, primary=phase.primary_metric, alpha=competition.alpha, test=competition.test, n_resamples=competition.n_resamples)


def rank_store(store: Any, phase_name: str) -> list[Entry]:
    """:func:`rank_phase` on a :class:`~averitec_tools.leaderboard.store.Store`."""
    comp = store.competition()
    phase = comp.phase(phase_name)
    from averitec_tools.leaderboard.store import BOARD_STATES

    subs = store.submissions(phase=phase_name, state=BOARD_STATES)
    results = store.results([int(s["id"]) for s in subs]) if subs else {}
    return rank_phase(competition=comp, phase=phase, submissions=subs, results=results, revealed=store.revealed(phase_name))


__all__ = ["Comparison", "Entry", "assign_tiers", "build_entries", "claim_mask", "holm", "rank_phase", "rank_store"]
