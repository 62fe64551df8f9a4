"""AVerImaTeC scoring inputs: the gold file, the submission, claims paired, images verified.

Gold is ``val.json`` (or ``train.json``) in the published layout; a claim's id is its
position. The submission is the organisers' format. Claims are paired by ``id`` (default:
every gold claim predicted exactly once, no unknown or repeated id) or by position
(``align="position"``, what the organisers' loop does: prediction ``i`` is scored against
gold claim ``i`` whatever its ``id``; predictions past the last gold claim are ignored and
counted). Every image of the submission is decoded and verified before anything is sent
(:mod:`averitec_tools.scoring.averimatec_images`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from averitec_tools.errors import PredictionCountError, UserError
from averitec_tools.records.averimatec import AVerImaTeCClaim, AVerImaTeCPrediction
from averitec_tools.scoring.averimatec_images import (
    DEFAULT_LIMITS,
    ImageInfo,
    ImageLimits,
    check_total,
    verify_prediction,
)
from averitec_tools.scoring.formats import iter_format

PathLike = str | os.PathLike[str]
ALIGNMENTS = ("id", "position")


@dataclass(frozen=True)
class PairedClaim:
    """One gold claim, its prediction, and the prediction's verified images per evidence item."""

    id: int
    gold: AVerImaTeCClaim
    pred: AVerImaTeCPrediction
    pred_images: tuple[tuple[ImageInfo, ...], ...]

    @property
    def gold_label(self) -> str:
        return self.gold.label or ""

    @property
    def gold_justification(self) -> str:
        return self.gold.justification or ""


@dataclass(frozen=True)
class PairedSet:
    """The paired claims in gold order, and predictions ignored by position alignment."""

    claims: list[PairedClaim]
    ignored_predictions: int = 0


def load_gold(path: PathLike) -> list[AVerImaTeCClaim]:
    """The gold claims, each with a label and a justification (else: the unlabelled test split).

    Example:
        >>> import json, pathlib, tempfile
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "test.json"
        >>> _ = p.write_text(json.dumps([{"claim_text": "c", "claim_images": []}]))
        >>> load_gold(p)
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: .../test.json[0]: gold claim has no 'label' (the test split has no public gold; score against val.json)
    """
    claims = []
    for loc in iter_format(path, expected="averimatec-gold", profile="averimatec", role="references"):
        claim = AVerImaTeCClaim.from_dict(loc.value, where=loc.where, claim_id=loc.index)
        for key in ("label", "justification"):
            if getattr(claim, key) is None:
                raise UserError(f"{loc.where}: gold claim has no {key!r}",
                                hint="the test split has no public gold; score against val.json")
        claims.append(claim)
    return claims


def load_predictions(path: PathLike) -> list[tuple[str, AVerImaTeCPrediction]]:
    """``(where, prediction)`` of each submission item, in file order."""
    return [(loc.where, AVerImaTeCPrediction.from_dict(loc.value, where=loc.where))
            for loc in iter_format(path, expected="averimatec", profile="averimatec", role="predictions")]


def _by_id(gold: list[AVerImaTeCClaim], preds: list[tuple[str, AVerImaTeCPrediction]], *, predictions: PathLike,
           references: PathLike) -> list[tuple[str, AVerImaTeCPrediction]]:
    by_id: dict[int, tuple[str, AVerImaTeCPrediction]] = {}
    for where, p in preds:
        if p.id in by_id:
            raise UserError(f"{where} (claim {p.id}): duplicate id (first at {by_id[p.id][0]})")
        if p.id >= len(gold):
            raise UserError(f"{where} (claim {p.id}): no gold claim with this id",
                            detail=f"{references} has {len(gold)} claims, ids 0..{len(gold) - 1}")
        by_id[p.id] = (where, p)
    if len(by_id) < len(gold):
        missing = next(i for i in range(len(gold)) if i not in by_id)
        raise PredictionCountError(f"{predictions}: {len(by_id)} predictions, not one per gold claim "
                                   f"(claim {missing} is missing)", n_predictions=len(by_id), n_references=len(gold),
                                   detail=f"{references} has {len(gold)} claims")
    return [by_id[i] for i in range(len(gold))]


def pair_claims(*, predictions: PathLike, references: PathLike, align: str = "id",
                limits: ImageLimits = DEFAULT_LIMITS) -> PairedSet:
    """Read both files, pair the claims (``align``: ``id`` or ``position``), verify every image."""
    if align not in ALIGNMENTS:
        raise UserError(f"unknown alignment {align!r}", hint=f"choose one of: {', '.join(ALIGNMENTS)}")
    gold = load_gold(references)
    preds = load_predictions(predictions)
    ignored = 0
    if align == "id":
        ordered = _by_id(gold, preds, predictions=predictions, references=references)
    else:
        if len(preds) < len(gold):
            raise PredictionCountError(f"{predictions}: {len(preds)} predictions for {len(gold)} gold claims "
                                       "(aligned by position)", n_predictions=len(preds), n_references=len(gold))
        ordered, ignored = preds[: len(gold)], len(preds) - len(gold)
    claims = []
    for i, (g, (where, p)) in enumerate(zip(gold, ordered, strict=True)):
        images = verify_prediction(p, where=f"{where} (claim {p.id})", limits=limits)
        claims.append(PairedClaim(i, g, p, images))
    check_total((info for c in claims for item in c.pred_images for info in item), where=str(predictions),
                limits=limits)
    return PairedSet(claims, ignored)


__all__ = ["ALIGNMENTS", "PairedClaim", "PairedSet", "load_gold", "load_predictions", "pair_claims"]
