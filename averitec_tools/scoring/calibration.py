"""Calibration and selective prediction of a scored submission (``averitec calibration``).

A submission in any scoring profile's format whose items carry a ``confidence`` (and
optionally per-label ``probabilities``) is scored with the profile; for top-label
correctness (predicted label == gold label) against ``confidence`` the report holds
accuracy, Brier, ECE, MCE (reliability-diagram data), the risk–coverage curve, AURC,
E-AURC, selective accuracy at a threshold, coverage at a target risk, risk at a target
coverage, abstention-aware label metrics, bootstrap confidence intervals and, with
``plot_dir``, ``reliability_diagram.png`` and ``risk_coverage.png``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from averitec_tools.errors import UserError
from averitec_tools.scoring._calibration_inputs import (
    check_gold,
    check_settings,
    confidence_claims,
    prescan,
)
from averitec_tools.scoring.profiles import DEFAULT_PROFILE, score_with_profile

if TYPE_CHECKING:
    from averitec_tools.scoring.profiles.base import ClaimScore

#: The files ``plot_dir`` receives.
PLOT_FILES = ("reliability_diagram.png", "risk_coverage.png")


@dataclass(frozen=True)
class CalibrationReport:
    """Everything ``averitec calibration`` prints; :meth:`to_dict` is its ``--json`` object.

    Scalar fields are the headline figures over the ``n`` claims analysed; the mapping
    fields are the JSON sub-objects of the same name (see docs/calibration.md).
    """

    profile: str
    signature: str
    profile_signature: str
    predictions: str
    references: str
    n: int
    n_claims: int
    n_missing_confidence_dropped: int
    n_abstentions_excluded: int
    accuracy: float
    brier: float
    ece: float
    mce: float
    aurc: float
    e_aurc: float
    oracle_aurc: float
    mean_confidence: float
    selective: dict[str, Any]
    coverage_at_risk: dict[str, Any]
    risk_at_coverage: dict[str, Any]
    multiclass: dict[str, Any] | None
    abstention: dict[str, Any]
    reliability: dict[str, Any]
    risk_coverage: dict[str, Any]
    ci: dict[str, Any] | None
    plots: dict[str, str] | None
    #: The ``metrics`` asked for, by their string form (see :func:`confidence_metrics`).
    metrics: dict[str, float] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready report (fields in declaration order)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def _multiclass(
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


def _intervals(
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


def _headline(kept: Sequence[ClaimScore], conf: Any, correct: Any, *, n_bins: int, strategy: str) -> dict[str, float]:
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


def calibration_report(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    profile: str = DEFAULT_PROFILE,
    n_bins: int = 15,
    strategy: Literal["uniform", "quantile"] = "uniform",
    abstain_labels: Sequence[str] | None = None,
    abstention_mode: Literal["class", "abstain"] = "class",
    drop_missing_confidence: bool = False,
    threshold: float = 0.60,
    target_risk: float = 0.10,
    target_coverage: float = 0.80,
    n_resamples: int = 1000,
    ci_method: Literal["percentile", "BCa", "basic"] = "percentile",
    confidence_level: float = 0.95,
    seed: int = 0,
    plot_dir: str | os.PathLike[str] | None = None,
    metrics: Sequence[str] = (),
) -> CalibrationReport:
    """Score ``predictions`` with ``profile`` and measure how well its confidences are calibrated.

    Args:
        predictions: Submission file; items carry a ``confidence`` in [0, 1].
        references: Gold file.
        profile: Scoring profile that reads the files.
        n_bins: Calibration bins.
        strategy: Equal-width (``uniform``) or equal-mass (``quantile``) bins.
        abstain_labels: Labels meaning "cannot decide" (default:
            :data:`averitec_tools.metrics.abstention.DEFAULT_ABSTAIN_LABELS`).
        abstention_mode: ``class``: abstain labels are an ordinary class; ``abstain``:
            claims predicted with one are left out of the calibration analysis.
        drop_missing_confidence: Leave out claims without a confidence instead of failing.
        threshold: Confidence threshold for selective accuracy (R2VC's τ_cal).
        target_risk: Report the largest coverage with risk ≤ this.
        target_coverage: Report the risk at this coverage.
        n_resamples: Bootstrap resamples for the intervals; 0 disables them.
        ci_method: Bootstrap interval method.
        confidence_level: Level of the intervals.
        seed: Bootstrap seed.
        plot_dir: Write :data:`PLOT_FILES` here (checked before anything is scored).
        metrics: More metrics of confidence against correctness by their registry string
            form (e.g. ``ece(n_bins=10,strategy=quantile)``, ``risk-at-coverage(coverage=0.5)``),
            computed on the same claims; reported under ``metrics``.

    Raises:
        UserError: Bad settings, a confidence or probability out of range, a claim without
            gold label or confidence, or any input error of the profile.

    Example:
        >>> calibration_report(predictions="p.json", references="g.json", n_bins=0)
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: --n-bins must be ≥ 1, got 0
    """
    import numpy as np

    from averitec_tools.metrics.abstention import (
        DEFAULT_ABSTAIN_LABELS,
        abstention_mask,
        label_scores,
    )
    from averitec_tools.metrics.ece import reliability_diagram
    from averitec_tools.metrics.selective import risk_coverage_curve, selective_accuracy
    from averitec_tools.metrics.signature import render_signature

    predictions, references = str(predictions), str(references)
    check_settings(n_bins=n_bins, threshold=threshold, target_risk=target_risk, target_coverage=target_coverage,
                   n_resamples=n_resamples, confidence_level=confidence_level)
    prescan(predictions)
    extra = confidence_metrics(metrics)
    if plot_dir:
        from averitec_tools.outputs import check_output_dir

        check_output_dir(plot_dir, option="--plot", inputs=[predictions, references], files=PLOT_FILES)
    result = score_with_profile(profile=profile, predictions=predictions, references=references)
    claims = list(result.per_claim)
    check_gold(claims, references)
    abstain = tuple(abstain_labels) if abstain_labels else DEFAULT_ABSTAIN_LABELS

    gold_all = [str(c.gold_label) for c in claims]
    pred_all = [c.pred_label for c in claims]
    abstention = {
        mode: label_scores(
            gold=gold_all, predictions=pred_all, mode=mode, abstain_labels=abstain,  # type: ignore[arg-type]
            labels=list(result.labels) or None,
        ).to_dict()
        for mode in ("class", "abstain")
    }

    n_excluded_abstain = 0
    if abstention_mode == "abstain":
        mask = abstention_mask(predictions=pred_all, abstain_labels=abstain)
        n_excluded_abstain = int(mask.sum())
        claims = [c for c, abstained in zip(claims, mask, strict=True) if not abstained]
        if not claims:
            raise UserError(
                f"{predictions}: every prediction is an abstain label; nothing is left to "
                "calibrate in --abstention-mode abstain"
            )
    kept, n_missing = confidence_claims(claims, predictions=predictions, drop_missing=drop_missing_confidence)
    conf = np.array([float(c.confidence) for c in kept if c.confidence is not None], dtype=np.float64)
    correct = np.array([c.pred_label == c.gold_label for c in kept], dtype=bool)

    diagram = reliability_diagram(confidences=conf, correct=correct, n_bins=n_bins, strategy=strategy)
    curve = risk_coverage_curve(confidences=conf, correct=correct)
    sel = selective_accuracy(confidences=conf, correct=correct, threshold=threshold)
    at_risk = curve.point_for_risk(target_risk)
    at_cov = curve.point_for_coverage(target_coverage)

    # The leading bare "calibration" (no key) is kept: it is part of published signatures.
    signature = "calibration|" + render_signature([
        ("profile", profile), ("correct", "pred_label==gold_label"), ("bins", f"{n_bins}-{strategy}"),
        ("abstention", abstention_mode), ("coverage", "confidence>=tau"), ("aurc", "distinct-thresholds"),
        ("ci", f"{ci_method}-{n_resamples}-seed{seed}-{confidence_level:g}"),
    ])
    plots = None
    if plot_dir:
        from averitec_tools.metrics.plots import plot_reliability_diagram, plot_risk_coverage

        out = Path(plot_dir)
        name = Path(predictions).name
        plots = {
            "reliability_diagram": str(plot_reliability_diagram(
                diagram=diagram, path=out / "reliability_diagram.png", title=f"Reliability diagram: {name}"
            )),
            "risk_coverage": str(plot_risk_coverage(
                curve=curve, path=out / "risk_coverage.png", title=f"Risk–coverage: {name}"
            )),
        }
    return CalibrationReport(
        profile=profile,
        signature=signature,
        profile_signature=result.signature,
        predictions=predictions,
        references=references,
        n=int(conf.size),
        n_claims=len(result.per_claim),
        n_missing_confidence_dropped=n_missing,
        n_abstentions_excluded=n_excluded_abstain,
        **_headline(kept, conf, correct, n_bins=n_bins, strategy=strategy),
        oracle_aurc=curve.oracle_aurc,
        mean_confidence=float(conf.mean()),
        selective={
            "threshold": sel.threshold,
            "n_covered": sel.n_covered,
            "coverage": sel.coverage,
            "accuracy": sel.accuracy,
            "risk": sel.risk,
        },
        coverage_at_risk={
            "target_risk": target_risk,
            "coverage": 0.0 if at_risk is None else at_risk.coverage,
            "risk": None if at_risk is None else at_risk.risk,
            "threshold": None if at_risk is None else at_risk.threshold,
        },
        risk_at_coverage={
            "target_coverage": target_coverage,
            "risk": at_cov.risk,
            "coverage": at_cov.coverage,
            "threshold": at_cov.threshold,
        },
        multiclass=_multiclass(kept, result.labels, predictions=predictions, n_bins=n_bins, strategy=strategy),
        abstention={"abstain_labels": list(abstain), **abstention},
        reliability=diagram.to_dict(),
        risk_coverage=curve.to_dict(),
        ci=_intervals(conf, correct, n_bins=n_bins, strategy=strategy, n_resamples=n_resamples,
                      confidence_level=confidence_level, ci_method=ci_method, seed=seed) if n_resamples > 0 else None,
        plots=plots,
        metrics={spec: float(metric(confidences=conf, correct=correct)) for spec, metric in extra.items()},
    )


__all__ = ["PLOT_FILES", "CalibrationReport", "calibration_report", "confidence_metrics", "headline_metrics"]
