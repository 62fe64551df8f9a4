"""Fit the SLC calibrator (§3.5) by simulated inference on labelled claims.

:func:`calibration_examples` runs a pipeline's retrieve → generate → verify on labelled
claims (or replays its candidate store) and returns the calibrator's training examples;
:func:`fit_calibrator` fits the calibrator on them. The offline configuration's slice fit
(:mod:`averitec_tools.baselines.r2vc.offline.fit`) and ``averitec baseline r2vc-calibrate``
both go through here.

Example:
    >>> from averitec_tools.baselines.r2vc.config import R2VCConfig
    >>> from averitec_tools.baselines.r2vc.io.claims import ClaimInput
    >>> pipe = type("P", (), {"config": R2VCConfig()})()
    >>> calibration_examples(pipe, claims=[ClaimInput(0, "c")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: claims: claim 0 has no gold label; the calibrator needs labelled claims
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.stages.calibration.calibrator import Calibrator
from averitec_tools.baselines.r2vc.stages.verification.verifier import VerifiedCandidate
from averitec_tools.errors import UserError

if TYPE_CHECKING:
    from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline


def calibration_examples(
    pipe: R2VCPipeline, *, claims: Sequence[ClaimInput], where: str = "claims", progress: bool = False
) -> list[Any]:
    """Simulate inference on labelled ``claims`` (§3.5): the calibrator's training examples.

    The first ``calibration.fit_size`` claims are used. A candidate's target is whether
    its label, written in the claims' own label space (AVeriTeC's four labels, FEVER's
    three), equals the gold label there — what ``averitec score`` counts. Each claim gets
    ``min(calibration.fit_candidates, generator.k)`` candidates (12 in the paper; with a
    candidate store, the first ones of its stored decoding); claims with empty retrieval
    are skipped.

    Raises:
        UserError: if a claim has no gold label, or the claims mix label spaces.
    """
    from averitec_tools.baselines.r2vc.io.claims import KIND_SPACES, scored_gold
    from averitec_tools.baselines.r2vc.stages.calibration.fitting import simulate_examples

    unlabelled = [c.claim_id for c in claims if c.gold_label_raw is None]
    if unlabelled:
        raise UserError(f"{where}: claim {unlabelled[0]!r} has no gold label; the calibrator needs labelled claims")
    cfg = pipe.config
    claims = list(claims)[: cfg.calibration.fit_size]
    spaces = {KIND_SPACES[c.kind] for c in claims}
    if len(spaces) > 1:
        raise UserError(f"{where}: AVeriTeC and FEVER-style claims are mixed; fit one calibrator per label space")
    k = min(cfg.calibration.fit_candidates, cfg.generator.k)
    # simulate_examples asks in claim order; claims may share a text (VitaminC's contrastive
    # pairs) and differ in their given evidence, so they are taken in order, not by text.
    pending = iter(claims)

    def candidates_for(text: str) -> list[VerifiedCandidate]:
        claim = next(pending)
        assert claim.claim == text
        return pipe.decode(claim, k=k)[1]

    return simulate_examples(
        claims=[c.claim for c in claims],
        gold_labels=[str(scored_gold(c)) for c in claims],
        candidates_for=candidates_for,
        progress=progress,
        label_space=spaces.pop() if spaces else None,
    )


def fit_calibrator(
    pipe: R2VCPipeline, *, claims: Sequence[ClaimInput], where: str = "claims", progress: bool = False
) -> Calibrator:
    """Fit the SLC calibrator (§3.5) on :func:`calibration_examples` of labelled ``claims``.

    The calibrator is fitted on ``calibration.fit_on`` candidates (see
    :func:`~averitec_tools.baselines.r2vc.stages.calibration.fitting.fit_from_examples`, which also
    reports Brier/ECE on held-out claims).
    """
    from averitec_tools.baselines.r2vc.stages.calibration.fitting import fit_from_examples

    examples = calibration_examples(pipe, claims=claims, where=where, progress=progress)
    c = pipe.config.calibration
    return fit_from_examples(examples, max_iter=c.max_iter, fit_on=c.fit_on,
                             heldout_fraction=c.heldout_fraction, seed=pipe.config.generator.seed,
                             label_features=c.label_features)


__all__ = ["calibration_examples", "fit_calibrator"]
