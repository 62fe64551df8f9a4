"""The figures of a calibration report computed from confidences and correctness: the
headline metrics (through the registry), the selective-prediction objects, multiclass
Brier and classwise ECE, bootstrap intervals and the plots (see
:mod:`averitec_tools.scoring.calibration`)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from averitec_tools.errors import UserError

if TYPE_CHECKING:
    from averitec_tools.scoring.profiles.base import ClaimScore


def multiclass_figures(
    claims: Sequence[ClaimScore], labels: Sequence[str], *, predictions: str, n_bins: int, strategy: str
) -> dict[str, Any] | None:
    """Multiclass Brier and classwise ECE when every claim has ``probabilities``.

    When only some claims have them, says so (``skipped``) instead of silently omitting it.
    """
    n_with = sum(c.probabilities is not None for c in claims)
    if not claims or n_with == 0:
        return None
    if n_with < len(claims):
        return {"skipped": f"only {n_with} of {len(claims)} claims have 'probabilities'"}
    from averitec_tools.metrics.brier import multiclass_brier_score
    from averitec_tools.metrics.ece import classwise_calibration_error

    classes = list(labels)
    for c in claims:
        for key in c.probabilities or {}:
            if key not in classes:
                classes.append(key)
    for c in claims:
        if c.gold_label not in classes:
            classes.append(str(c.gold_label))
    rows = []
    for c in claims:
        probs = c.probabilities or {}
        try:
            row = [float(probs.get(k, 0.0)) for k in classes]
        except (TypeError, ValueError):
            raise UserError(
                f"{predictions}: claim {c.claim_id!r}: probabilities must be numbers, got {dict(probs)!r}"
            ) from None
        total = sum(row)
        if any(not 0.0 <= p <= 1.0 for p in row) or not abs(total - 1.0) <= 1e-6:  # NaN fails
            raise UserError(
                f"{predictions}: claim {c.claim_id!r}: probabilities must be in [0, 1] and sum "
                f"to 1 (sum is {total:.6g})"
            )
        rows.append(row)
    gold = [str(c.gold_label) for c in claims]
    return {
        "classes": classes,
        "brier": multiclass_brier_score(probabilities=rows, labels_true=gold, classes=classes),
        "brier_scaled_by_half": multiclass_brier_score(
            probabilities=rows, labels_true=gold, classes=classes, scale_by_half=True
        ),
        "ece_classwise": classwise_calibration_error(
            probabilities=rows, labels_true=gold, classes=classes, n_bins=n_bins,
            strategy=strategy,  # type: ignore[arg-type]
        ),
    }


def intervals(
    conf: Any, correct: Any, *, n_bins: int, strategy: str, n_resamples: int, confidence_level: float,
    ci_method: str, seed: int,
) -> dict[str, Any]:
    """Bootstrap CIs of the headline numbers (all statistics vectorised over resamples)."""
    import numpy as np

    from averitec_tools.metrics.binning import calibration_errors_batched
    from averitec_tools.metrics.bootstrap import bootstrap_ci
    from averitec_tools.metrics.brier import brier_batched
    from averitec_tools.metrics.selective import aurc_batched

    def ece(c: Any, ok: Any, axis: int = -1) -> Any:
        return calibration_errors_batched(c, ok, n_bins=n_bins, strategy=strategy)[0]  # type: ignore[arg-type]

    def mce(c: Any, ok: Any, axis: int = -1) -> Any:
        return calibration_errors_batched(c, ok, n_bins=n_bins, strategy=strategy)[1]  # type: ignore[arg-type]

    statistics: dict[str, Any] = {
        "accuracy": lambda c, ok, axis=-1: np.mean(ok, axis=axis),
        "brier": brier_batched,
        "ece": ece,
        "mce": mce,
        "aurc": lambda c, ok, axis=-1: aurc_batched(c, ok)[0],
        "e_aurc": lambda c, ok, axis=-1: aurc_batched(c, ok)[1],
    }
    data = [np.asarray(conf, dtype=np.float64), np.asarray(correct, dtype=np.float64)]
    return {
        name: bootstrap_ci(
            data=data, statistic=stat, vectorized=True, n_resamples=n_resamples,
            confidence_level=confidence_level, method=ci_method, seed=seed,  # type: ignore[arg-type]
        ).to_dict()
        for name, stat in statistics.items()
    }


def headline_metrics(*, n_bins: int, strategy: str) -> dict[str, str]:
    """The report's headline figures of confidence against correctness: JSON key → the
    registry metric (parse form) that computes it.

    Example:
        >>> headline_metrics(n_bins=15, strategy="uniform")["ece"]
        'ece(n_bins=15,strategy=uniform)'
    """
    binned = f"(n_bins={n_bins},strategy={strategy})"
    return {"brier": "brier", "ece": f"ece{binned}", "mce": f"mce{binned}", "aurc": "aurc", "e_aurc": "e-aurc"}


def headline(kept: Sequence[ClaimScore], conf: Any, correct: Any, *, n_bins: int, strategy: str) -> dict[str, float]:
    """Accuracy and :func:`headline_metrics`, each computed by its registry metric."""
    from averitec_tools.metrics.base import parse_metric
    from averitec_tools.metrics.keys import report_key
    from averitec_tools.metrics.label_metrics import LABEL_ACCURACY

    out = {report_key(LABEL_ACCURACY): LABEL_ACCURACY(gold=[c.gold_label for c in kept],
                                                      predicted=[c.pred_label for c in kept])}
    for key, spec in headline_metrics(n_bins=n_bins, strategy=strategy).items():
        out[key] = float(parse_metric(spec)(confidences=conf, correct=correct))
    return out


def confidence_metrics(specs: Sequence[str]) -> dict[str, Any]:
    """Registry metrics by their string form, each checked to take confidences and correctness.

    Example:
        >>> sorted(confidence_metrics(["ece(n_bins=10)", "aurc"]))
        ['aurc', 'ece(n_bins=10)']
        >>> confidence_metrics(["brier-multiclass"])
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: --metric brier-multiclass: not a metric of confidence against correctness (those are: aurc, brier, coverage-at-risk, e-aurc, ece, mce, risk-at-coverage)
    """
    from averitec_tools.metrics import all_metrics
    from averitec_tools.metrics.base import METRICS, ConfidenceMetric, metric_spec, parse_metric

    names = [n for n in all_metrics() if isinstance(METRICS.get(n), ConfidenceMetric)]
    chosen: dict[str, Any] = {}
    for spec in specs:
        try:
            metric = parse_metric(spec)
        except UserError as exc:
            raise UserError(f"--metric {spec}: {exc.message}", hint=exc.hint) from None
        if not isinstance(metric, ConfidenceMetric):
            raise UserError(f"--metric {spec}: not a metric of confidence against correctness "
                            f"(those are: {', '.join(names)})")
        chosen[metric_spec(metric)] = metric
    return chosen


def selective_figures(
    conf: Any, correct: Any, curve: Any, *, threshold: float, target_risk: float, target_coverage: float
) -> dict[str, dict[str, Any]]:
    """The ``selective``, ``coverage_at_risk`` and ``risk_at_coverage`` report objects."""
    from averitec_tools.metrics.selective import selective_accuracy

    sel = selective_accuracy(confidences=conf, correct=correct, threshold=threshold)
    at_risk = curve.point_for_risk(target_risk)
    at_cov = curve.point_for_coverage(target_coverage)
    return {
        "selective": {"threshold": sel.threshold, "n_covered": sel.n_covered, "coverage": sel.coverage,
                      "accuracy": sel.accuracy, "risk": sel.risk},
        "coverage_at_risk": {
            "target_risk": target_risk,
            "coverage": 0.0 if at_risk is None else at_risk.coverage,
            "risk": None if at_risk is None else at_risk.risk,
            "threshold": None if at_risk is None else at_risk.threshold,
        },
        "risk_at_coverage": {
            "target_coverage": target_coverage, "risk": at_cov.risk, "coverage": at_cov.coverage,
            "threshold": at_cov.threshold,
        },
    }


def write_plots(plot_dir: str | os.PathLike[str], predictions: str, diagram: Any, curve: Any) -> dict[str, str]:
    """Write :data:`PLOT_FILES` into ``plot_dir``; their paths."""
    from averitec_tools.metrics.plots import plot_reliability_diagram, plot_risk_coverage

    out, name = Path(plot_dir), Path(predictions).name
    return {
        "reliability_diagram": str(plot_reliability_diagram(
            diagram=diagram, path=out / "reliability_diagram.png", title=f"Reliability diagram: {name}"
        )),
        "risk_coverage": str(plot_risk_coverage(
            curve=curve, path=out / "risk_coverage.png", title=f"Risk–coverage: {name}"
        )),
    }


__all__ = [
    "confidence_metrics", "headline", "headline_metrics", "intervals", "multiclass_figures", "selective_figures",
    "write_plots",
]
