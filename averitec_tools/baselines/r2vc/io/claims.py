"""Claim input of the R2VC pipeline.

Input: an AVeriTeC file (``dev.json``-style array of claims; ``claim_id`` is the
claim's position unless the item has one) or a FEVER/VitaminC-style file (JSON array or
JSONL of ``{id, claim, label?}``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from averitec_tools.baselines._run.claims import ClaimIds, claim_objects
from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.errors import UserError
from averitec_tools.labels import map_label

#: The label space a claim file's ``label`` field is written in, by :attr:`ClaimInput.kind`.
KIND_SPACES: dict[str, str] = {"averitec": "averitec", "ternary": "fever"}


@dataclass(frozen=True)
class ClaimInput:
    """One claim to check.

    Attributes:
        claim_id: AVeriTeC: the position in the file (or the item's ``claim_id``);
            FEVER/VitaminC: the item's ``id``.
        claim: Claim text.
        gold_label: Gold label in the R2VC space (True/False/Uncertain), if known.
        gold_label_raw: Gold label as written in the file.
        kind: ``"averitec"`` or ``"ternary"`` (FEVER ``id`` / VitaminC ``unique_id``
            rows) — selects the default output format.
        evidence: The claim's own evidence passages (``--evidence given``), or ``None``.
    """

    claim_id: Any
    claim: str
    gold_label: str | None = None
    gold_label_raw: str | None = None
    kind: str = "averitec"
    #: The claim's own evidence (``--evidence given``, the oracle-document setting):
    #: retrieval is skipped and these passages are the pool E(c). ``None``: retrieve.
    evidence: tuple[Passage, ...] | None = field(default=None, repr=False)


def read_claims(path: str) -> list[ClaimInput]:
    """Read claims from an AVeriTeC or FEVER/VitaminC file (errors name file and item).

    Example:
        >>> import json, tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.json"
        >>> _ = p.write_text(json.dumps([{"claim": "A.", "label": "Refuted"}]))
        >>> read_claims(str(p))[0]
        ClaimInput(claim_id=0, claim='A.', gold_label='False', gold_label_raw='Refuted', kind='averitec')
    """
    out: list[ClaimInput] = []
    ids = ClaimIds(noun="claim id")
    for loc, item in claim_objects(path):
        claim = item.get("claim")
        if not isinstance(claim, str) or not claim.strip():
            raise UserError(f"{loc.where}: missing or empty 'claim' text")
        # FEVER rows have an ``id``, VitaminC rows (``tals/vitaminc``) a ``unique_id``.
        ternary_key = next((key for key in ("id", "unique_id") if key in item), None)
        kind = "ternary" if ternary_key is not None and "questions" not in item else "averitec"
        claim_id = ids.check(item[ternary_key] if ternary_key is not None and kind == "ternary"
                             else item.get("claim_id", loc.index),
                             where=loc.where)
        raw = item.get("label")
        gold = None
        if raw is not None:
            space = "averitec" if kind == "averitec" else "fever"
            gold = map_label(str(raw), source=space, target="r2vc", where=f"{loc.where} (claim {claim_id!r})")
        out.append(ClaimInput(claim_id=claim_id, claim=claim, gold_label=gold,
                              gold_label_raw=None if raw is None else str(raw), kind=kind))
    if not out:
        raise UserError(f"{path}: no claims in file")
    return out


def scored_gold(claim: ClaimInput, *, space: str | None = None) -> str | None:
    """The claim's gold label in the space it is scored in (``None`` without a label).

    ``space`` defaults to the claim file's own space (AVeriTeC's four labels, FEVER's
    three): Conflicting Evidence/Cherrypicking stays itself, so no R2VC label matches it,
    exactly as ``averitec score`` counts it.

    Example:
        >>> c = ClaimInput(0, "x", "Uncertain", "Conflicting Evidence/Cherrypicking")
        >>> scored_gold(c), scored_label("Uncertain", space="averitec")
        ('Conflicting Evidence/Cherrypicking', 'Not Enough Evidence')
    """
    if claim.gold_label_raw is None:
        return None
    source = KIND_SPACES[claim.kind]
    return map_label(claim.gold_label_raw, source=source, target=space or source)


def scored_label(label: str, *, space: str) -> str:
    """An R2VC label (True/False/Uncertain) written in ``space``, as an output file has it."""
    return map_label(label, source="r2vc", target=space)


__all__ = ["KIND_SPACES", "ClaimInput", "read_claims", "scored_gold"]
