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
from dataclasses import dataclass
from typing import Any

import numpy as np

from averitec_tools.leaderboard.competition import Competition, Phase
from averitec_tools.leaderboard.entry import Entry
from averitec_tools.leaderboard.floor import Floor
from averitec_tools.leaderboard.tiers import (
    Comparison,
    assign_tiers,
    holm,
    order_and_rank,
)


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
    (``primary_ci=False``: the primary metric's CI is left to the caller); an incomplete or
    late one is listed too (``status``), unranked, when it is better than the system's ranked row."""
    from averitec_tools.leaderboard.audit_flags import visible_audit
    from averitec_tools.leaderboard.judging import result_complete
    from averitec_tools.leaderboard.store import BOARD_STATES

    best: dict[tuple[str, str, str], Entry] = {}
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
            status="late" if sub.get("late") else "ranked" if result_complete(res.get("summary")) else "incomplete",
        )
        key = (sub["team"], sub["system"], entry.status)
        if key not in best or entry.metrics[phase.primary_metric] > best[key].metrics[phase.primary_metric]:
            best[key] = entry
    ranked = {k[:2]: e.metrics[phase.primary_metric] for k, e in best.items() if e.status == "ranked"}
    return [e for k, e in best.items() if e.status == "ranked" or e.metrics[phase.primary_metric] > ranked.get(k[:2], -np.inf)]


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
    resamples (:func:`shared_resamples`); a system without them keeps ``None``. A point rank
    already set (:func:`~averitec_tools.leaderboard.tiers.order_and_rank`) is always inside
    its interval: the percentile interval is widened to it where the resamples' quantiles
    miss it (a skewed resample distribution can), so the board never shows a rank its own
    interval denies.

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
        best, worst = int(r.best[k]), int(r.worst[k])
        if e.rank:
            best, worst = min(best, e.rank), max(worst, e.rank)
        e.rank_interval = (best, worst)
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


def board_signature(*, competition: Competition, phase: Phase, floor: Floor | None = None) -> str:
    """The signature of a phase's board: what ranks it, how tiers, CIs and rank intervals
    are computed (test, α, B, seed, tie rule), the resolution floor and the package version.

    Example:
        >>> from averitec_tools.leaderboard.competition import parse_competition
        >>> c = parse_competition({"name": "c", "phases": [{"name": "dev", "gold": "g.json",
        ...     "primary_metric": "averitec_score@0.25"}]}, where="c.yaml")
        >>> board_signature(competition=c, phase=c.phases[0], floor=Floor(0.0594, 500, "variance")).split("|version:")[0]
        'leaderboard|phase:dev|profile:averitec2024|metric:averitec_score@0.25|test:bootstrap|alpha:0.05|B:1000|seed:0|ci:percentile-0.95|rank-interval:0.95|ties:min+floor+interval|floor:0.0594(variance)'
    """
    from averitec_tools.leaderboard.phase_rules import uses_judge
    from averitec_tools.leaderboard.rank_intervals import TIE_RULE
    from averitec_tools.metrics.signature import render_signature

    fields = [("phase", phase.name), ("profile", phase.profile), ("metric", phase.primary_metric), ("test", competition.test),
              ("alpha", competition.alpha), ("B", competition.n_resamples), ("seed", competition.seed),
              ("ci", "percentile-0.95"), ("rank-interval", "0.95"), ("ties", f"{TIE_RULE}+floor+interval")]
    fields += [("floor", floor.field())] if floor is not None else []
    if uses_judge(phase.profiles):  # what a judge-side failure means: unscored (row incomplete) or zero (official)
        fields.append(("judge-failures", phase.judge_failures))
    fields += [("audit-reject", "+".join(phase.reject))] if phase.reject else []
    if phase.deadline is not None:
        fields.append(("deadline", phase.deadline.strftime("%Y-%m-%dT%H:%M:%SZ") + f"+{phase.after_deadline}"))
    return "leaderboard|" + render_signature(fields)


