"""The R2VC standardised example: ``{claim, evidence_text, label}`` in the ternary space.

R2VC (§3.1) trains on VitaminC and evaluates on FEVER after mapping both into one schema
with labels SUPPORTS / REFUTES / NEI (see :mod:`averitec_tools.labels`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from averitec_tools.labels import TERNARY_LABELS


@dataclass(frozen=True)
class StandardizedExample:
    """One standardised claim–evidence–label triple.

    Attributes:
        claim: The claim text (never empty: empty claims are filtered out).
        evidence_text: The evidence as one string (FEVER sets are flattened).
        label: ``SUPPORTS``, ``REFUTES`` or ``NEI``.
        source: The dataset id it came from (``"fever/paper_dev"``).
        source_id: The example's id in the source dataset, as a string.

    Example:
        >>> StandardizedExample(claim="c", evidence_text="e", label="NEI",
        ...                     source="vitaminc/dev", source_id="7").label
        'NEI'
    """

    claim: str
    evidence_text: str
    label: str
    source: str = ""
    source_id: str = ""

    def __post_init__(self) -> None:
        if self.label not in TERNARY_LABELS:
            raise ValueError(f"label must be one of {TERNARY_LABELS}, got {self.label!r}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim": self.claim,
            "evidence_text": self.evidence_text,
            "label": self.label,
            "source": self.source,
            "source_id": self.source_id,
        }


__all__ = ["StandardizedExample"]
