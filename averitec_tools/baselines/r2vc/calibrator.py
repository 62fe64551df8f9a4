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

It is fitted on a held-out slice by simulating inference (:func:`simulate_examples`):
each claim gets up to 12 candidates, the candidate with the highest ``s_ver`` is chosen
(no calibrator exists yet), and the target is whether its label equals the gold label.
The fitted model is saved as JSON (coefficients, intercept, feature names, fit metrics);
loading checks the feature names.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines.r2vc.verifier import VerifiedCandidate
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
_FORMAT = "averitec-tools/r2vc-slc"


def candidate_features(verified: Sequence[VerifiedCandidate]) -> np.ndarray:
    """Feature matrix ``(len(verified), 7)`` for the candidates of one claim.

    Example:
        >>> from averitec_tools.baselines.r2vc.types import Candidate, Passage, VerifierScores
        >>> s = VerifierScores(0.8, 0.1, 0.7, 1.0, "True", 1.0, 0.5, 0.9)
        >>> p = Passage("d", "t", "u", "x")
        >>> vc = [VerifiedCandidate(Candidate(lab, "two words", (0,), (p,), -0.5, 0), s,
        ...                         np.zeros((1, 3))) for lab in ("True", "True", "False")]
        >>> candidate_features(vc)[2].tolist()
        [-0.5, 0.9, 0.3333333333333333, 1.0, 2.0, 1.0, 0.5]
    """
    counts = Counter(v.candidate.label for v in verified)
    rows = [
        [
            v.candidate.mean_logprob if v.candidate.mean_logprob is not None else 0.0,
            v.scores.s_ver,
            counts[v.candidate.label] / len(verified),
            float(len(v.candidate.passages)),
            float(len(v.candidate.rationale.split())),
            v.scores.s_cons,
            v.scores.s_align,
        ]
        for v in verified
    ]
    return np.asarray(rows, dtype=np.float64).reshape(len(verified), len(FEATURE_NAMES))


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
    """A fitted SLC logistic regression: ``π = σ(w·x + b)``.

    Example:
        >>> X = np.array([[0, 0.9, 1, 4, 10, 1, 1], [0, 0.1, 0.3, 4, 10, 0, 0]] * 5, dtype=float)
        >>> y = np.array([1, 0] * 5)
        >>> cal = Calibrator.fit(features=X, targets=y)
        >>> bool(cal.predict(X)[0] > 0.5 > cal.predict(X)[1])
        True
    """

    coef: tuple[float, ...]
    intercept: float
    feature_names: tuple[str, ...] = FEATURE_NAMES
    fit_info: dict[str, Any] = field(default_factory=dict, compare=False)

    @classmethod
    def fit(cls, *, features: np.ndarray, targets: Sequence[int], max_iter: int = 2000) -> Calibrator:
        """Fit the logistic regression; a single-class target gives a constant model."""
        from sklearn.linear_model import LogisticRegression

        X = np.asarray(features, dtype=np.float64)
        y = np.asarray(targets, dtype=int)
        if X.ndim != 2 or X.shape[1] != len(FEATURE_NAMES) or len(X) != len(y):
            raise ValueError(f"features must be (n, {len(FEATURE_NAMES)}) with n targets")
        if len(y) == 0:
            raise UserError("calibrator: no examples to fit on (the calibration slice is empty)")
        info: dict[str, Any] = {"n": len(y), "positive_rate": float(y.mean())}
        if len(set(y.tolist())) < 2:
            rate = min(max(float(y.mean()), 1e-3), 1 - 1e-3)
            cal = cls(coef=(0.0,) * len(FEATURE_NAMES), intercept=math.log(rate / (1 - rate)),
                      fit_info=info | {"degenerate": True})
        else:
            lr = LogisticRegression(max_iter=max_iter)
            lr.fit(X, y)
            cal = cls(coef=tuple(float(c) for c in lr.coef_[0]), intercept=float(lr.intercept_[0]),
                      fit_info=info | {"degenerate": False})
        cal.fit_info.update(calibration_metrics(y_true=y, prob=cal.predict(X)))
        return cal

    def predict(self, features: np.ndarray) -> np.ndarray:
        """Calibrated probabilities of correctness, shape ``(n,)``."""
        from scipy.special import expit

        X = np.asarray(features, dtype=np.float64).reshape(-1, len(self.coef))
        return np.asarray(expit(X @ np.asarray(self.coef) + self.intercept))

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": _FORMAT,
            "feature_names": list(self.feature_names),
            "coef": list(self.coef),
            "intercept": self.intercept,
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
        if names != FEATURE_NAMES:
            raise UserError(
                f"{path}: calibrator features {list(names)} do not match this version's "
                f"{list(FEATURE_NAMES)}",
                hint="refit the calibrator",
            )
        coef = obj.get("coef")
        intercept = obj.get("intercept")
        if (
            not isinstance(coef, list)
            or len(coef) != len(FEATURE_NAMES)
            or not all(isinstance(c, (int, float)) for c in coef)
            or not isinstance(intercept, (int, float))
        ):
            raise UserError(f"{path}: calibrator coefficients are missing or malformed")
        return cls(coef=tuple(float(c) for c in coef), intercept=float(intercept),
                   fit_info=dict(obj.get("fit_info") or {}))


