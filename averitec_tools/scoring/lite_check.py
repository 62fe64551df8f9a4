"""Does the lite subset rank *your* submissions as the full set does? (Kendall τ with a CI.)

The Ev2R study's public data holds no team's full prediction file, so the lite rule
(:func:`~averitec_tools.scoring.meta_eval.lite.lite_subset`: stratified by gold label,
smallest ``sha256("averitec-lite:" + id)`` within a label) cannot be checked on the rated
teams here. Whoever holds several submissions on the same claims (organisers, a lab with
its system variants) can check it: each file is scored once with the profile, the
systems are ranked by a per-claim metric's mean over all claims and over the subset, and
τ-b between the two rankings is reported, with a percentile interval from resampling the
claims (the subset's members among the resampled claims give the lite means).

    >>> import numpy as np
    >>> values = np.array([[1.0, 1.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    >>> ranking_agreement(values=values, lite=np.array([True, True, False, False]), resamples=0)["kendall_tau"]
    1.0
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.errors import UserError
from averitec_tools.scoring.meta_eval.lite import RULE, lite_subset
from averitec_tools.scoring.meta_eval.stats import kendall, percentile_interval

DEFAULT_METRIC = "averitec_score@0.25"  # the 2024 leaderboard's "AVeriTeC Score" (λ = 0.25)


def ranking_agreement(*, values: np.ndarray, lite: np.ndarray, resamples: int = 1000, level: float = 0.95,
                      seed: int = 0) -> dict[str, Any]:
    """τ-b between the systems' full and lite means of ``values`` (systems × claims), with its interval.

    τ is ``None`` when every system ties in one ranking; the interval uses the resamples
    where τ is defined (``ci.defined`` of them) and is ``None`` when none is.
    """
    full, sub = values.mean(1), values[:, lite].mean(1)
    rng = np.random.default_rng(seed)
    taus = []
    for _ in range(resamples):
        idx = np.asarray(rng.integers(0, values.shape[1], size=values.shape[1]))
        kept = idx[lite[idx]]
        if len(kept):
            t = kendall(x=values[:, idx].mean(1).tolist(), y=values[:, kept].mean(1).tolist())
            if not np.isnan(t):
                taus.append(t)
    ci: dict[str, Any] = dict(percentile_interval(taus, level=level, resamples=resamples).as_dict())
    ci.update({k: None for k in ("low", "high") if np.isnan(ci[k])}, defined=len(taus))  # strict JSON: no NaN
    tau = kendall(x=full.tolist(), y=sub.tolist())
    return {"kendall_tau": None if np.isnan(tau) else tau, "full": full.tolist(), "lite": sub.tolist(), "ci": ci}


def _matrix(results: Sequence[Any], paths: Sequence[str], metric: str) -> tuple[np.ndarray, list[tuple[Any, str]]]:
    """Systems × claims values of ``metric``, the claims in the first file's order, every file aligned to it."""
    first = results[0].per_claim
    claims = [(c.claim_id, c.gold_label) for c in first]
    order = {repr(c.claim_id): i for i, c in enumerate(first)}
    rows = []
    for res, path in zip(results, paths, strict=True):
        row = np.full(len(first), np.nan)
        for c in res.per_claim:
            if repr(c.claim_id) not in order:
                raise UserError(f"{path}: claim {c.claim_id!r} is not in {paths[0]}")
            value = c.values.get(metric)
            if value is None or isinstance(value, bool) or not np.isfinite(float(value)):
                known = ", ".join(sorted(k for k, v in c.values.items() if isinstance(v, int | float)))
                raise UserError(f"{path}: claim {c.claim_id!r} has no numeric {metric!r}", hint=f"per-claim metrics: {known}")
            row[order[repr(c.claim_id)]] = float(value)
        missing = [claims[i][0] for i in np.flatnonzero(np.isnan(row))]
        if missing:
            raise UserError(f"{path}: claim {missing[0]!r} (present in {paths[0]}) is missing")
        rows.append(row)
    return np.array(rows), claims


#: The lite subset's size unless one is given (at most the claim count).
DEFAULT_SIZE = 100


def lite_check(*, references: str | os.PathLike[str], submissions: Sequence[str | os.PathLike[str]], size: int | None = None,
               profile: str = "averitec2024", metric: str = DEFAULT_METRIC, resamples: int = 1000,
               level: float = 0.95, seed: int = 0) -> dict[str, Any]:
    """Score ``submissions`` against ``references`` and compare their full and lite rankings
    (``size``: the lite subset's claims; ``None``: min(100, the claim count)).

    Raises:
        UserError: fewer than 3 submissions, a bad size, a metric the profile has no
            per-claim value for, claims that do not align, or any input error of the profile.
    """
    from averitec_tools.scoring.profiles import score_with_profile

    paths = [str(p) for p in submissions]
    if len(paths) < 3:
        raise UserError(f"a ranking check needs at least 3 submissions, got {len(paths)}")
    if size is not None and size < 1:  # before any scoring; the upper bound (the claim count) is checked by lite_subset
        raise UserError(f"lite subset size must be at least 1, got {size}")
    results = [score_with_profile(profile=profile, predictions=p, references=str(references)) for p in paths]
    values, claims = _matrix(results, paths, metric)
    size = min(DEFAULT_SIZE, len(claims)) if size is None else size
    chosen = {repr(cid) for cid in lite_subset(claims=claims, size=size)}
    lite = np.array([repr(cid) in chosen for cid, _ in claims])
    out = ranking_agreement(values=values, lite=lite, resamples=resamples, level=level, seed=seed)
    return {"rule": RULE, "profile": profile, "metric": metric, "size": int(lite.sum()), "of": len(claims),
            "claim_ids": [cid for cid, _ in claims if repr(cid) in chosen],
            "systems": [{"submission": Path(p).name, "full": f, "lite": s}
                        for p, f, s in zip(paths, out.pop("full"), out.pop("lite"), strict=True)],
            **out, "signature": lite_signature(score=results[0].signature, metric=metric, size=size, resamples=resamples,
                                               level=level, seed=seed)}


def lite_signature(*, score: str, metric: str, size: int, resamples: int, level: float, seed: int) -> str:
    """``lite-check|metric:…|size:…|rule:…|resamples:…|level:…|seed:…``, then the score's signature
    embedded as ``score.…`` (the profile that scored the files), then the version.

    Example:
        >>> lite_signature(score="profile:fever|version:0.1.0", metric="strict_score", size=10, resamples=5,
        ...                level=0.95, seed=0).rsplit("|version:", 1)[0]
        'lite-check|metric:strict_score|size:10|rule:averitec-lite-sha256|resamples:5|level:0.95|seed:0|score.profile:fever|score.version:0.1.0'
    """
    from averitec_tools.metrics.signature import embed_signature, render_signature

    return "lite-check|" + render_signature([
        ("metric", metric), ("size", size), ("rule", "averitec-lite-sha256"), ("resamples", resamples),
        ("level", f"{level:g}"), ("seed", seed), *embed_signature("score", score),
    ])


__all__ = ["DEFAULT_METRIC", "lite_check", "ranking_agreement"]
