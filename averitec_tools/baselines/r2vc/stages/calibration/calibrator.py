"""Sequence-likelihood calibration (SLC, paper §3.5).

A logistic regression (scikit-learn, ``max_iter=2000``) maps seven features of a chosen
candidate to the probability that its label is correct. The features (§3.5), in
:data:`FEATURE_NAMES` order:

1. ``mean_logprob`` — mean token log-probability of the generated text (0.0 when the
   generator does not report one);
2. ``s_ver`` — the verifier score;
3. ``agreement`` — fraction of the claim's candidates that share this candidate's label;
4. ``n_passages`` — evidence passages the candidate was generated from;
5. ``rationale_tokens`` — rationale length in whitespace tokens;
6. ``s_cons`` — label consistency with the NLI verdict;
7. ``s_align`` — citation alignment.

Features are standardised (mean/scale of the fit data, stored with the model) and
features that are constant on the fit data are dropped (coefficient 0), so a feature
the generator never varies (e.g. ``mean_logprob`` without an LM) cannot blow up the
fit. The fitted model is saved as JSON;
loading checks the feature names. Fitting it on a calibration slice:
:mod:`~averitec_tools.baselines.r2vc.stages.calibration.fitting`.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from averitec_tools.baselines.r2vc.stages.verification.verifier import VerifiedCandidate
from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_writer, load_json

FEATURE_NAMES: tuple[str, ...] = (
    "mean_logprob",
    "s_ver",
    "agreement",
    "n_passages",
    "rationale_tokens",
    "s_cons",
    "s_align",
)
#: Optional label indicators (``calibration.label_features``; ours, not §3.5): P(correct)
#: depends on which label a candidate has (on AVeriTeC a Refuted verdict is right far
#: more often than a Not Enough Evidence one), which the seven features cannot see.
LABEL_FEATURES: tuple[str, ...] = ("label_true", "label_false")
ALL_FEATURES: tuple[str, ...] = FEATURE_NAMES + LABEL_FEATURES
_FORMAT = "averitec-tools/r2vc-slc"


def candidate_features(verified: Sequence[VerifiedCandidate], *, label_features: bool = False) -> np.ndarray:
    """Feature matrix ``(len(verified), 7)`` for the candidates of one claim (9 with ``label_features``).

    ``n_passages`` counts the distinct passages the candidate cites (the evidence it
    uses), not the size of the subset it was shown.

    Example:
        >>> from averitec_tools.baselines.r2vc.types import Candidate, Passage, VerifierScores
        >>> s = VerifierScores(0.8, 0.1, 0.7, 1.0, "True", 1.0, 0.5, 0.9)
        >>> p = Passage("d", "t", "u", "x")
        >>> vc = [VerifiedCandidate(Candidate(lab, "two words", (0,), (p,), -0.5, 0), s,
        ...                         np.zeros((1, 3))) for lab in ("True", "True", "False")]
        >>> candidate_features(vc)[2].tolist()
        [-0.5, 0.9, 0.3333333333333333, 1.0, 2.0, 1.0, 0.5]
        >>> candidate_features(vc, label_features=True)[2, 7:].tolist()
        [0.0, 1.0]
    """
    counts = Counter(v.candidate.label for v in verified)
    rows = [
        [
            v.candidate.mean_logprob if v.candidate.mean_logprob is not None else 0.0,
            v.scores.s_ver,
            counts[v.candidate.label] / len(verified),
            float(len({i for i in v.candidate.citations if 0 <= i < len(v.candidate.passages)})),
            float(len(v.candidate.rationale.split())),
            v.scores.s_cons,
            v.scores.s_align,
            float(v.candidate.label == "True"),
            float(v.candidate.label == "False"),
        ]
        for v in verified
    ]
    width = len(ALL_FEATURES) if label_features else len(FEATURE_NAMES)
    return np.asarray(rows, dtype=np.float64).reshape(len(verified), len(ALL_FEATURES))[:, :width]


def calibration_metrics(*, y_true: Sequence[float] | np.ndarray, prob: Sequence[float] | np.ndarray) -> dict[str, float]:
    """Brier score and ECE (the package's metrics: 15 equal-width bins) of ``prob``.

    Example:
        >>> calibration_metrics(y_true=[1, 0], prob=[1.0, 0.0])
        {'brier': 0.0, 'ece': 0.0, 'n': 2}
    """
    from averitec_tools.metrics.brier import brier_score
    from averitec_tools.metrics.ece import expected_calibration_error

    if len(y_true) == 0:
        return {"brier": float("nan"), "ece": float("nan"), "n": 0}
    return {
        "brier": brier_score(confidences=np.asarray(prob), correct=np.asarray(y_true)),
        "ece": expected_calibration_error(confidences=np.asarray(prob), correct=np.asarray(y_true)),
        "n": len(y_true),
    }


@dataclass(frozen=True)
class Calibrator:
    """A fitted SLC logistic regression: ``π = σ(w·z + b)``, ``z = (x − mean) / scale``.

    Example:
        >>> X = np.array([[0, 0.9, 1, 4, 10, 1, 1], [0, 0.1, 0.3, 4, 10, 0, 0]] * 5, dtype=float)
        >>> y = np.array([1, 0] * 5)
        >>> cal = Calibrator.fit(features=X, targets=y)
        >>> bool(cal.predict(X)[0] > 0.5 > cal.predict(X)[1])
        True
        >>> cal.fit_info["dropped_features"]  # constant on the fit data
        ['mean_logprob', 'n_passages', 'rationale_tokens']

    With 9 columns the features are :data:`ALL_FEATURES` (the label indicators added).
    """

    coef: tuple[float, ...]
    intercept: float
    feature_names: tuple[str, ...] = FEATURE_NAMES
    fit_info: dict[str, Any] = field(default_factory=dict, compare=False)
    mean: tuple[float, ...] = (0.0,) * len(FEATURE_NAMES)
    scale: tuple[float, ...] = (1.0,) * len(FEATURE_NAMES)
    #: Where it was loaded from (for run summaries), if from a file.
    source: str | None = field(default=None, compare=False)

    @classmethod
    def fit(cls, *, features: np.ndarray, targets: Sequence[int] | np.ndarray, max_iter: int = 2000,
            sample_weight: Sequence[float] | np.ndarray | None = None) -> Calibrator:
        """Fit the logistic regression; a single-class target gives a constant model."""
        from sklearn.linear_model import LogisticRegression

        X = np.asarray(features, dtype=np.float64)
        y = np.asarray(targets, dtype=int)
        if X.ndim != 2 or X.shape[1] not in (len(FEATURE_NAMES), len(ALL_FEATURES)) or len(X) != len(y):
            raise ValueError(f"features must be (n, {len(FEATURE_NAMES)}) or (n, {len(ALL_FEATURES)}) with n targets")
        names = ALL_FEATURES[: X.shape[1]]
        if len(y) == 0:
            raise UserError("calibrator: no examples to fit on (the calibration slice is empty)")
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        info: dict[str, Any] = {"n": len(y), "positive_rate": float(np.average(y, weights=w))}
        keep = np.ptp(X, axis=0) > 1e-12
        info["dropped_features"] = [n for n, k in zip(names, keep, strict=True) if not k]
        mean = np.where(keep, np.average(X, axis=0, weights=w), 0.0)
        std = np.sqrt(np.average((X - mean) ** 2, axis=0, weights=w))
        scale = np.where(keep & (std > 1e-12), std, 1.0)
        if len(set(y.tolist())) < 2 or not keep.any():
            rate = min(max(info["positive_rate"], 1e-3), 1 - 1e-3)
            cal = cls(coef=(0.0,) * len(names), intercept=math.log(rate / (1 - rate)), feature_names=names,
                      fit_info=info | {"degenerate": True}, mean=(0.0,) * len(names), scale=(1.0,) * len(names))
        else:
            Z = (X - mean) / scale
            lr = LogisticRegression(max_iter=max_iter)
            lr.fit(Z[:, keep], y, sample_weight=w)
            coef = np.zeros(len(names))
            coef[keep] = lr.coef_[0]
            cal = cls(coef=tuple(float(c) for c in coef), intercept=float(lr.intercept_[0]), feature_names=names,
                      fit_info=info | {"degenerate": False},
                      mean=tuple(float(m) for m in mean), scale=tuple(float(v) for v in scale))
        cal.fit_info.update(calibration_metrics(y_true=y, prob=cal.predict(X)))
        return cal

    @property
    def label_features(self) -> bool:
        """Whether this calibrator reads the label indicators (:data:`LABEL_FEATURES`)."""
        return len(self.coef) == len(ALL_FEATURES)

    def predict(self, features: np.ndarray) -> np.ndarray:
        """Calibrated probabilities of correctness, shape ``(n,)``."""
        from scipy.special import expit

        X = np.asarray(features, dtype=np.float64).reshape(-1, len(self.coef))
        Z = (X - np.asarray(self.mean)) / np.asarray(self.scale)
        return np.asarray(expit(Z @ np.asarray(self.coef) + self.intercept))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "feature_names": list(self.feature_names),
            "coef": list(self.coef),
            "intercept": self.intercept,
            "mean": list(self.mean),
            "scale": list(self.scale),
            "fit_info": self.fit_info,
        }

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the calibrator as JSON, atomically."""
        with atomic_writer(path) as fh:
            json.dump(self.to_dict(), fh, indent=2)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Calibrator:
        """Read a calibrator saved by :meth:`save`, checking its feature names."""
        obj = load_json(path)
        if not isinstance(obj, dict) or obj.get("format") != _FORMAT:
            raise UserError(f"{path}: not an R2VC calibrator file (expected format {_FORMAT!r})")
        names = tuple(obj.get("feature_names") or ())
        if names not in (FEATURE_NAMES, ALL_FEATURES):
            raise UserError(
                f"{path}: calibrator features {list(names)} do not match this version's "
                f"{list(FEATURE_NAMES)} (optionally + {list(LABEL_FEATURES)})",
                hint="refit the calibrator",
            )
        coef: Any = obj.get("coef")
        intercept: Any = obj.get("intercept")
        if not _numbers(coef, len(names)) or not isinstance(intercept, (int, float)):
            raise UserError(f"{path}: calibrator coefficients are missing or malformed")
        n = len(names)
        mean = obj.get("mean", [0.0] * n)
        scale = obj.get("scale", [1.0] * n)
        for name, vec in (("mean", mean), ("scale", scale)):
            if not _numbers(vec, n):
                raise UserError(f"{path}: calibrator {name} is malformed")
        if any(v <= 0 for v in scale):
            raise UserError(f"{path}: calibrator scale must be positive")
        return cls(coef=tuple(float(c) for c in coef), intercept=float(intercept), feature_names=names,
                   fit_info=dict(obj.get("fit_info") or {}), mean=tuple(float(v) for v in mean),
                   scale=tuple(float(v) for v in scale), source=str(path))


def _numbers(value: Any, n: int) -> bool:
    """Whether ``value`` is a list of ``n`` numbers."""
    return isinstance(value, list) and len(value) == n and all(isinstance(v, (int, float)) for v in value)


def monotone_confidence(s_ver: np.ndarray | float) -> np.ndarray:
    """Confidence without a calibrator (Algorithm C.1 ``MonotoneMap``): s_ver clipped to [0, 1].

    Example:
        >>> monotone_confidence(np.array([-0.2, 0.5, 1.3])).tolist()
        [0.0, 0.5, 1.0]
    """
    return np.clip(np.asarray(s_ver, dtype=np.float64), 0.0, 1.0)


class ClaimCalibrator(Protocol):
    """A calibrator chosen per claim (e.g. cross-fitted calibrators, one per fold)."""

    def for_claim(self, claim: str) -> Calibrator | None:
        ...



def load_or_none(path: str | os.PathLike[str] | None) -> Calibrator | None:
    """Load a calibrator file if a path is given."""
    if path is None:
        return None
    if not Path(path).exists():
        raise UserError(f"{path}: calibrator file not found", hint="fit one or set calibration.path: null")
    return Calibrator.load(path)


__all__ = ["ALL_FEATURES", "FEATURE_NAMES", "Calibrator", "ClaimCalibrator", "calibration_metrics",
           "candidate_features", "load_or_none", "monotone_confidence"]
