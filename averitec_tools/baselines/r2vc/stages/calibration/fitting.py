"""Fitting the SLC calibrator (:mod:`~averitec_tools.baselines.r2vc.stages.calibration.calibrator`).

The calibrator is fitted on a held-out slice by simulating inference (:func:`simulate_examples`):
each claim gets up to 12 candidates and the target of a candidate is whether its label
equals the gold label. Which candidates are fitted on (``calibration.fit_on``):

* ``all`` (default) — every candidate of the claim, weighted 1/k so each claim counts
  once. Inference picks i* = argmax π over *all* candidates, so π must rank every
  candidate, not only the one a rule chose before π existed.
* ``max_s_ver`` — only the candidate with the highest s_ver (the paper's wording; the
  chosen candidate at inference is then selected by a different rule than at fit time).

:func:`fit_from_examples` reports Brier/ECE of π(i*) on claims held out from the
fit (``heldout_*`` in ``fit_info``), then refits on every claim, and records the
(π, s_ver) Pareto frontier of the slice's candidates (``gate_frontier``) so a run can
warn when its gates cannot be satisfied jointly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from averitec_tools.baselines.r2vc.stages.calibration.calibrator import (
    ALL_FEATURES,
    FEATURE_NAMES,
    Calibrator,
    calibration_metrics,
    candidate_features,
)
from averitec_tools.baselines.r2vc.stages.verification.verifier import VerifiedCandidate
from averitec_tools.errors import UserError
from averitec_tools.labels import map_label


@dataclass(frozen=True)
class CalibrationExample:
    """One simulated-inference claim: every candidate's features (all of :data:`ALL_FEATURES`), labels and s_ver.

    ``features``/``predicted`` of the max-s_ver candidate (the paper's rule) are
    :attr:`chosen_features` / :attr:`predicted`.
    """

    claim: str
    all_features: np.ndarray
    labels: tuple[str, ...]
    s_ver: np.ndarray
    gold: str

    @property
    def best(self) -> int:
        return int(np.argmax(self.s_ver))

    @property
    def features(self) -> np.ndarray:
        return self.all_features[self.best, : len(FEATURE_NAMES)]

    @property
    def predicted(self) -> str:
        return self.labels[self.best]

    @property
    def target(self) -> int:
        return int(self.predicted == self.gold)

    @property
    def targets(self) -> np.ndarray:
        return np.array([int(lab == self.gold) for lab in self.labels])

    def features_for(self, cal: Calibrator | None = None, *, label_features: bool = False) -> np.ndarray:
        """Every candidate's features in the width ``cal`` (or ``label_features``) reads."""
        width = len(cal.coef) if cal is not None else (len(ALL_FEATURES) if label_features else len(FEATURE_NAMES))
        return self.all_features[:, :width]


def simulate_examples(
    *,
    claims: Sequence[str],
    gold_labels: Sequence[str],
    candidates_for: Callable[[str], Sequence[VerifiedCandidate]],
    progress: bool = False,
    label_space: str | None = None,
) -> list[CalibrationExample]:
    """Simulate inference on a held-out slice to build calibrator training examples.

    Args:
        claims: Claim texts of the slice.
        gold_labels: Their gold labels, in ``label_space`` (or in the R2VC space
            True/False/Uncertain when it is None).
        candidates_for: Runs retrieve → generate (≤ 12 candidates) → verify for a claim.
        progress: Show a tqdm bar.
        label_space: The space the predictions are scored in (``averitec``, ``fever``):
            candidate labels are written there before they are compared with the gold
            label, so the targets are what the scorer counts (an Uncertain candidate is
            Not Enough Evidence and wrong on a Conflicting Evidence/Cherrypicking claim).

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
        labels = tuple(v.candidate.label for v in verified)
        if label_space is not None:
            labels = tuple(map_label(lab, source="r2vc", target=label_space) for lab in labels)
        out.append(CalibrationExample(
            claim=claim, all_features=candidate_features(verified, label_features=True),
            labels=labels,
            s_ver=np.array([v.scores.s_ver for v in verified], dtype=np.float64), gold=gold,
        ))
    return out


def _design(examples: Sequence[CalibrationExample], fit_on: str,
            label_features: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    if fit_on == "max_s_ver":
        return (np.stack([e.features_for(label_features=label_features)[e.best] for e in examples]),
                np.array([e.target for e in examples]), np.ones(len(examples)))
    if fit_on != "all":
        raise ValueError(f"fit_on must be 'all' or 'max_s_ver', got {fit_on!r}")
    X = np.concatenate([e.features_for(label_features=label_features) for e in examples])
    y = np.concatenate([e.targets for e in examples])
    w = np.concatenate([np.full(len(e.labels), 1.0 / len(e.labels)) for e in examples])
    return X, y, w


def chosen_correctness(cal: Calibrator, examples: Sequence[CalibrationExample]) -> tuple[np.ndarray, np.ndarray]:
    """π(i*) and whether i* = argmax π is right, per claim (the inference rule)."""
    prob, correct = [], []
    for e in examples:
        pi = cal.predict(e.features_for(cal))
        best = int(np.argmax(pi))
        prob.append(float(pi[best]))
        correct.append(int(e.labels[best] == e.gold))
    return np.array(prob), np.array(correct)


def pareto_frontier(points: np.ndarray) -> list[list[float]]:
    """The non-dominated (π, s_ver) points (both higher-is-better), rounded to 6 places.

    Example:
        >>> pareto_frontier(np.array([[0.9, 0.1], [0.5, 0.5], [0.4, 0.4], [0.1, 0.9]]))
        [[0.9, 0.1], [0.5, 0.5], [0.1, 0.9]]
    """
    order = np.lexsort((-points[:, 1], -points[:, 0]))
    out: list[list[float]] = []
    best_sver = -math.inf
    for i in order:
        pi, sv = float(points[i, 0]), float(points[i, 1])
        if sv > best_sver:
            out.append([round(pi, 6), round(sv, 6)])
            best_sver = sv
    return out


def fit_from_examples(
    examples: Sequence[CalibrationExample],
    *,
    max_iter: int = 2000,
    fit_on: str = "all",
    heldout_fraction: float = 0.2,
    seed: int = 0,
    label_features: bool = False,
) -> Calibrator:
    """Fit a :class:`Calibrator` on simulated examples (see the module docs).

    With ``heldout_fraction > 0`` and at least 5 claims, a calibrator is first fitted
    without a seeded ``heldout_fraction`` of the claims and Brier/ECE of π(i*) are
    measured on those (``heldout_brier``, ``heldout_ece``, ``heldout_accuracy``,
    ``heldout_n``); the returned calibrator is then fitted on every claim.
    """
    if not examples:
        raise UserError("calibrator: no examples to fit on (the calibration slice is empty)")
    heldout: dict[str, Any] = {}
    n = len(examples)
    n_out = int(round(n * heldout_fraction))
    if heldout_fraction > 0 and n >= 5 and 0 < n_out < n:
        perm = np.random.default_rng(seed).permutation(n)
        test = [examples[i] for i in perm[:n_out]]
        train = [examples[i] for i in perm[n_out:]]
        X, y, w = _design(train, fit_on, label_features)
        part = Calibrator.fit(features=X, targets=y, max_iter=max_iter, sample_weight=w)
        prob, correct = chosen_correctness(part, test)
        m = calibration_metrics(y_true=correct, prob=prob)
        heldout = {"heldout_brier": m["brier"], "heldout_ece": m["ece"], "heldout_n": m["n"],
                   "heldout_accuracy": float(correct.mean())}
    X, y, w = _design(examples, fit_on, label_features)
    cal = Calibrator.fit(features=X, targets=y, max_iter=max_iter, sample_weight=w)
    prob, correct = chosen_correctness(cal, examples)
    points = np.array([[p, s] for e in examples for p, s in zip(cal.predict(e.features_for(cal)), e.s_ver, strict=True)])
    cal.fit_info.update({
        "fit_on": fit_on,
        "claims": n,
        "fit_slice_chosen_accuracy": float(correct.mean()),
        **heldout,
        "gate_frontier": pareto_frontier(points),
    })
    return cal


__all__ = ["CalibrationExample", "chosen_correctness", "fit_from_examples", "simulate_examples"]
