"""Label pairs as integer codes, and accuracy and (per-class, macro) F1 computed from them
over many resamples at once: what the paired tests resample to recompute label metrics
exactly (see :mod:`averitec_tools.metrics.paired`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from averitec_tools.metrics._inputs import MetricInputError


def encode_label_pairs(
    *, gold: Sequence[str], predictions: Sequence[str | None], labels: Sequence[str]
) -> npt.NDArray[np.int64]:
    """Encode each claim's (gold, prediction) as ``gold_index · (K + 1) + pred_index``.

    ``labels`` are the K classes (every gold label must be one of them); a prediction
    outside them (or ``None``) gets index K ("other"): always wrong, a false negative for
    its gold class and nobody's false positive, as in scikit-learn with ``labels=``.

    Example:
        >>> encode_label_pairs(gold=["a", "b"], predictions=["a", "zzz"], labels=["a", "b"]).tolist()
        [0, 5]
    """
    if len(gold) != len(predictions):
        raise MetricInputError(f"gold and predictions differ in length ({len(gold)} vs {len(predictions)})")
    k = len(labels)
    index = {lab: i for i, lab in enumerate(labels)}
    codes = np.empty(len(gold), dtype=np.int64)
    for i, (g, p) in enumerate(zip(gold, predictions, strict=True)):
        if g not in index:
            raise MetricInputError(f"gold label {g!r} of claim {i} is not one of labels {list(labels)}")
        pred_index = k if p is None else index.get(p, k)
        codes[i] = index[g] * (k + 1) + pred_index
    return codes


def accuracy_of_codes(codes: npt.NDArray[Any], *, n_labels: int, axis: int = -1) -> Any:
    """Accuracy from :func:`encode_label_pairs` codes, reducing ``axis`` (vectorised).

    Example:
        >>> float(accuracy_of_codes(np.array([0, 5]), n_labels=2))
        0.5
    """
    codes = np.asarray(codes)
    return np.mean(codes // (n_labels + 1) == codes % (n_labels + 1), axis=axis)


def per_class_f1_of_codes(codes: npt.NDArray[Any], *, n_labels: int, axis: int = -1) -> npt.NDArray[np.float64]:
    """Per-class F1 of the K labels from joint codes; the class axis is last (vectorised).

    ``F1_k = 2·TP_k / (2·TP_k + FP_k + FN_k)``, 0 when the denominator is 0 (scikit-learn's
    ``zero_division=0``).

    Example:
        >>> codes = encode_label_pairs(gold=["a", "a", "b"], predictions=["a", "b", "b"], labels=["a", "b"])
        >>> np.round(per_class_f1_of_codes(codes, n_labels=2), 4).tolist()
        [0.6667, 0.6667]
    """
    codes = np.moveaxis(np.asarray(codes, dtype=np.int64), axis, -1)
    batch_shape = codes.shape[:-1]
    flat = codes.reshape(-1, codes.shape[-1])
    width = n_labels + 1
    cells = width * width
    offsets = np.arange(flat.shape[0], dtype=np.int64)[:, None] * cells
    counts = np.bincount((flat + offsets).ravel(), minlength=flat.shape[0] * cells)
    conf = counts.reshape(flat.shape[0], width, width)[:, :n_labels, :]  # rows: gold classes
    tp = conf[:, np.arange(n_labels), np.arange(n_labels)].astype(np.float64)
    gold_tot = conf.sum(axis=2)
    pred_tot = conf[:, :, :n_labels].sum(axis=1)
    denom = (gold_tot + pred_tot).astype(np.float64)  # = 2TP + FP + FN
    f1 = np.divide(2.0 * tp, denom, out=np.zeros_like(tp), where=denom > 0)
    return f1.reshape(*batch_shape, n_labels)


def macro_f1_of_codes(codes: npt.NDArray[Any], *, n_labels: int, axis: int = -1) -> Any:
    """Macro-F1 over the K labels from joint codes, reducing ``axis`` (vectorised).

    The unweighted mean of :func:`per_class_f1_of_codes` over all K labels — equal to
    ``sklearn.metrics.f1_score(gold, pred, labels=labels, average="macro", zero_division=0)``.

    Example:
        >>> codes = encode_label_pairs(gold=["a", "a", "b"], predictions=["a", "b", "b"], labels=["a", "b"])
        >>> round(float(macro_f1_of_codes(codes, n_labels=2)), 4)
        0.6667
    """
    per_class = per_class_f1_of_codes(codes, n_labels=n_labels, axis=axis)
    macro = per_class.mean(axis=-1)
    return float(macro) if macro.ndim == 0 else macro


__all__ = ["accuracy_of_codes", "encode_label_pairs", "macro_f1_of_codes", "per_class_f1_of_codes"]
