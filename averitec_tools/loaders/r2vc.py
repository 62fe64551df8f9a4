"""R2VC-standardised views (``fever/r2vc``, ``vitaminc/r2vc``): ``{claim, evidence_text, label}``.

As described in the R2VC paper (§3.1): labels are mapped into the shared ternary space
SUPPORTS / REFUTES / NEI (:mod:`averitec_tools.labels`), examples whose claim is empty (or
only whitespace) are dropped, NOT ENOUGH INFO examples are kept, and FEVER's evidence
sets are flattened into one ``evidence_text`` string (see
:func:`averitec_tools.loaders.fever.flatten_evidence` for the exact concatenation).
A family supports the view by implementing ``standardize(record, *, source)``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from averitec_tools.loaders.base import label_stats, ratio
from averitec_tools.records.standardized import StandardizedExample

if TYPE_CHECKING:
    import datasets

VIEW = "r2vc"


class Standardizable(Protocol):
    def standardize(self, record: Any, *, source: str) -> StandardizedExample | None:
        """The standardised example, or ``None`` when R2VC filters the record out."""
        ...


def features() -> datasets.Features:
    """Features of standardised rows (plain strings; ``label`` in SUPPORTS/REFUTES/NEI)."""
    import datasets

    string = datasets.Value("string")
    return datasets.Features(
        {"claim": string, "evidence_text": string, "label": string, "source": string, "source_id": string}
    )


def standardize_all(family: Standardizable, records: Iterable[Any], *, source: str) -> Iterator[StandardizedExample]:
    """Standardise ``records``, dropping those the family filters out (empty claims)."""
    for record in records:
        example = family.standardize(record, source=source)
        if example is not None:
            yield example


def to_row(example: StandardizedExample) -> dict[str, Any]:
    return example.to_dict()


def from_row(row: Mapping[str, Any]) -> StandardizedExample:
    return StandardizedExample(
        claim=row["claim"],
        evidence_text=row["evidence_text"],
        label=row["label"],
        source=row.get("source") or "",
        source_id=row.get("source_id") or "",
    )


def stats(examples: Iterable[StandardizedExample]) -> dict[str, Any]:
    """Counts, label shares and mean claim/evidence lengths in whitespace words."""
    n = 0
    labels: Counter[str] = Counter()
    claim_words = evidence_words = empty_evidence = 0
    for ex in examples:
        n += 1
        labels[ex.label] += 1
        claim_words += len(ex.claim.split())
        words = len(ex.evidence_text.split())
        evidence_words += words
        empty_evidence += words == 0
    return {
        "n_examples": n,
        **label_stats(labels, n),
        "mean_claim_words": ratio(claim_words, n),
        "mean_evidence_words": ratio(evidence_words, n),
        "empty_evidence": ratio(empty_evidence, n),
    }


__all__ = ["VIEW", "features", "from_row", "standardize_all", "stats", "to_row"]
