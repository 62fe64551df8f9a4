"""Reliability-diagram and risk–coverage PNGs (matplotlib, Agg backend, imported lazily).

Both functions write the file atomically (a temporary file renamed into place), so an
interrupted run never leaves a partial PNG.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from averitec_tools.jsonio import atomic_writer
from averitec_tools.metrics.ece import ReliabilityDiagram
from averitec_tools.metrics.selective import RiskCoverageCurve

#: Claims below which the risk–coverage curve is drawn faded (risk of 1–9 claims is noise).
MIN_CLAIMS_FOR_RISK = 10


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)  # headless: never opens a window
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: str | os.PathLike[str]) -> Path:
    target = Path(path)
    with atomic_writer(target, "wb") as fh:
        fig.savefig(fh, format="png", dpi=120, bbox_inches="tight")
    return target


def plot_reliability_diagram(
    *, diagram: ReliabilityDiagram, path: str | os.PathLike[str], title: str = "Reliability diagram"
) -> Path:
    """Write a reliability diagram PNG: per-bin accuracy vs confidence, with a count histogram.

    Bars show each bin's accuracy, a red line its mean confidence and a red hatched box the
    gap between the two; the diagonal is perfect calibration. The lower panel shows
    how many predictions fall in each bin.

    Args:
        diagram: From :func:`averitec_tools.metrics.ece.reliability_diagram`.
        path: Output ``.png`` path (parent directories are created).
        title: Figure title.

    Returns:
        The path written.

    Example:
        >>> import tempfile, pathlib
        >>> from averitec_tools.metrics.ece import reliability_diagram
        >>> d = reliability_diagram(confidences=[0.2, 0.7, 0.9], correct=[0, 1, 1], n_bins=5)
        >>> p = plot_reliability_diagram(diagram=d, path=pathlib.Path(tempfile.mkdtemp()) / "r.png")
        >>> p.read_bytes()[:4] == b"\\x89PNG"
        True
    """
    plt = _pyplot()
    fig, (ax, ax_hist) = plt.subplots(
        2, 1, figsize=(7.5, 6.5), sharex=True, gridspec_kw={"height_ratios": [3, 1], "hspace": 0.08}
    )
    try:
        _draw_bins(ax, diagram)
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.set_ylabel("accuracy")
        ax.set_title(title)
        # Legend and figures sit to the right of the axes, so they never cover a bar.
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8)
        ax.text(
            1.02, 0.55,
            f"ECE = {diagram.ece:.4f}\nMCE = {diagram.mce:.4f}\nN = {diagram.n}\n"
            f"{diagram.n_bins} {diagram.strategy} bins",
            transform=ax.transAxes, va="top", ha="left", fontsize=9,
            bbox={"boxstyle": "round", "facecolor": "white", "edgecolor": "0.8"},
        )
        ax.grid(alpha=0.3)
        counts = [b.count for b in diagram.bins]
        ax_hist.bar([b.lower for b in diagram.bins], counts,
                    width=[b.upper - b.lower for b in diagram.bins], align="edge",
                    color="0.6", edgecolor="white", linewidth=0.8)
        ax_hist.set_xlabel("confidence")
        ax_hist.set_ylabel("count")
        ax_hist.grid(alpha=0.3)
        return _save(fig, path)
    finally:
        plt.close(fig)


def _draw_bins(ax: Any, diagram: ReliabilityDiagram) -> None:
    """The diagonal, then per non-empty bin its accuracy bar, its mean confidence and the gap between."""
    ax.plot([0, 1], [0, 1], linestyle="--", color="0.5", linewidth=1, label="perfect calibration")
    first_gap = True
    for b in diagram.bins:
        width = b.upper - b.lower
        if b.count == 0 or b.accuracy is None or b.confidence is None or width <= 0:
            continue
        ax.bar(b.lower, b.accuracy, width=width, align="edge", color="#4C72B0",
               edgecolor="white", linewidth=0.8, label="accuracy" if first_gap else None)
        lo, hi = sorted((b.accuracy, b.confidence))
        # Hatched outline only, so the gap reads the same over a bar (under-confidence)
        # and above it (over-confidence).
        ax.bar(b.lower, hi - lo, bottom=lo, width=width, align="edge", facecolor="none",
               edgecolor="#C44E52", hatch="///", linewidth=0.8,
               label="gap to mean confidence" if first_gap else None)
        ax.hlines(b.confidence, b.lower, b.upper, color="#C44E52", linewidth=1.6,
                  label="mean confidence" if first_gap else None)
        first_gap = False


def plot_risk_coverage(
    *, curve: RiskCoverageCurve, path: str | os.PathLike[str], title: str = "Risk–coverage curve"
) -> Path:
    """Write a risk–coverage PNG: selective risk against coverage, with the oracle curve.

    The system's curve is drawn as the step function whose area is AURC (each point's risk
    holds over its coverage increment); the dashed curve is the perfect ranking whose area
    is AURC*.

    Args:
        curve: From :func:`averitec_tools.metrics.selective.risk_coverage_curve`.
        path: Output ``.png`` path.
        title: Figure title.

    Returns:
        The path written.

    Example:
        >>> import tempfile, pathlib
        >>> from averitec_tools.metrics.selective import risk_coverage_curve
        >>> c = risk_coverage_curve(confidences=[0.9, 0.6, 0.3], correct=[1, 0, 1])
        >>> p = plot_risk_coverage(curve=c, path=pathlib.Path(tempfile.mkdtemp()) / "rc.png")
        >>> p.read_bytes()[:4] == b"\\x89PNG"
        True
    """
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8.5, 4.5))
    try:
        split, oracle = _draw_curves(ax, curve)
        full_risk = curve.risks[-1]
        ax.axhline(full_risk, color="0.5", linewidth=0.8, linestyle=":",
                   label=f"risk at full coverage = {full_risk:.3f}")
        ax.set_xlim(0, 1)
        shown = max(max(curve.risks[split:]), float(oracle.max()))
        ax.set_ylim(0, max(0.05, min(1.0, shown * 1.1 + 0.02)))
        ax.set_xlabel("coverage")
        ax.set_ylabel("selective risk (1 − accuracy)")
        ax.set_title(f"{title}\nE-AURC = {curve.e_aurc:.4f}, N = {curve.n}")
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, fontsize=8)
        ax.grid(alpha=0.3)
        return _save(fig, path)
    finally:
        plt.close(fig)


def _draw_curves(ax: Any, curve: RiskCoverageCurve) -> tuple[int, Any]:
    """The system's step curve (its first claims faded) and the oracle's; returns (first full-strength
    point, oracle risks)."""
    import numpy as np

    cov = np.concatenate([[0.0], np.asarray(curve.coverages)])
    risk = np.asarray(curve.risks)
    # The risk of the first few claims is a ratio of tiny counts (0/1, 1/1, 1/2...): drawn
    # at full strength it reads as a spike at coverage ≈ 0, so it is drawn faded and
    # left out of the y-range. The whole step function (its area is AURC) is still drawn.
    n_min = min(curve.n, MIN_CLAIMS_FOR_RISK)
    split = int(np.searchsorted(cov[1:], n_min / curve.n - 1e-12))
    if split > 0:
        ax.stairs(risk[:split], cov[: split + 1], baseline=None, color="#4C72B0", linewidth=1.2,
                  alpha=0.3, label=f"first {n_min} claims (too few for a stable risk)")
    ax.stairs(risk[split:], cov[split:], baseline=None, color="#4C72B0", linewidth=1.8,
              label=f"system (AURC = {curve.aurc:.4f})")
    if len(curve.risks) <= 60:  # markers only where they stay readable
        ax.plot(curve.coverages[split:], curve.risks[split:], linestyle="none", marker="o",
                markersize=3, color="#4C72B0")
    k = np.arange(1, curve.n + 1, dtype=np.float64)
    oracle = np.maximum(0.0, k - curve.n_correct) / k
    ax.stairs(oracle, np.concatenate([[0.0], k / curve.n]), baseline=None, color="#55A868", linestyle="--",
              linewidth=1.4, label=f"oracle ranking (AURC* = {curve.oracle_aurc:.4f})")
    return split, oracle


__all__ = ["plot_reliability_diagram", "plot_risk_coverage"]
