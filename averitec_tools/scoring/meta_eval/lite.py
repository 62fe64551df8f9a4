"""A "lite" claim subset chosen by a fixed rule, and how well it keeps a team ranking.

The rule, fixed before any outcome was looked at: stratify the claims by gold label,
give each label a share of ``size`` proportional to its frequency (largest remainder,
ties by label name), and within a label take the claims with the smallest
``sha256("averitec-lite:" + claim id)``. It depends on ids and labels only, so anyone can
recompute it, and no score or rating can steer it.

:func:`lite_report` measures the rule where team submissions with per-claim outcomes
exist, the study's rated items: the teams ranked by their mean human rating over all
their rated claims, against the same ranking over the claims the rule keeps (the same
fraction of each team's claims), Kendall's τ-b with a percentile bootstrap interval
(claims resampled within teams).

    >>> lite_subset(claims=[(1, "Refuted"), (2, "Refuted"), (3, "Supported"), (4, "Refuted")], size=2)
    [2, 4]
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from averitec_tools.errors import UserError
from averitec_tools.hashing import sha256_hex
from averitec_tools.scoring.meta_eval.ratings import RatedItem
from averitec_tools.scoring.meta_eval.stats import kendall, percentile_interval

RULE = ("stratified by gold label, shares proportional to label frequency (largest remainder), "
        "smallest sha256('averitec-lite:' + claim id) first within each label")


def _rank_key(claim_id: Any) -> str:
    return sha256_hex(f"averitec-lite:{claim_id}")


def lite_subset(*, claims: Sequence[tuple[Any, str]], size: int) -> list[Any]:
    """The rule's ``size`` claim ids from ``(claim_id, gold_label)`` pairs, sorted by id."""
    if not 0 < size <= len(claims):
        raise UserError(f"lite subset size must be between 1 and {len(claims)}, got {size}")
    by_label: dict[str, list[Any]] = defaultdict(list)
    for cid, label in claims:
        by_label[label].append(cid)
    quotas = {lab: size * len(ids) / len(claims) for lab, ids in by_label.items()}
    take = {lab: int(q) for lab, q in quotas.items()}
    spare = size - sum(take.values())
    for lab in sorted(quotas, key=lambda k: (-(quotas[k] - take[k]), k))[:spare]:
        take[lab] += 1
    chosen = [cid for lab, ids in by_label.items() for cid in sorted(ids, key=_rank_key)[:take[lab]]]
    return sorted(chosen)


def _team_means(items: Sequence[RatedItem], dimension: str, keep: set[int] | None) -> dict[str, float]:
    sums: dict[str, list[float]] = defaultdict(list)
    for it in items:
        v = it.ratings.get(dimension)
        if v is not None and (keep is None or it.row in keep):
            sums[it.team].append(v)
    return {t: float(np.mean(v)) for t, v in sums.items()}


def _tau(items: Sequence[RatedItem], dimension: str, keep: set[int]) -> float:
    full, lite = _team_means(items, dimension, None), _team_means(items, dimension, keep)
    teams = sorted(set(full) & set(lite))
    return kendall(x=[full[t] for t in teams], y=[lite[t] for t in teams])


def _lite_rows(items: Sequence[RatedItem], fraction: float) -> set[int]:
    by_team: dict[str, list[RatedItem]] = defaultdict(list)
    for it in items:
        by_team[it.team].append(it)
    keep: set[int] = set()
    for team_items in by_team.values():
        n = max(1, round(fraction * len(team_items)))
        chosen = set(lite_subset(claims=[(it.claim_id, it.gold) for it in team_items], size=n))
        keep.update(it.row for it in team_items if it.claim_id in chosen)
    return keep


def lite_report(*, items: Sequence[RatedItem], size: int = 100, n_claims: int = 500,
                dimensions: Sequence[str] = ("semantic_coverage", "verdict_agreement"),
                resamples: int = 1000, level: float = 0.95, seed: int = 0) -> dict[str, Any]:
    """τ between full and lite team rankings on the rated items, per dimension, with intervals."""
    fraction = size / n_claims
    keep = _lite_rows(items, fraction)
    rng = np.random.default_rng(seed)
    by_team: dict[str, list[RatedItem]] = defaultdict(list)
    for it in items:
        by_team[it.team].append(it)
    out: dict[str, Any] = {"rule": RULE, "size": size, "of": n_claims, "fraction": fraction,
                           "rated_items_kept": len(keep), "teams": len(by_team), "dimensions": {}}
    for dim in dimensions:
        taus = []
        for _ in range(resamples):
            sample: list[RatedItem] = []
            for team_items in by_team.values():
                pick = rng.integers(0, len(team_items), size=len(team_items))
                sample += [RatedItem(len(sample) + k, team_items[i].team, team_items[i].claim_id, "", "", "",
                                     team_items[i].gold, team_items[i].ratings) for k, i in enumerate(pick)]
            t = _tau(sample, dim, _lite_rows(sample, fraction))
            if not np.isnan(t):
                taus.append(t)
        out["dimensions"][dim] = {"kendall_tau": _tau(items, dim, keep),
                                  "ci": percentile_interval(taus, level=level, resamples=resamples).as_dict()}
    return out


__all__ = ["RULE", "lite_report", "lite_subset"]
