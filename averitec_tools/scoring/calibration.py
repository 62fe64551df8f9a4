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
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from averitec_tools.errors import UserError
from averitec_tools.scoring._calibration_inputs import (
    check_gold,
    check_settings,
    confidence_claims,
    prescan,
)
from averitec_tools.scoring.calibration_figures import (
    confidence_metrics,
    headline,
    headline_metrics,
    intervals,
    multiclass_figures,
    selective_figures,
    write_plots,
)
from averitec_tools.scoring.profiles import DEFAULT_PROFILE, score_with_profile

if TYPE_CHECKING:
    from averitec_tools.scoring.profiles.base import ClaimScore, ProfileResult

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


def _abstention(
    claims: list[ClaimScore], labels: Sequence[str], *, abstain: tuple[str, ...], mode: str, predictions: str
) -> tuple[dict[str, Any], list[ClaimScore], int]:
    """Label scores in both abstention modes, and the claims left to calibrate in ``mode``
    (with how many abstentions were left out)."""
    from averitec_tools.metrics.abstention import abstention_mask, label_scores

    gold_all = [str(c.gold_label) for c in claims]
    pred_all = [c.pred_label for c in claims]
    scores = {
        m: label_scores(
            gold=gold_all, predictions=pred_all, mode=m, abstain_labels=abstain,  # type: ignore[arg-type]
            labels=list(labels) or None,
        ).to_dict()
        for m in ("class", "abstain")
    }
    if mode != "abstain":
        return scores, claims, 0
    mask = abstention_mask(predictions=pred_all, abstain_labels=abstain)
    kept = [c for c, abstained in zip(claims, mask, strict=True) if not abstained]
    if not kept:
        raise UserError(
            f"{predictions}: every prediction is an abstain label; nothing is left to "
            "calibrate in --abstention-mode abstain"
        )
    return scores, kept, int(mask.sum())


def calibration_report(
    *,
    predictions: str | os.PathLike[str],
    references: str | os.PathLike[str],
    profile: str = DEFAULT_PROFILE,
    n_bins: int = 15,
    strategy: Literal["uniform", "quantile"] = "uniform",
    abstain_labels: Sequence[str] | None = None, abstention_mode: Literal["class", "abstain"] = "class",
    drop_missing_confidence: bool = False,
    threshold: float = 0.60, target_risk: float = 0.10, target_coverage: float = 0.80,
    n_resamples: int = 1000, ci_method: Literal["percentile", "BCa", "basic"] = "percentile",
    confidence_level: float = 0.95, seed: int = 0,
    plot_dir: str | os.PathLike[str] | None = None, metrics: Sequence[str] = (),
) -> CalibrationReport:
    """Score ``predictions`` with ``profile`` and measure how well its confidences are calibrated.

    Args:
        predictions: Submission file (items carry a ``confidence`` in [0, 1]); ``references``: gold file.
        profile: Scoring profile that reads the files.
        n_bins: Calibration bins, equal-width (``strategy="uniform"``) or equal-mass (``"quantile"``).
        abstain_labels: Labels meaning "cannot decide" (default ``metrics.abstention.DEFAULT_ABSTAIN_LABELS``);
            ``abstention_mode``: ``class``, an ordinary class, or ``abstain``, claims predicted with one left out.
        drop_missing_confidence: Leave out claims without a confidence instead of failing.
        threshold: Confidence threshold for selective accuracy (R2VC's τ_cal); ``target_risk``: report
            the largest coverage with risk ≤ this; ``target_coverage``: report the risk at this coverage.
        n_resamples: Bootstrap resamples for the intervals (0: none), with ``ci_method``,
            ``confidence_level`` and ``seed``.
        plot_dir: Write :data:`PLOT_FILES` here (checked before anything is scored).
        metrics: More metrics of confidence against correctness by their registry string form
            (``ece(n_bins=10,strategy=quantile)``), on the same claims; reported under ``metrics``.

    Raises:
        UserError: Bad settings, a confidence or probability out of range, a claim without
            gold label or confidence, or any input error of the profile.

    Example:
        >>> calibration_report(predictions="p.json", references="g.json", n_bins=0)
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: --n-bins must be ≥ 1, got 0
    """
    predictions, references = str(predictions), str(references)
    extra = _checked_settings(predictions, references, n_bins=n_bins, threshold=threshold, target_risk=target_risk,
                              target_coverage=target_coverage, n_resamples=n_resamples,
                              confidence_level=confidence_level, metrics=metrics, plot_dir=plot_dir)
    scored = _scored_claims(profile=profile, predictions=predictions, references=references,
                            abstain_labels=abstain_labels, mode=abstention_mode, drop_missing=drop_missing_confidence)
    bins: dict[str, Any] = {"n_bins": n_bins, "strategy": strategy}
    boot: dict[str, Any] = {"n_resamples": n_resamples, "ci_method": ci_method, "confidence_level": confidence_level,
                            "seed": seed}
    return CalibrationReport(
        profile=profile, signature=_signature(profile=profile, abstention_mode=abstention_mode, **bins, **boot),
        profile_signature=scored.result.signature, predictions=predictions, references=references,
        n_claims=len(scored.result.per_claim), n_missing_confidence_dropped=scored.n_missing,
        n_abstentions_excluded=scored.n_abstentions, abstention=scored.abstention,
        **_figures(scored.kept, scored.result.labels, predictions=predictions, threshold=threshold,
                   target_risk=target_risk, target_coverage=target_coverage, plot_dir=plot_dir, extra=extra,
                   **bins, **boot),
    )


