"""The contract every scoring profile implements.

A profile reproduces one official scorer (file formats, normalisation, thresholds and
quirks). Besides the headline summary it returns one :class:`ClaimScore` per claim, so
that ``averitec compare`` (paired significance tests), ``averitec calibration`` and
``--per-claim`` can work on any profile without knowing its format.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class ClaimScore:
    """Per-claim outcome under one profile.

    Attributes:
        claim_id: The claim's id (index or ``id`` field) as the profile aligns files.
        gold_label: Reference label (``None`` if the reference has none).
        pred_label: Predicted label as submitted (after the profile's normalisation).
        values: Per-claim metric values; every headline metric that is a mean over claims
            appears here under the same key the summary uses (e.g. ``"questions_answers"``,
            ``"averitec_score@0.25"``, ``"label_accuracy"``), so resampling claims and
            averaging ``values`` reproduces the headline figure.
        confidence: The submission's ``confidence`` field for this claim, if any.
        probabilities: The submission's per-label ``probabilities``, if any.
        claim_type: Claim types (AVeriTeC) used for per-type breakdowns.
    """

    claim_id: int | str
    gold_label: str | None
    pred_label: str | None
    values: Mapping[str, float]
    confidence: float | None = None
    probabilities: Mapping[str, float] | None = None
    claim_types: tuple[str, ...] = ()


@dataclass(frozen=True)
class ProfileResult:
    """What a profile returns: the JSON summary, its signature and per-claim scores.

    ``summary`` is exactly the object ``averitec score --json`` prints (it includes
    ``profile``, ``signature`` and ``n_claims``).
    """

    profile: str
    signature: str
    n_claims: int
    summary: Mapping[str, Any]
    per_claim: tuple[ClaimScore, ...] = field(default=(), repr=False)
    #: Label set used for macro-F1 (so resampled macro-F1 uses the same classes).
    labels: tuple[str, ...] = ()
    #: Lines for stderr (e.g. one per input class tolerated by ``--lenient``, with its count).
    warnings: tuple[str, ...] = ()


class ScoringProfile(ABC):
    """Base class for a scoring profile; subclasses register in ``profiles.PROFILES``."""

    name: ClassVar[str]
    #: One line shown in ``averitec score --help``.
    description: ClassVar[str]
    #: Citation of the scorer being reproduced.
    citation: ClassVar[str] = ""
    #: Names of the per-claim values :meth:`score` returns with default options (empty:
    #: not fixed in advance, e.g. named after an option). ``averitec compare --metric`` and
    #: a competition's ``primary_metric`` are checked against them before anything is
    #: scored; ``tests/test_cli_wrong_data.py`` checks them against real results.
    per_claim_metrics: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def score(
        self,
        *,
        predictions: PathLike,
        references: PathLike,
        jobs: int | None = None,
        progress: bool = False,
        **options: Any,
    ) -> ProfileResult:
        """Score ``predictions`` against ``references`` (both file paths).

        Raises:
            UserError: for any malformed, mismatched or wrong-format input.
        """


__all__ = ["ClaimScore", "PathLike", "ProfileResult", "ScoringProfile"]
