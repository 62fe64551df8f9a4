"""Candidate selection and two-stage abstention (paper §3.5, Algorithm C.1 lines 14–19).

``i* = argmax_i π_i``; the prediction is ``ŷ_{i*}`` if ``π_{i*} ≥ τ_cal`` and
``s_ver(i*) ≥ τ_ver``, otherwise the claim abstains. Ties in ``π`` go to the earliest
candidate. With the "no verifier selection" ablation the first candidate is taken as
is and only the confidence gate applies (the verifier neither ranks nor gates).

What an abstention emits (``on_abstain``, :data:`ON_ABSTAIN`):

* ``uncertain`` (the paper, Algorithm C.1 line 16): the label ``Uncertain`` and the
  abstention rationale. In AVeriTeC's 4-way space ``Uncertain`` is ``Not Enough
  Evidence``, so an abstention scores as correct only on a Not Enough Evidence claim.
* ``candidate``: the chosen candidate's own label and rationale, flagged
  ``abstained``. ``averitec score`` then scores that label as any other (the 4-way
  accuracy is the full-coverage accuracy), while coverage, covered accuracy and AURC
  treat the claim as abstained (a selective-prediction output).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from averitec_tools.baselines.r2vc.stages.verification.verifier import VerifiedCandidate

UNCERTAIN = "Uncertain"
#: ``calibration.on_abstain`` values (see the module docs).
ON_ABSTAIN: tuple[str, ...] = ("uncertain", "candidate")
#: ``calibration.select_by`` values: how i* is chosen among a claim's candidates.
#: ``pi`` — argmax π (the paper); ``s_ver`` — argmax s_ver, ties by π: the verifier
#: picks the candidate and π only ranks and gates the claim, so a calibrator that
#: learned the label prior (label indicators) cannot override the verifier's choice.
SELECT_BY: tuple[str, ...] = ("pi", "s_ver")
#: Rationale returned on abstention (Algorithm C.1, line 16).
ABSTAIN_RATIONALE = "Insufficient / conflicting evidence."


@dataclass(frozen=True)
class Decision:
    """The final verdict for one claim.

    Attributes:
        label: R2VC label (True/False/Uncertain) emitted.
        rationale: The chosen candidate's rationale, or the abstention rationale.
        index: Index of the chosen candidate i* (None when there were no candidates).
        confidence: π_{i*}, the calibrated probability that candidate i* is correct
            (0.0 when there were no candidates).
        s_ver: Verifier score of i* (None without candidates).
        abstained: Whether the gates rejected i* (the label is then ``Uncertain`` or,
            with ``on_abstain="candidate"``, i*'s own label).
        reason: Why: ``"accepted"``, ``"low_confidence"``, ``"low_verifier"``,
            ``"low_confidence+low_verifier"`` or ``"no_candidates"``.
    """

    label: str
    rationale: str
    index: int | None
    confidence: float
    s_ver: float | None
    abstained: bool
    reason: str


def choose_index(pi: np.ndarray, s_ver: np.ndarray, *, select_by: str = "pi") -> int:
    """i*: argmax π (``pi``), or argmax s_ver with ties to the larger π (``s_ver``); ties then go first.

    Example:
        >>> choose_index(np.array([0.2, 0.7]), np.array([0.5, 0.5]), select_by="s_ver")
        1
        >>> choose_index(np.array([0.7, 0.7]), np.array([0.1, 0.9]))
        0
    """
    pi = np.asarray(pi, dtype=np.float64)
    if select_by == "pi":
        return int(np.argmax(pi))
    s_ver = np.asarray(s_ver, dtype=np.float64)
    return int(np.lexsort((np.arange(len(pi)), -pi, -s_ver))[0])


def decide(
    *,
    verified: Sequence[VerifiedCandidate],
    confidences: Sequence[float] | np.ndarray,
    tau_cal: float = 0.60,
    tau_ver: float = 0.55,
    verifier_selection: bool = True,
    abstain: bool = True,
    on_abstain: str = "uncertain",
    select_by: str = "pi",
) -> Decision:
    """Pick i* and apply the abstention gates.

    Args:
        verified: The claim's verified candidates.
        confidences: π_i for each candidate (calibrated, or the monotone map of s_ver).
        tau_cal: Confidence threshold τ_cal (0.60).
        tau_ver: Verifier threshold τ_ver (0.55).
        verifier_selection: False for the "no verifier selection" ablation.
        abstain: False to return ŷ_{i*} unconditionally.
        on_abstain: What an abstention emits: ``uncertain`` (the paper) or
            ``candidate`` (i*'s label, flagged abstained).
        select_by: How i* is chosen (:data:`SELECT_BY`): ``pi`` (the paper) or ``s_ver``.

    Example:
        >>> from averitec_tools.baselines.r2vc.types import Candidate, VerifierScores
        >>> def vc(label, s_ver):
        ...     s = VerifierScores(0, 0, 0, 0, label, 1, 0, s_ver)
        ...     return VerifiedCandidate(Candidate(label, "r", (), (), None, 0), s, np.zeros((0, 3)))
        >>> d = decide(verified=[vc("True", 0.7), vc("False", 0.9)], confidences=[0.8, 0.65])
        >>> d.label, d.index, d.abstained
        ('True', 0, False)
        >>> decide(verified=[vc("True", 0.5)], confidences=[0.8]).reason
        'low_verifier'
        >>> d = decide(verified=[vc("True", 0.5)], confidences=[0.8], on_abstain="candidate")
        >>> d.label, d.abstained
        ('True', True)
        >>> decide(verified=[vc("True", 0.7), vc("False", 0.9)], confidences=[0.8, 0.65], select_by="s_ver").index
        1
    """
    if len(verified) != len(confidences):
        raise ValueError("one confidence per candidate is required")
    if on_abstain not in ON_ABSTAIN:
        raise ValueError(f"on_abstain must be one of {ON_ABSTAIN}, got {on_abstain!r}")
    if not verified:
        return Decision(UNCERTAIN, ABSTAIN_RATIONALE, None, 0.0, None, True, "no_candidates")
    if select_by not in SELECT_BY:
        raise ValueError(f"select_by must be one of {SELECT_BY}, got {select_by!r}")
    pi = np.asarray(confidences, dtype=np.float64)
    best = 0 if not verifier_selection else choose_index(pi, np.array([v.scores.s_ver for v in verified]),
                                                          select_by=select_by)
    return _gated(verified[best], best, float(pi[best]), tau_cal=tau_cal, tau_ver=tau_ver,
                  verifier_gate=verifier_selection, abstain=abstain, on_abstain=on_abstain)


def _gated(chosen: VerifiedCandidate, best: int, pi: float, *, tau_cal: float, tau_ver: float, verifier_gate: bool,
           abstain: bool, on_abstain: str) -> Decision:
    """The decision on candidate ``best`` (π = ``pi``) after the two gates (see the module docs)."""
    s_ver = float(chosen.scores.s_ver)
    reasons = []
    if pi < tau_cal:
        reasons.append("low_confidence")
    if verifier_gate and s_ver < tau_ver:
        reasons.append("low_verifier")
    if abstain and reasons:
        if on_abstain == "candidate":
            return Decision(chosen.candidate.label, chosen.candidate.rationale, best, pi, s_ver, True,
                            "+".join(reasons))
        return Decision(UNCERTAIN, ABSTAIN_RATIONALE, best, pi, s_ver, True, "+".join(reasons))
    return Decision(chosen.candidate.label, chosen.candidate.rationale, best, pi, s_ver, False, "accepted")


__all__ = ["ABSTAIN_RATIONALE", "UNCERTAIN", "Decision", "choose_index", "decide"]
