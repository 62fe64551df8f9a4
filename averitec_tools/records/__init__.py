"""Typed, immutable records shared by loaders, scorers, audits and baselines.

One definition per concept: the scorer and the dataset loaders both build these.
Dicts and files are accepted at the boundary and normalised once by the ``from_dict``
constructors, which raise :class:`~averitec_tools.errors.UserError` naming the place.
"""

from averitec_tools.records.averimatec import (
    AVERIMATEC_LABELS,
    AVerImaTeCAnswer,
    AVerImaTeCClaim,
    AVerImaTeCEvidence,
    AVerImaTeCMetadata,
    AVerImaTeCPrediction,
    AVerImaTeCQuestion,
    canonical_label,
    image_refs,
)
from averitec_tools.records.averitec import (
    AVERITEC_LABELS,
    Answer,
    AVeriTeCClaim,
    Question,
    parse_claim_date,
)
from averitec_tools.records.fever import FeverClaim, FeverEvidence, FeverPrediction
from averitec_tools.records.standardized import StandardizedExample
from averitec_tools.records.vitaminc import VitaminCClaim

__all__ = [
    "AVERIMATEC_LABELS",
    "AVerImaTeCAnswer",
    "AVerImaTeCClaim",
    "AVerImaTeCEvidence",
    "AVerImaTeCMetadata",
    "AVerImaTeCPrediction",
    "AVerImaTeCQuestion",
    "canonical_label",
    "image_refs",
    "AVERITEC_LABELS",
    "AVeriTeCClaim",
    "Answer",
    "FeverClaim",
    "FeverEvidence",
    "FeverPrediction",
    "Question",
    "StandardizedExample",
    "VitaminCClaim",
    "parse_claim_date",
]
