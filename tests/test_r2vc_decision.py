"""Decision rule (§3.5, Algorithm C.1 lines 14–19): argmax π, two abstention gates."""

from __future__ import annotations

import numpy as np
import pytest

from averitec_tools.baselines.r2vc.stages.calibration.decision import ABSTAIN_RATIONALE, decide
from averitec_tools.baselines.r2vc.stages.verification.verifier import VerifiedCandidate
from averitec_tools.baselines.r2vc.types import Candidate, VerifierScores


def vc(label: str, s_ver: float, rationale: str = "r") -> VerifiedCandidate:
    s = VerifierScores(0, 0, 0, 0, label, 1, 0, s_ver)
    return VerifiedCandidate(Candidate(label, rationale, (), (), None, 0), s, np.zeros((0, 3)))


def test_argmax_confidence_not_sver() -> None:
    d = decide(verified=[vc("True", 0.95), vc("False", 0.6, "because")], confidences=[0.61, 0.9])
    assert (d.label, d.index, d.confidence, d.s_ver, d.abstained, d.reason) == (
        "False", 1, 0.9, 0.6, False, "accepted")
    assert d.rationale == "because"


@pytest.mark.parametrize(
    ("pi", "s_ver", "label", "reason"),
    [
        (0.60, 0.55, "True", "accepted"),  # both thresholds inclusive
        (0.5999, 0.9, "Uncertain", "low_confidence"),
        (0.9, 0.5499, "Uncertain", "low_verifier"),
        (0.1, 0.1, "Uncertain", "low_confidence+low_verifier"),
    ],
)
def test_gates(pi: float, s_ver: float, label: str, reason: str) -> None:
    d = decide(verified=[vc("True", s_ver)], confidences=[pi])
    assert (d.label, d.reason) == (label, reason)
    if label == "Uncertain":
        assert d.abstained and d.rationale == ABSTAIN_RATIONALE and d.index == 0
        assert d.confidence == pi  # π of i*, kept for calibration analysis


def test_ties_go_to_first_candidate() -> None:
    assert decide(verified=[vc("False", 0.9), vc("True", 0.9)], confidences=[0.8, 0.8]).label == "False"


def test_no_candidates_abstains() -> None:
    d = decide(verified=[], confidences=[])
    assert (d.label, d.index, d.confidence, d.reason) == ("Uncertain", None, 0.0, "no_candidates")


def test_custom_thresholds_and_no_abstain() -> None:
    cands = [vc("True", 0.3)]
    assert decide(verified=cands, confidences=[0.4], tau_cal=0.3, tau_ver=0.2).label == "True"
    assert decide(verified=cands, confidences=[0.1], abstain=False).label == "True"


def test_no_verifier_selection_takes_first_and_ignores_verifier_gate() -> None:
    cands = [vc("False", 0.1), vc("True", 0.99)]
    d = decide(verified=cands, confidences=[0.7, 0.95], verifier_selection=False)
    assert (d.label, d.index) == ("False", 0)
    assert decide(verified=cands, confidences=[0.5, 0.95], verifier_selection=False).reason == "low_confidence"


def test_length_mismatch_is_a_bug() -> None:
    with pytest.raises(ValueError):
        decide(verified=[vc("True", 1)], confidences=[])
