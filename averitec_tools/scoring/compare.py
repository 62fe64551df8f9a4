"""Paired significance tests of two submissions on the same claims (``averitec compare``).

Both submissions are scored with the same profile on the same references; claims are
aligned by id. For every metric that is a mean of per-claim values (the profile's per-claim
``values``) the per-claim values are resampled; accuracy and macro-F1 are recomputed from
the resampled (gold, predicted) label pairs. For each metric the result holds A, B, the
difference A − B with its paired-bootstrap confidence interval, the p-value of the chosen
test (paired bootstrap or approximate randomisation), the effect size, and whether the
difference is significant at ``alpha``. No correction for multiple comparisons is applied.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from averitec_tools.errors import UserError
from averitec_tools.scoring.profiles import DEFAULT_PROFILE, score_with_profile

if TYPE_CHECKING:
    from averitec_tools.metrics.paired import PairedTestResult
    from averitec_tools.scoring.profiles.base import ClaimScore, ProfileResult

def _label_metrics() -> dict[str, Any]:
    """The label metrics recomputed from resampled (gold, predicted) pairs, by report key."""
    from averitec_tools.metrics.keys import report_key
    from averitec_tools.metrics.label_metrics import LABEL_ACCURACY, LABEL_MACRO_F1

    return {report_key(m): m for m in (LABEL_ACCURACY, LABEL_MACRO_F1)}


#: Their keys (``accuracy``, ``macro_f1``; see :mod:`averitec_tools.metrics.keys`).
LABEL_METRICS: tuple[str, ...] = tuple(_label_metrics())


def check_metric_names(profile: str, names: Sequence[str] | None) -> None:
    """Reject an unknown --metric of a profile that declares its per-claim metrics, before
    anything is scored."""
    from averitec_tools.metrics.keys import json_key
    from averitec_tools.registry import Registry
    from averitec_tools.scoring.profiles import get_profile

    declared = get_profile(profile).per_claim_metrics
    if not names or not declared:
        return
    keys = (*declared, *LABEL_METRICS)
    known = Registry.of_names(f"metric of profile {profile!r}", keys)
    for name in names:
        known.get(json_key(name, keys))



@dataclass(frozen=True)
class Comparison:
    """Everything ``averitec compare`` prints; :meth:`to_dict` is its ``--json`` object.

    ``metrics`` maps each compared metric to its paired test; ``skipped`` names the
    metrics that could not be compared, with why.
    """

    profile: str
    signature: str
    a: str
    b: str
    references: str
    n: int
    test: str
    n_resamples: int
    seed: int
    alpha: float
    metrics: dict[str, PairedTestResult]
    skipped: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready report (fields in declaration order)."""
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        out["metrics"] = {name: res.to_dict() for name, res in self.metrics.items()}
        return out


def _align(res_a: ProfileResult, res_b: ProfileResult, path_a: str, path_b: str) -> list[tuple[ClaimScore, ClaimScore]]:
    by_id_b = {repr(c.claim_id): c for c in res_b.per_claim}
    ids_a = {repr(c.claim_id) for c in res_a.per_claim}
    for c in res_a.per_claim:
        if repr(c.claim_id) not in by_id_b:
            raise UserError(f"{path_b}: claim {c.claim_id!r} (present in {path_a}) is missing")
    for c in res_b.per_claim:
        if repr(c.claim_id) not in ids_a:
            raise UserError(f"{path_a}: claim {c.claim_id!r} (present in {path_b}) is missing")
    pairs = []
    for c in res_a.per_claim:
        other = by_id_b[repr(c.claim_id)]
        if c.gold_label != other.gold_label:
            raise UserError(
                f"claim {c.claim_id!r}: the profile gives different gold labels for {path_a} and "
                f"{path_b} ({c.gold_label!r} vs {other.gold_label!r})"
            )
        pairs.append((c, other))
    return pairs


