"""Validation shared by the calibration, selective-prediction and significance metrics.

Every public metric in :mod:`~averitec_tools.metrics.brier`, :mod:`~averitec_tools.metrics.ece`,
:mod:`~averitec_tools.metrics.selective` and :mod:`~averitec_tools.metrics.bootstrap` turns its
inputs into NumPy arrays here, once, so that bad input fails the same way everywhere: with a
:class:`MetricInputError`, which is both a :class:`~averitec_tools.errors.UserError` (the CLI
prints one line, exit 2) and a :class:`ValueError` (what library callers expect).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from averitec_tools.errors import UserError


class MetricInputError(UserError, ValueError):
    """Invalid metric input (empty, mismatched lengths, confidence outside [0, 1], ...).

    Example:
        >>> try:
        ...     as_confidences_correct(confidences=[], correct=[])
        ... except ValueError as exc:
        ...     print(exc)
        confidences is empty: a calibration metric needs at least one prediction
    """


ArrayLike = Sequence[float] | Sequence[bool] | Sequence[int] | npt.NDArray[Any]


def _float_rows(values: Any, *, name: str, ndim: int, numbers: str, shaped: str) -> npt.NDArray[np.float64]:
    """``values`` as a float array of ``ndim`` dimensions and at least one row (``numbers`` and
    ``shaped`` say what was expected)."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise MetricInputError(f"{name} must be {numbers}: {exc}") from None
    if arr.ndim != ndim:
        raise MetricInputError(f"{name} must be {shaped}, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise MetricInputError(f"{name} is empty: a calibration metric needs at least one prediction")
    return arr


def as_confidences(confidences: ArrayLike, *, name: str = "confidences") -> npt.NDArray[np.float64]:
    """Return ``confidences`` as a 1-D float array of finite values in [0, 1]."""
    conf = _float_rows(confidences, name=name, ndim=1, numbers="numbers in [0, 1]", shaped="one-dimensional")
    bad = np.flatnonzero(~np.isfinite(conf) | (conf < 0.0) | (conf > 1.0))
    if bad.size:
        i = int(bad[0])
        raise MetricInputError(
            f"{name}[{i}] = {conf[i]!r} is not a probability in [0, 1]"
            + (f" ({bad.size} such values)" if bad.size > 1 else "")
        )
    return conf


def as_correct(correct: ArrayLike, *, name: str = "correct") -> npt.NDArray[np.bool_]:
    """Return ``correct`` as a 1-D boolean array; only 0/1/True/False are accepted."""
    arr = np.asarray(correct)
    if arr.ndim != 1:
        raise MetricInputError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.dtype == np.bool_:
        return arr
    try:
        num = arr.astype(np.float64)
    except (TypeError, ValueError):
        raise MetricInputError(f"{name} must be booleans or 0/1, got dtype {arr.dtype}") from None
    bad = np.flatnonzero((num != 0.0) & (num != 1.0))
    if bad.size:
        i = int(bad[0])
        raise MetricInputError(f"{name}[{i}] = {arr[i]!r} is not a boolean or 0/1")
    return num == 1.0


def as_confidences_correct(
    *, confidences: ArrayLike, correct: ArrayLike
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Validate a (confidence, correctness) pair of equal, non-zero length."""
    conf = as_confidences(confidences)
    ok = as_correct(correct)
    if conf.shape != ok.shape:
        raise MetricInputError(
            f"confidences and correct differ in length ({conf.size} vs {ok.size})"
        )
    return conf, ok


def as_batch(confidences: Any, correct: Any) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], tuple[int, ...]]:
    """Batched ``(..., N)`` confidences and correctness as ``(rows, N)`` float matrices, and the
    batch shape ``...`` to give the per-row results back (no validation: the batched metrics'
    callers pass arrays the single-run metrics have checked).

    Example:
        >>> conf, ok, shape = as_batch(np.zeros((2, 3, 4)), np.ones((2, 3, 4)))
        >>> conf.shape, ok.dtype, shape
        ((6, 4), dtype('float64'), (2, 3))
    """
    conf = np.asarray(confidences, dtype=np.float64)
    n = conf.shape[-1]
    return conf.reshape(-1, n), np.asarray(correct, dtype=np.float64).reshape(-1, n), conf.shape[:-1]


def as_probability_matrix(
    probabilities: ArrayLike | Sequence[Sequence[float]], *, atol: float = 1e-6
) -> npt.NDArray[np.float64]:
    """Return an (N, K) matrix of probability vectors (rows in [0, 1] summing to 1 ± ``atol``)."""
    probs = _float_rows(probabilities, name="probabilities", ndim=2, numbers="an (N, K) matrix of numbers",
                        shaped="an (N, K) matrix")
    if probs.shape[1] < 2:
        raise MetricInputError(f"probabilities need at least 2 classes, got {probs.shape[1]}")
    bad = np.argwhere(~np.isfinite(probs) | (probs < 0.0) | (probs > 1.0))
    if bad.size:
        i, k = (int(v) for v in bad[0])
        raise MetricInputError(f"probabilities[{i}][{k}] = {probs[i, k]!r} is not in [0, 1]")
    sums = probs.sum(axis=1)
    off = np.flatnonzero(np.abs(sums - 1.0) > atol)
    if off.size:
        i = int(off[0])
        raise MetricInputError(f"probabilities[{i}] sums to {sums[i]!r}, not 1")
    return probs


def as_class_indices(
    labels_true: ArrayLike | Sequence[str], *, n: int, classes: Sequence[Any] | None, n_classes: int
) -> npt.NDArray[np.intp]:
    """Map true labels to column indices of a probability matrix.

    With ``classes`` given, each label is looked up in it; otherwise labels must already be
    integer indices in ``[0, n_classes)``.
    """
    raw = list(labels_true)
    if len(raw) != n:
        raise MetricInputError(f"labels_true and probabilities differ in length ({len(raw)} vs {n})")
    if classes is not None:
        if len(classes) != n_classes:
            raise MetricInputError(
                f"classes has {len(classes)} entries but probabilities have {n_classes} columns"
            )
        index = {c: i for i, c in enumerate(classes)}
        out = np.empty(n, dtype=np.intp)
        for i, lab in enumerate(raw):
            if lab not in index:
                raise MetricInputError(f"labels_true[{i}] = {lab!r} is not one of classes {list(classes)}")
            out[i] = index[lab]
        return out
    arr = np.asarray(raw)
    if arr.dtype.kind not in "iu":
        raise MetricInputError("labels_true must be integer class indices unless classes is given")
    bad = np.flatnonzero((arr < 0) | (arr >= n_classes))
    if bad.size:
        i = int(bad[0])
        raise MetricInputError(f"labels_true[{i}] = {arr[i]} is not a class index in [0, {n_classes})")
    return arr.astype(np.intp)


__all__ = [
    "MetricInputError", "as_batch", "as_class_indices", "as_confidences_correct", "as_correct",
    "as_probability_matrix",
]
