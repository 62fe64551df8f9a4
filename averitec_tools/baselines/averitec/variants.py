"""Pipeline variants: which stages run and where the evidence comes from."""

from __future__ import annotations

from dataclasses import dataclass

from averitec_tools.errors import UserError


@dataclass(frozen=True)
class Variant:
    """A pipeline variant.

    Attributes:
        name: CLI name.
        evidence: ``"store"`` (retrieve from the knowledge store), ``"gold"`` (the claim's
            gold QA pairs: the ceiling of the verdict stage) or ``"none"`` (claim only).
        rerank: Whether the reranker picks the top 3 (else the BM25 order does).
        description: One line for ``--help`` and the docs.
    """

    name: str
    evidence: str
    rerank: bool
    description: str

    @property
    def needs_store(self) -> bool:
        return self.evidence == "store"


VARIANTS: dict[str, Variant] = {v.name: v for v in (
    Variant("full", "store", True, "store → BM25 → questions → reranker → verdict → justification"),
    Variant("no-reranker", "store", False, "as full, keeping the top 3 QA pairs by BM25 rank"),
    Variant("claim-only", "none", False, "verdict from the claim alone (no evidence)"),
    Variant("gold-evidence", "gold", False, "the claim's gold QA pairs → verdict → justification (oracle)"),
)}


def get_variant(name: str) -> Variant:
    """Look a variant up by name.

    Example:
        >>> get_variant("gold-evidence").evidence
        'gold'
    """
    if name not in VARIANTS:
        raise UserError(f"unknown variant {name!r}", hint=f"one of: {', '.join(VARIANTS)}")
    return VARIANTS[name]


__all__ = ["VARIANTS", "Variant", "get_variant"]
