"""Input checks of :func:`averitec_tools.scoring.calibration.calibration_report`: settings,
confidences and probabilities (messages name the ``averitec calibration`` options).

The cheap checks (:func:`prescan`) run before the profile scores anything.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from averitec_tools.errors import UserError

if TYPE_CHECKING:
    from averitec_tools.scoring.profiles.base import ClaimScore


def check_settings(
    *, n_bins: int, threshold: float, target_risk: float, target_coverage: float, n_resamples: int,
    confidence_level: float,
) -> None:
    if n_bins < 1:
        raise UserError(f"--n-bins must be ≥ 1, got {n_bins}")
    if not 0.0 <= threshold <= 1.0:
        raise UserError(f"--threshold must be in [0, 1], got {threshold}")
    if not 0.0 <= target_risk <= 1.0:
        raise UserError(f"--target-risk must be in [0, 1], got {target_risk}")
    if not 0.0 < target_coverage <= 1.0:
        raise UserError(f"--target-coverage must be in (0, 1], got {target_coverage}")
    if n_resamples < 0:
        raise UserError(f"--n-resamples must be ≥ 0, got {n_resamples}")
    if not 0.0 < confidence_level < 1.0:
        raise UserError(f"--confidence-level must be in (0, 1), got {confidence_level}")


def bad_probabilities(probs: Any) -> str | None:
    """Why a ``probabilities`` object is unusable (``None`` if it is fine)."""
    import math

    if not isinstance(probs, dict):
        return f"probabilities must be an object {{label: number}}, got {probs!r}"
    values = list(probs.values())
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in values):
        return f"probabilities must be numbers, got {probs!r}"
    total = math.fsum(values)
    if any(not 0.0 <= v <= 1.0 for v in values) or not abs(total - 1.0) <= 1e-6:  # NaN fails
        return f"probabilities must be in [0, 1] and sum to 1 (sum is {total:.6g})"
    return None


def prescan(path: str) -> None:
    """Cheap checks of every item's confidence/probabilities, before the (slow) scoring."""
    from averitec_tools.jsonio import iter_records

    for loc in iter_records(path):
        item = loc.value
        if not isinstance(item, dict):
            continue  # the profile reports the item itself
        cid = item.get("claim_id", item.get("id", loc.index))
        conf = item.get("confidence")
        if conf is not None and (
            isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0.0 <= conf <= 1.0
        ):
            raise UserError(f"{loc.where}: claim {cid!r}: confidence {conf!r} is not a number in [0, 1]")
        if item.get("probabilities") is not None:
            why = bad_probabilities(item["probabilities"])
            if why:
                raise UserError(f"{loc.where}: claim {cid!r}: {why}")


def check_gold(claims: Sequence[ClaimScore], path: str) -> None:
    for claim in claims:
        if claim.gold_label is None:
            raise UserError(f"{path}: claim {claim.claim_id!r} has no gold label, so correctness is undefined")


def confidence_claims(
    claims: Sequence[ClaimScore], *, predictions: str, drop_missing: bool
) -> tuple[list[ClaimScore], int]:
    missing = [c for c in claims if c.confidence is None]
    if missing and not drop_missing:
        if len(missing) == len(claims):
            raise UserError(
                f"{predictions}: no claim has a 'confidence' field",
                hint="add a confidence in [0, 1] to every prediction",
            )
        raise UserError(
            f"{predictions}: claim {missing[0].claim_id!r} has no 'confidence'"
            + (f" ({len(missing)} claims lack one)" if len(missing) > 1 else ""),
            hint="add it, or pass --drop-missing-confidence to leave such claims out",
        )
    kept = [c for c in claims if c.confidence is not None]
    for c in kept:
        try:
            value = float(c.confidence)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            value = float("nan")
        if isinstance(c.confidence, bool) or not 0.0 <= value <= 1.0:  # NaN fails too
            raise UserError(
                f"{predictions}: claim {c.claim_id!r}: confidence {c.confidence!r} is not a number in [0, 1]"
            )
    if not kept:
        raise UserError(f"{predictions}: no claim with a confidence left to analyse")
    return kept, len(missing)


__all__ = ["check_settings", "check_gold", "confidence_claims", "prescan"]