def _value_keys(pairs: Sequence[tuple[ClaimScore, ClaimScore]]) -> tuple[list[str], dict[str, str]]:
    """Per-claim value keys usable for resampling, and those skipped with the reason.

    A key qualifies when every claim of both systems has a finite number under it.
    """
    import math
    from numbers import Real

    usable: list[str] = []
    skipped: dict[str, str] = {}
    for key in pairs[0][0].values:
        for pair in pairs:
            for claim in pair:
                value = claim.values.get(key)
                if value is None or isinstance(value, bool) or not isinstance(value, Real):
                    skipped[key] = f"claim {claim.claim_id!r} has no numeric per-claim value"
                elif not math.isfinite(float(value)):
                    skipped[key] = f"claim {claim.claim_id!r} has a non-finite per-claim value"
                if key in skipped:
                    break
            if key in skipped:
                break
        else:
            usable.append(key)
    return usable, skipped


def _labels(res_a: ProfileResult, res_b: ProfileResult, gold: Sequence[str]) -> list[str]:
    labels: list[str] = []
    for lab in (*res_a.labels, *res_b.labels, *sorted(set(gold))):
        if lab not in labels:
            labels.append(lab)
    return labels


def _available(
    pairs: Sequence[tuple[ClaimScore, ClaimScore]], res_a: ProfileResult, res_b: ProfileResult
) -> tuple[dict[str, tuple[Any, Any, Any]], dict[str, str]]:
    """Metric → (per-claim data of A, of B, vectorised statistic or ``None`` for the mean),
    and the metrics that cannot be compared, with why: the per-claim values, then the
    label metrics recomputed from resampled (gold, predicted) pairs."""
    from functools import partial

    import numpy as np

    from averitec_tools.metrics.label_codes import encode_label_pairs, macro_f1_of_codes

    available: dict[str, tuple[Any, Any, Any]] = {}
    value_keys, skipped = _value_keys(pairs)
    for key in value_keys:
        available[key] = (
            np.array([float(x.values[key]) for x, _ in pairs]),
            np.array([float(y.values[key]) for _, y in pairs]),
            None,
        )
    if all(x.gold_label is not None for x, _ in pairs):
        gold = [str(x.gold_label) for x, _ in pairs]
        acc_key, f1_key = LABEL_METRICS
        if acc_key not in available:
            available[acc_key] = (
                np.array([x.pred_label == x.gold_label for x, _ in pairs], dtype=np.float64),
                np.array([y.pred_label == y.gold_label for _, y in pairs], dtype=np.float64),
                None,
            )
        if f1_key not in available:
            labels = _labels(res_a, res_b, gold)
            available[f1_key] = (
                encode_label_pairs(gold=gold, predictions=[x.pred_label for x, _ in pairs], labels=labels),
                encode_label_pairs(gold=gold, predictions=[y.pred_label for _, y in pairs], labels=labels),
                partial(macro_f1_of_codes, n_labels=len(labels)),
            )
    else:
        missing = next(x.claim_id for x, _ in pairs if x.gold_label is None)
        for name in LABEL_METRICS:
            skipped[name] = f"claim {missing!r} has no gold label"

    return available, skipped


