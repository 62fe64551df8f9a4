"""Rank a phase's systems with 95 % bootstrap CIs and Holm-corrected significance tiers.

Each (team, system) is represented by its best finished submission on the phase's
primary metric. Tiers are built greedily: the best remaining system opens a tier; every
other remaining system is compared with it by a paired test on the per-claim values
(paired bootstrap or approximate randomisation from :mod:`averitec_tools.metrics.bootstrap`);
the p-values of that round are Holm-corrected and the systems whose difference is not
significant at α join the tier. Repeat with the rest. On a board (:func:`rank_phase`)
the paired bootstrap uses the phase's shared resamples (below), so the tiers, the primary
metric's 95 % CIs (percentile) and the rank intervals all come from the same B resamples.

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

Rank intervals and P(first) (:mod:`averitec_tools.leaderboard.rank_intervals`): one
paired bootstrap over the counted claims, the same seeded resamples for every system of
the phase; per resample each system is ranked (min rank on ties, as on the board) and the
central 95 % of its ranks is its ``rank_interval`` ``[best, worst]``; ``p_first`` is the
share of resamples it is first in (a tie for first split evenly). They sit beside the
tiers; the board's signature (:func:`board_signature`) names B, the seed and the tie rule.

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
    rank_interval: tuple[int, int] | None = None
    p_first: float | None = None
    #: Counted claims left unscored (a failed or unparseable judge request), per reason.
    unscored: dict[str, int] = field(default_factory=dict)
    #: The evidence audit on the counted claims (:func:`~averitec_tools.leaderboard.audit_flags.visible_audit`).
    audit: dict[str, Any] | None = None
    #: What the team declared (training data, dev claims used).
    declaration: dict[str, str] | None = None

    @property
    def n_unscored(self) -> int:
        return sum(self.unscored.values())


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
    *, phase: Phase, submissions: Sequence[Mapping[str, Any]], results: Mapping[int, Sequence[Mapping[str, Any]]], revealed: bool, n_resamples: int,
    seed: int = 0, primary_ci: bool = True,
) -> list[Entry]:
    """The best finished submission per (team, system), with metrics on the counted claims
    (``primary_ci=False``: the primary metric's CI is left to the caller)."""
    from averitec_tools.leaderboard.audit_flags import visible_audit
    from averitec_tools.leaderboard.store import BOARD_STATES

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
        metrics, ci = _row_metrics(phase, per_claim, mask, res["cis"], primary_ci=primary_ci, n_resamples=n_resamples, seed=seed)
        if phase.primary_metric not in metrics or np.isnan(metrics[phase.primary_metric]):
            continue
        primary = claim_values(per_claim, phase.primary_metric)[mask]
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
            unscored=unscored_reasons(per_claim, mask),
            audit=visible_audit(sub.get("audit"), visible_ids={c["id"] for c, keep in zip(per_claim, mask, strict=True) if keep}),
            declaration=sub.get("declaration"),
        )
        key = (sub["team"], sub["system"])
        if key not in best or entry.metrics[phase.primary_metric] > best[key].metrics[phase.primary_metric]:
            best[key] = entry
    return list(best.values())


def _row_metrics(phase: Phase, per_claim: Sequence[Mapping[str, Any]], mask: np.ndarray, stored_cis: Mapping[str, Any], *,
                 primary_ci: bool, n_resamples: int, seed: int) -> tuple[dict[str, float], dict[str, tuple[float, float]]]:
    """A row's shown metrics over the counted, scored claims, and their CIs (the primary
    metric's bootstrapped here when ``primary_ci``; the others as stored, when every claim counts)."""
    from averitec_tools.metrics.bootstrap import mean_ci

    metrics, ci = {}, {}
    for k in [k for k in phase.columns if per_claim and k in per_claim[0]["values"]]:
        vals = claim_values(per_claim, k)[mask]
        scored = vals[~np.isnan(vals)]
        metrics[k] = float(scored.mean()) if scored.size else float("nan")
        if k == phase.primary_metric and primary_ci and scored.size:
            interval = mean_ci(values=scored, n_resamples=n_resamples, seed=seed)
            ci[k] = (interval.low, interval.high)
        elif k in stored_cis and mask.all():
            ci[k] = (float(stored_cis[k][0]), float(stored_cis[k][1]))
    return metrics, ci