def monotone_confidence(s_ver: np.ndarray | float) -> np.ndarray:
    """Confidence without a calibrator (Algorithm C.1 ``MonotoneMap``): s_ver clipped to [0, 1].

    Example:
        >>> monotone_confidence(np.array([-0.2, 0.5, 1.3])).tolist()
        [0.0, 0.5, 1.0]
    """
    return np.clip(np.asarray(s_ver, dtype=np.float64), 0.0, 1.0)


@dataclass(frozen=True)
class CalibrationExample:
    """One simulated-inference example: the chosen candidate's features and correctness."""

    claim: str
    features: np.ndarray
    predicted: str
    gold: str

    @property
    def target(self) -> int:
        return int(self.predicted == self.gold)


def simulate_examples(
    *,
    claims: Sequence[str],
    gold_labels: Sequence[str],
    candidates_for: Callable[[str], Sequence[VerifiedCandidate]],
    progress: bool = False,
) -> list[CalibrationExample]:
    """Simulate inference on a held-out slice to build calibrator training examples.

    Args:
        claims: Claim texts of the slice.
        gold_labels: Their gold labels in the R2VC space (True/False/Uncertain).
        candidates_for: Runs retrieve → generate (≤ 12 candidates) → verify for a claim.
        progress: Show a tqdm bar.

    Claims without candidates (empty retrieval) are skipped: the pipeline abstains on
    them without consulting the calibrator.
    """
    from tqdm.auto import tqdm

    out = []
    for claim, gold in tqdm(list(zip(claims, gold_labels, strict=True)), desc="SLC fit",
                            disable=not progress, unit="claim"):
        verified = list(candidates_for(claim))
        if not verified:
            continue
        best = max(range(len(verified)), key=lambda i: verified[i].scores.s_ver)
        feats = candidate_features(verified)[best]
        out.append(CalibrationExample(claim=claim, features=feats,
                                      predicted=verified[best].candidate.label, gold=gold))
    return out


def fit_from_examples(examples: Sequence[CalibrationExample], *, max_iter: int = 2000) -> Calibrator:
    """Fit a :class:`Calibrator` on simulated examples."""
    if not examples:
        raise UserError("calibrator: no examples to fit on (the calibration slice is empty)")
    X = np.stack([e.features for e in examples])
    y = [e.target for e in examples]
    return Calibrator.fit(features=X, targets=y, max_iter=max_iter)


def load_or_none(path: str | os.PathLike[str] | None) -> Calibrator | None:
    """Load a calibrator file if a path is given."""
    if path is None:
        return None
    if not Path(path).exists():
        raise UserError(f"{path}: calibrator file not found", hint="fit one or set calibration.path: null")
    return Calibrator.load(path)


__all__ = [
    "FEATURE_NAMES",
    "CalibrationExample",
    "Calibrator",
    "calibration_metrics",
    "candidate_features",
    "fit_from_examples",
    "load_or_none",
    "monotone_confidence",
    "simulate_examples",
]