def compare_submissions(
    *,
    a: str | os.PathLike[str],
    b: str | os.PathLike[str],
    references: str | os.PathLike[str],
    profile: str = DEFAULT_PROFILE,
    metrics: Sequence[str] | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
    test: Literal["bootstrap", "randomization"] = "bootstrap",
    alpha: float = 0.05,
    confidence_level: float = 0.95,
    ci_method: Literal["percentile", "BCa", "basic"] = "percentile",
) -> Comparison:
    """Score ``a`` and ``b`` with ``profile`` and test every metric's difference, paired by claim.

    Args:
        a: Submission of system A; ``b``: of system B; ``references``: the gold file.
        profile: Scoring profile that reads the files.
        metrics: Compare only these (default: every per-claim metric of the profile plus
            accuracy and macro_f1), by JSON key or parse form (``label-accuracy``,
            ``averitec-score(threshold=0.25)``; see :mod:`averitec_tools.metrics.keys`).
        test: Paired bootstrap or approximate randomisation, ``n_resamples`` rounds from ``seed``.
        alpha: Significance level; ``confidence_level``, ``ci_method``: the CI of the difference.

    Raises:
        UserError: Bad settings, an unknown metric (with close names), claims that do not
            align, or any input error of the profile.

    Example:
        >>> compare_submissions(a="a.json", b="b.json", references="g.json", alpha=1.5)
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: --alpha must be in (0, 1), got 1.5
    """
    from averitec_tools.metrics.paired import paired_test

    a, b, references = str(a), str(b), str(references)
    _check_settings(n_resamples=n_resamples, alpha=alpha, confidence_level=confidence_level)
    check_metric_names(profile, metrics)
    res_a = score_with_profile(profile=profile, predictions=a, references=references)
    res_b = score_with_profile(profile=profile, predictions=b, references=references)
    pairs = _align(res_a, res_b, a, b)

    available, skipped = _available(pairs, res_a, res_b)
    results: dict[str, PairedTestResult] = {}
    for name in _wanted(profile, metrics, available, skipped):
        data_a, data_b, stat = available[name]
        results[name] = paired_test(
            a=data_a, b=data_b, statistic=stat, test=test, n_resamples=n_resamples,
            confidence_level=confidence_level, method=ci_method, alpha=alpha, seed=seed,
        )
    signature = _signature(profile=profile, test=test, n_resamples=n_resamples, seed=seed, alpha=alpha,
                           ci_method=ci_method, confidence_level=confidence_level)
    return Comparison(
        profile=profile, signature=signature, a=a, b=b, references=references, n=len(pairs), test=test,
        n_resamples=n_resamples, seed=seed, alpha=alpha, metrics=results, skipped=skipped,
    )


def _check_settings(*, n_resamples: int, alpha: float, confidence_level: float) -> None:
    """Refuse resample counts below 1 and levels outside (0, 1)."""
    if n_resamples < 1:
        raise UserError(f"--n-resamples must be ≥ 1, got {n_resamples}")
    if not 0.0 < alpha < 1.0:
        raise UserError(f"--alpha must be in (0, 1), got {alpha}")
    if not 0.0 < confidence_level < 1.0:
        raise UserError(f"--confidence-level must be in (0, 1), got {confidence_level}")


def _wanted(profile: str, metrics: Sequence[str] | None, available: dict[str, Any],
            skipped: dict[str, str]) -> list[str]:
    """The metrics to test, by JSON key, once each in the order asked (default: every available one).

    Raises:
        UserError: An unknown metric (with close names), or one that cannot be compared.
    """
    from averitec_tools.metrics.keys import json_key
    from averitec_tools.registry import Registry

    names = Registry[str](f"metric of profile {profile!r}")
    for name in (*available, *skipped):
        names.add(name, name)
    wanted = [json_key(name, names) for name in metrics] if metrics else list(available)
    for name in wanted:
        names.get(name)  # UserError with close-name suggestions
        if name in skipped:
            raise UserError(f"metric {name!r} cannot be compared: {skipped[name]}")
    return list(dict.fromkeys(wanted))


def _signature(*, profile: str, test: str, n_resamples: int, seed: int, alpha: float, ci_method: str,
               confidence_level: float) -> str:
    """The comparison's signature (``compare|profile:…|…``)."""
    from averitec_tools.metrics.signature import render_signature

    # The leading bare "compare" (no key) is kept: it is part of published signatures.
    return "compare|" + render_signature([
        ("profile", profile), ("test", test), ("resamples", n_resamples), ("seed", seed), ("alpha", f"{alpha:g}"),
        ("ci", f"{ci_method}-{confidence_level:g}"), ("label_metrics", "recomputed-from-resampled-labels"),
    ])


__all__ = ["Comparison", "compare_submissions"]