class _ScoredClaims(NamedTuple):
    """The profile's result and the claims left to calibrate, with what was left out."""

    result: ProfileResult
    kept: list[ClaimScore]
    #: The report's ``abstention`` object (labels, and label scores in both modes).
    abstention: dict[str, Any]
    n_abstentions: int
    n_missing: int


def _scored_claims(*, profile: str, predictions: str, references: str, abstain_labels: Sequence[str] | None,
                   mode: str, drop_missing: bool) -> _ScoredClaims:
    """Score with ``profile``; leave out abstentions (in ``abstain`` mode) and, if asked, claims without
    a confidence."""
    from averitec_tools.metrics.abstention import DEFAULT_ABSTAIN_LABELS

    result = score_with_profile(profile=profile, predictions=predictions, references=references)
    claims = list(result.per_claim)
    check_gold(claims, references)
    abstain = tuple(abstain_labels) if abstain_labels else DEFAULT_ABSTAIN_LABELS
    scores, claims, n_abstentions = _abstention(claims, result.labels, abstain=abstain, mode=mode,
                                                predictions=predictions)
    kept, n_missing = confidence_claims(claims, predictions=predictions, drop_missing=drop_missing)
    return _ScoredClaims(result, kept, {"abstain_labels": list(abstain), **scores}, n_abstentions, n_missing)


def _checked_settings(predictions: str, references: str, *, n_bins: int, threshold: float, target_risk: float,
                      target_coverage: float, n_resamples: int, confidence_level: float, metrics: Sequence[str],
                      plot_dir: str | os.PathLike[str] | None) -> dict[str, Any]:
    """Refuse bad settings, a malformed submission or an unusable ``plot_dir`` before scoring.

    Returns the extra ``metrics`` by their string form (see :func:`confidence_metrics`).
    """
    check_settings(n_bins=n_bins, threshold=threshold, target_risk=target_risk, target_coverage=target_coverage,
                   n_resamples=n_resamples, confidence_level=confidence_level)
    prescan(predictions)
    extra = confidence_metrics(metrics)
    if plot_dir:
        from averitec_tools.outputs import check_output_dir

        check_output_dir(plot_dir, option="--plot", inputs=[predictions, references], files=PLOT_FILES)
    return extra


def _signature(*, profile: str, n_bins: int, strategy: str, abstention_mode: str, ci_method: str,
               n_resamples: int, seed: int, confidence_level: float) -> str:
    """The report's signature (``calibration|profile:…|…``)."""
    from averitec_tools.metrics.signature import render_signature

    # The leading bare "calibration" (no key) is kept: it is part of published signatures.
    return "calibration|" + render_signature([
        ("profile", profile), ("correct", "pred_label==gold_label"), ("bins", f"{n_bins}-{strategy}"),
        ("abstention", abstention_mode), ("coverage", "confidence>=tau"), ("aurc", "distinct-thresholds"),
        ("ci", f"{ci_method}-{n_resamples}-seed{seed}-{confidence_level:g}"),
    ])


def _figures(kept: list[ClaimScore], labels: Sequence[str], *, predictions: str, n_bins: int,
             strategy: Literal["uniform", "quantile"], threshold: float, target_risk: float,
             target_coverage: float, n_resamples: int, ci_method: Literal["percentile", "BCa", "basic"],
             confidence_level: float, seed: int, plot_dir: str | os.PathLike[str] | None,
             extra: dict[str, Any]) -> dict[str, Any]:
    """The report's figures over the claims ``kept`` (its fields from ``n`` on, by name).

    The plots are written after every figure that can fail, so a refused input leaves none.
    """
    import numpy as np

    from averitec_tools.metrics.ece import reliability_diagram
    from averitec_tools.metrics.selective import risk_coverage_curve

    conf = np.array([float(c.confidence) for c in kept if c.confidence is not None], dtype=np.float64)
    correct = np.array([c.pred_label == c.gold_label for c in kept], dtype=bool)
    diagram = reliability_diagram(confidences=conf, correct=correct, n_bins=n_bins, strategy=strategy)
    curve = risk_coverage_curve(confidences=conf, correct=correct)
    return dict(
        n=int(conf.size),
        **headline(kept, conf, correct, n_bins=n_bins, strategy=strategy),
        oracle_aurc=curve.oracle_aurc,
        mean_confidence=float(conf.mean()),
        **selective_figures(conf, correct, curve, threshold=threshold, target_risk=target_risk, target_coverage=target_coverage),
        multiclass=multiclass_figures(kept, labels, predictions=predictions, n_bins=n_bins, strategy=strategy),
        reliability=diagram.to_dict(),
        risk_coverage=curve.to_dict(),
        ci=intervals(conf, correct, n_bins=n_bins, strategy=strategy, n_resamples=n_resamples,
                      confidence_level=confidence_level, ci_method=ci_method, seed=seed) if n_resamples > 0 else None,
        plots=write_plots(plot_dir, predictions, diagram, curve) if plot_dir else None,
        metrics={spec: float(metric(confidences=conf, correct=correct)) for spec, metric in extra.items()},
    )


__all__ = ["PLOT_FILES", "calibration_report", "confidence_metrics", "headline_metrics"]
