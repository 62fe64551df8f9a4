"""Confidence binning for calibration errors: equal-width or equal-mass bin edges, per-bin
counts and sums, and ECE/MCE from them, for one sample or for many resamples at once
(see :mod:`averitec_tools.metrics.ece`)."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from averitec_tools.metrics._inputs import (
    MetricInputError,
    as_batch,
)

BinningStrategy = Literal["uniform", "quantile"]


STRATEGIES: tuple[str, ...] = ("uniform", "quantile")


DEFAULT_N_BINS = 15


def check_binning(n_bins: int, strategy: str) -> None:
    if isinstance(n_bins, bool) or not isinstance(n_bins, (int, np.integer)) or n_bins < 1:
        raise MetricInputError(f"n_bins must be a positive integer, got {n_bins!r}")
    if strategy not in STRATEGIES:
        raise MetricInputError(
            f"unknown binning strategy {strategy!r} (use one of: {', '.join(STRATEGIES)})"
        )


def bin_edges(
    *, confidences: npt.NDArray[np.float64], n_bins: int, strategy: str
) -> npt.NDArray[np.float64]:
    """Return the ``n_bins + 1`` edges for ``strategy``.

    Uniform edges are ``b / n_bins`` (each computed as one correctly rounded division);
    quantile edges are ``numpy.percentile(confidences, 100 · b / n_bins)``.

    Example:
        >>> bin_edges(confidences=np.array([0.2, 0.9]), n_bins=4, strategy="uniform").tolist()
        [0.0, 0.25, 0.5, 0.75, 1.0]
    """
    check_binning(n_bins, strategy)
    if strategy == "uniform":
        return np.arange(n_bins + 1, dtype=np.float64) / n_bins
    return np.asarray(np.percentile(confidences, np.linspace(0.0, 100.0, n_bins + 1)), dtype=np.float64)


def assign_bins(conf: npt.NDArray[np.float64], edges: npt.NDArray[np.float64]) -> npt.NDArray[np.intp]:
    # Right-closed intervals (e_b, e_{b+1}]; values ≤ e_1 (including 0) go to bin 0.
    return np.searchsorted(edges[1:-1], conf, side="left").astype(np.intp)


def binned_sums(
    conf: npt.NDArray[np.float64], ok: npt.NDArray[np.bool_], n_bins: int, strategy: str
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    edges = bin_edges(confidences=conf, n_bins=n_bins, strategy=strategy)
    ids = assign_bins(conf, edges)
    counts = np.bincount(ids, minlength=n_bins).astype(np.int64)
    conf_sums = np.bincount(ids, weights=conf, minlength=n_bins).astype(np.float64)
    correct_sums = np.bincount(ids, weights=ok.astype(np.float64), minlength=n_bins).astype(np.float64)
    return edges, counts, conf_sums, correct_sums


def ece_mce(
    counts: npt.NDArray[np.int64], conf_sums: npt.NDArray[np.float64], correct_sums: npt.NDArray[np.float64]
) -> tuple[float, float]:
    nonempty = counts > 0
    gaps = np.abs(correct_sums[nonempty] - conf_sums[nonempty]) / counts[nonempty]
    weights = counts[nonempty] / counts.sum()
    return float(np.sum(weights * gaps)), float(np.max(gaps))


def calibration_errors_batched(
    confidences: npt.NDArray[np.float64],
    correct: npt.NDArray[Any],
    *,
    n_bins: int = DEFAULT_N_BINS,
    strategy: BinningStrategy = "uniform",
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """ECE and MCE of many samples at once (rows of ``(..., N)`` arrays), for the bootstrap.

    Same definitions as :func:`expected_calibration_error` and
    :func:`maximum_calibration_error`, using ``(n_b/N)·|acc_b − conf_b| =
    |Σ_b correct − Σ_b confidence| / N``. Inputs are not validated (callers pass arrays that
    were validated once).

    Example:
        >>> ece, mce = calibration_errors_batched(np.array([[0.1, 0.9], [0.9, 0.9]]),
        ...                                        np.array([[0, 1], [1, 1]]), n_bins=2)
        >>> np.round(ece, 6).tolist(), np.round(mce, 6).tolist()
        ([0.1, 0.1], [0.1, 0.1])
    """
    check_binning(n_bins, strategy)
    conf2, ok2, batch_shape = as_batch(confidences, correct)
    n = conf2.shape[1]
    rows = conf2.shape[0]
    if strategy == "uniform":
        ids = assign_bins(conf2, np.arange(n_bins + 1, dtype=np.float64) / n_bins)
    else:
        ids = np.empty(conf2.shape, dtype=np.intp)
        for r in range(rows):
            ids[r] = assign_bins(conf2[r], bin_edges(confidences=conf2[r], n_bins=n_bins, strategy=strategy))
    flat = (ids + np.arange(rows, dtype=np.intp)[:, None] * n_bins).ravel()
    size = rows * n_bins
    counts = np.bincount(flat, minlength=size).reshape(rows, n_bins)
    conf_sums = np.bincount(flat, weights=conf2.ravel(), minlength=size).reshape(rows, n_bins)
    ok_sums = np.bincount(flat, weights=ok2.ravel(), minlength=size).reshape(rows, n_bins)
    abs_diff = np.abs(ok_sums - conf_sums)
    ece = abs_diff.sum(axis=1) / n
    gaps = np.divide(abs_diff, counts, out=np.zeros_like(abs_diff), where=counts > 0)
    mce = gaps.max(axis=1)
    return ece.reshape(batch_shape), mce.reshape(batch_shape)


__all__ = [
    "DEFAULT_N_BINS", "STRATEGIES", "BinningStrategy", "bin_edges", "binned_sums", "calibration_errors_batched",
    "ece_mce",
]