def phase_floor(*, competition: Competition, phase: Phase, n_total: int | None, revealed: bool,
                entries: Sequence[Entry] = ()) -> Floor | None:
    """The phase's resolution floor (:mod:`~averitec_tools.leaderboard.floor`) on the claims that
    count now (those that will count once revealed, for a hidden phase); ``None`` without a claim count."""
    from averitec_tools.leaderboard.floor import resolution_floor

    if not n_total:
        return None
    mask = claim_mask(phase, n_total, revealed=revealed)
    if mask is None:
        mask = claim_mask(phase, n_total, revealed=True)
    n = int(mask.sum()) if mask is not None else n_total
    base = next((e for e in entries if phase.baseline is not None and (e.team, e.system) == phase.baseline
                 and e.status == "ranked" and len(e.values) == n), None)
    value = resolution_floor(n_claims=n, alpha=competition.alpha, n_resamples=competition.n_resamples, seed=competition.seed,
                             variance=phase.difference_variance, values=None if base is None else base.values.tolist())
    return Floor(value, n, "variance" if base is None else "baseline")


def rank_phase(
    *, competition: Competition, phase: Phase, submissions: Sequence[Mapping[str, Any]], results: Mapping[int, Sequence[Mapping[str, Any]]],
    revealed: bool, floor: float = 0.0,
) -> list[Entry]:
    """Ranked, tiered entries of ``phase``, with rank intervals and P(first), then the
    unranked ones (incomplete, late) with their own CIs (empty while a hidden phase is not
    revealed). ``floor``: the phase's resolution floor, for the tiers."""
    b, seed = competition.n_resamples, competition.seed
    primary = phase.primary_metric
    entries = build_entries(phase=phase, submissions=submissions, results=results, revealed=revealed, n_resamples=b, seed=seed,
                            primary_ci=False)
    ranked = [e for e in entries if e.status == "ranked"]
    unranked = sorted((e for e in entries if e.status != "ranked"), key=lambda e: (-e.metrics[primary], e.team.casefold()))
    resampled = shared_resamples(ranked, n_resamples=b, seed=seed)
    add_primary_ci(entries, primary=primary, resampled=resampled, n_resamples=b, seed=seed)
    order_and_rank(ranked, primary=primary)
    add_rank_intervals(ranked, resampled=resampled, seed=seed)
    assign_tiers(ranked, primary=primary, alpha=competition.alpha, test=competition.test, n_resamples=b, seed=seed,
                 resampled=resampled, floor=floor)
    for e in unranked:
        e.rank, e.tier, e.tier_size = 0, 0, 0
    return ranked + unranked


@dataclass
class Board:
    """A phase's board: the entries (ranked first), its resolution floor and its signature."""

    entries: list[Entry]
    floor: Floor | None
    signature: str


def rank_board(store: Any, phase_name: str) -> Board:
    """:func:`rank_phase` on a :class:`~averitec_tools.leaderboard.store.Store`, with the floor."""
    comp = store.competition()
    phase = comp.phase(phase_name)
    from averitec_tools.leaderboard.store import BOARD_STATES

    subs = store.submissions(phase=phase_name, state=BOARD_STATES)
    results = store.results([int(s["id"]) for s in subs]) if subs else {}
    revealed = store.revealed(phase_name)
    n_total = store.phase_claims(phase_name) or next((len(r[0]["per_claim"]) for r in results.values() if r), None)
    first = phase_floor(competition=comp, phase=phase, n_total=n_total, revealed=revealed)
    entries = rank_phase(competition=comp, phase=phase, submissions=subs, results=results, revealed=revealed,
                         floor=first.value if first is not None else 0.0)
    floor = phase_floor(competition=comp, phase=phase, n_total=n_total, revealed=revealed, entries=entries)
    if floor is not None and first is not None and floor != first:  # the baseline's spread now states it
        entries = rank_phase(competition=comp, phase=phase, submissions=subs, results=results, revealed=revealed,
                             floor=floor.value)
    return Board(entries, floor, board_signature(competition=comp, phase=phase, floor=floor))


def rank_store(store: Any, phase_name: str) -> list[Entry]:
    """The entries of :func:`rank_board`."""
    return rank_board(store, phase_name).entries


__all__ = ["Board", "Comparison", "Entry", "add_rank_intervals", "assign_tiers", "board_signature", "claim_mask", "holm",
           "phase_floor", "rank_board", "rank_phase", "rank_store", "shared_resamples", "unscored_reasons"]
