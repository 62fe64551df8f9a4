"""A rated evidence item: one submission's evidence for one claim, with the human ratings of it.

The Ev2R study rated AVeriTeC 2024 submissions' evidence (``averitec meta-eval``,
``scoring/meta_eval/ratings.py`` reads them); the evidence scorers
(:mod:`averitec_tools.metrics.evidence_scorer`) score such items.

    >>> RatedItem(0, "team", 7, "A claim.", "Question: Q? Answer: A.", "Question: Q? Answer: B.", "Refuted").ratings
    {}
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class RatedItem:
    """One kept rating row with the evidence it rated.

    Attributes:
        row: 0-based position among the kept rows (the per-item files' line order).
        team: The submitting team.
        claim_id: AVeriTeC 2024 test claim id.
        claim: Claim text.
        predicted: The submission's evidence, ``Question: ...\\nAnswer: ...`` blocks.
        reference: The gold evidence, same format.
        gold: Gold verdict label.
        ratings: Dimension → rating (``None`` where the annotator left it blank).
    """

    row: int
    team: str
    claim_id: int
    claim: str
    predicted: str
    reference: str
    gold: str
    ratings: dict[str, float | None] = field(default_factory=dict)


__all__ = ["RatedItem"]