def claim_values(per_claim: Sequence[Mapping[str, Any]], key: str) -> np.ndarray:
    """One metric's per-claim values, an unscored claim's (``None``) as NaN.

    Example:
        >>> claim_values([{"values": {"m": 1.0}}, {"values": {"m": None}}], "m").tolist()
        [1.0, nan]
    """
    return np.array([np.nan if c["values"][key] is None else c["values"][key] for c in per_claim], dtype=np.float64)


def unscored_reasons(per_claim: Sequence[Mapping[str, Any]], mask: np.ndarray) -> dict[str, int]:
    """Counted claims left unscored, per reason (sorted by reason).

    Example:
        >>> unscored_reasons([{"unscored": "judge_request_failed"}, {}, {"unscored": "judge_request_failed"}],
        ...                  np.array([True, True, False]))
        {'judge_request_failed': 1}
    """
    out: dict[str, int] = {}
    for c, keep in zip(per_claim, mask, strict=True):
        if keep and c.get("unscored"):
            out[str(c["unscored"])] = out.get(str(c["unscored"]), 0) + 1
    return dict(sorted(out.items()))


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


def assign_tiers(
    entries: list[Entry], *, primary: str, alpha: float, test: str, n_resamples: int, seed: int = 0,
    resampled: Mapping[int, np.ndarray] | None = None,
) -> list[Entry]:
    """Sort by ``primary`` (ties: the same rank, earlier submission first), then rank and
    tier in place (see the module docstring). ``resampled`` (submission id → its scores on
    the phase's shared bootstrap resamples) makes the paired bootstrap test use those
    resamples instead of drawing its own per pair.

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
            if test == "bootstrap" and resampled and head.submission_id in resampled and other.submission_id in resampled:
                observed = float(np.nanmean(head.values) - np.nanmean(other.values))
                p_raw.append(shared_p_value(resampled[head.submission_id], resampled[other.submission_id], observed=observed))
                continue
            both = ~(np.isnan(head.values) | np.isnan(other.values))  # the claims both systems have scores for
            result = paired_test(a=head.values[both], b=other.values[both], test=test, n_resamples=n_resamples, alpha=alpha, seed=seed)  # type: ignore[arg-type]
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


def shared_resamples(entries: Sequence[Entry], *, n_resamples: int, seed: int) -> dict[int, np.ndarray]:
    """Each system's primary score on the phase's B shared bootstrap resamples (submission
    id → B scores), for the systems that share the first system's claims (a system scored
    on other claims cannot be paired and is left out).

    Example:
        >>> a, b = (Entry(i, f"t{i}", "s", {"m": v}, {}, {}, "sig", "1", i, np.array([v] * 4)) for i, v in ((1, .5), (2, .2)))
        >>> {k: v.shape for k, v in shared_resamples([a, b], n_resamples=20, seed=0).items()}
        {1: (20,), 2: (20,)}
    """
    from averitec_tools.leaderboard.rank_intervals import resample_indices, resampled_means

    if not entries:
        return {}
    paired = [e for e in entries if len(e.values) == len(entries[0].values)]
    idx = resample_indices(n_claims=len(paired[0].values), n_resamples=n_resamples, seed=seed)
    stack = np.stack([e.values for e in paired])
    missing = np.isnan(stack)
    if missing.any():  # unscored claims: each system's mean over its scored claims in the resample
        with np.errstate(invalid="ignore", divide="ignore"):
            scores = resampled_means(np.where(missing, 0.0, stack), idx) / resampled_means((~missing).astype(np.float64), idx)
    else:
        scores = resampled_means(stack, idx)
    return {e.submission_id: scores[:, k] for k, e in enumerate(paired)}


def add_rank_intervals(entries: Sequence[Entry], *, resampled: Mapping[int, np.ndarray], seed: int) -> None:
    """Set :attr:`Entry.rank_interval` and :attr:`Entry.p_first` in place from the shared
    resamples (:func:`shared_resamples`); a system without them keeps ``None``.

    Example:
        >>> a, b = (Entry(i, f"t{i}", "s", {"m": v}, {}, {}, "sig", "1", i, np.array([v] * 4)) for i, v in ((1, .5), (2, .2)))
        >>> add_rank_intervals([a, b], resampled=shared_resamples([a, b], n_resamples=20, seed=0), seed=0)
        >>> a.rank_interval, a.p_first, b.rank_interval, b.p_first
        ((1, 1), 1.0, (2, 2), 0.0)
    """
    from averitec_tools.leaderboard.rank_intervals import intervals_from_scores

    paired = [e for e in entries if e.submission_id in resampled]
    if not paired:
        return
    r = intervals_from_scores(np.stack([resampled[e.submission_id] for e in paired], axis=1), seed=seed)
    for k, e in enumerate(paired):
        e.rank_interval = (int(r.best[k]), int(r.worst[k]))
        e.p_first = float(r.p_first[k])


def add_primary_ci(entries: Sequence[Entry], *, primary: str, resampled: Mapping[int, np.ndarray], n_resamples: int, seed: int) -> None:
    """The primary metric's 95 % percentile CI from the shared resamples (a system without
    them: its own bootstrap, :func:`~averitec_tools.metrics.bootstrap.mean_ci`)."""
    from averitec_tools.metrics.bootstrap import mean_ci

    for e in entries:
        if e.submission_id in resampled:
            low, high = np.percentile(resampled[e.submission_id], [2.5, 97.5])
            e.ci[primary] = (float(low), float(high))
        else:
            interval = mean_ci(values=e.values[~np.isnan(e.values)], n_resamples=n_resamples, seed=seed)
            e.ci[primary] = (interval.low, interval.high)


def board_signature(*, competition: Competition, phase: Phase) -> str:
    """The signature of a phase's board: what ranks it, how tiers, CIs and rank intervals
    are computed (test, α, B, seed, tie rule), and the package version.

    Example:
        >>> from averitec_tools.leaderboard.competition import parse_competition
        >>> c = parse_competition({"name": "c", "phases": [{"name": "dev", "gold": "g.json",
        ...     "primary_metric": "averitec_score@0.25"}]}, where="c.yaml")
        >>> board_signature(competition=c, phase=c.phases[0]).split("|version:")[0]
        'leaderboard|phase:dev|profile:averitec2024|metric:averitec_score@0.25|test:bootstrap|alpha:0.05|B:1000|seed:0|ci:percentile-0.95|rank-interval:0.95|ties:min'
    """
    from averitec_tools.leaderboard.phase_rules import uses_judge
    from averitec_tools.leaderboard.rank_intervals import TIE_RULE
    from averitec_tools.metrics.signature import render_signature

    fields = [("phase", phase.name), ("profile", phase.profile), ("metric", phase.primary_metric), ("test", competition.test),
              ("alpha", competition.alpha), ("B", competition.n_resamples), ("seed", competition.seed),
              ("ci", "percentile-0.95"), ("rank-interval", "0.95"), ("ties", TIE_RULE)]
    if uses_judge(phase.profiles):  # what a failed judge request means: unscored (left out, counted) or zero (official)
        fields.append(("judge-failures", phase.judge_failures))
    fields += [("audit-reject", "+".join(phase.reject))] if phase.reject else []
    return "leaderboard|" + render_signature(fields)


def rank_phase(
    *, competition: Competition, phase: Phase, submissions: Sequence[Mapping[str, Any]], results: Mapping[int, Sequence[Mapping[str, Any]]], revealed: bool
) -> list[Entry]:
    """Ranked, tiered entries of ``phase``, with rank intervals and P(first) (empty while a
    hidden phase is not revealed)."""
    b, seed = competition.n_resamples, competition.seed
    primary = phase.primary_metric
    entries = build_entries(phase=phase, submissions=submissions, results=results, revealed=revealed, n_resamples=b, seed=seed,
                            primary_ci=False)
    resampled = shared_resamples(entries, n_resamples=b, seed=seed)
    add_primary_ci(entries, primary=primary, resampled=resampled, n_resamples=b, seed=seed)
    assign_tiers(entries, primary=primary, alpha=competition.alpha, test=competition.test, n_resamples=b, seed=seed, resampled=resampled)
    add_rank_intervals(entries, resampled=resampled, seed=seed)
    return entries


def rank_store(store: Any, phase_name: str) -> list[Entry]:
    """:func:`rank_phase` on a :class:`~averitec_tools.leaderboard.store.Store`."""
    comp = store.competition()
    phase = comp.phase(phase_name)
    from averitec_tools.leaderboard.store import BOARD_STATES

    subs = store.submissions(phase=phase_name, state=BOARD_STATES)
    results = store.results([int(s["id"]) for s in subs]) if subs else {}
    return rank_phase(competition=comp, phase=phase, submissions=subs, results=results, revealed=store.revealed(phase_name))


__all__ = ["Comparison", "Entry", "unscored_reasons", "add_rank_intervals", "assign_tiers", "board_signature", "claim_mask", "holm", "rank_phase", "rank_store", "shared_resamples"]
