"""Claims in, training examples out: reading AVeriTeC files and the QA pairs stages learn from."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools.baselines._run.claims import ClaimIds, claim_objects
from averitec_tools.baselines.averitec.corpus.store import answer_text
from averitec_tools.errors import UserError
from averitec_tools.records.averitec import AVeriTeCClaim


@dataclass(frozen=True)
class ClaimItem:
    """A claim with its id (the item's ``claim_id``, else its position in the file)."""

    claim_id: Any
    record: AVeriTeCClaim

    @property
    def claim(self) -> str:
        return self.record.claim


@dataclass(frozen=True)
class QAPair:
    """One evidence question with one answer (the unit the reranker and verdict models score)."""

    question: str
    answer: str
    url: str = ""
    answer_type: str | None = None
    #: Gold pairs only: the ``answer`` field alone and the Boolean explanation (``answer``
    #: holds both, as the evidence text); the upstream input strings format them apart.
    base_answer: str | None = None
    explanation: str | None = None

    @property
    def text(self) -> str:
        return f"{self.question} {self.answer}".strip()

    def with_explanation(self, joiner: str) -> str:
        """The answer with its Boolean explanation appended after ``joiner`` (unchanged
        when there is none), as the upstream training scripts build their inputs.

        Example:
            >>> QAPair("Q?", "No. X.", base_answer="No", explanation="It Was X").with_explanation(", because ")
            'No, because It Was X'
            >>> QAPair("Q?", "A sentence.").with_explanation(". ")
            'A sentence.'
        """
        if self.base_answer is None or not self.explanation:
            return self.answer
        return f"{self.base_answer}{joiner}{self.explanation}"


def read_claims(path: str | os.PathLike[str], *, skip_empty: bool = False) -> list[ClaimItem]:
    """Read an AVeriTeC claims file (``dev.json`` schema); errors name the file and item.

    ``skip_empty`` drops claims with empty text (``train.json`` has one) instead of failing;
    ids stay the file positions.

    Example:
        >>> import json, tempfile, pathlib
        >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.json"
        >>> _ = p.write_text(json.dumps([{"claim": "A.", "label": "Refuted"}, {"claim": "B.", "claim_id": 7}]))
        >>> [(c.claim_id, c.claim) for c in read_claims(p)]
        [(0, 'A.'), (7, 'B.')]
    """
    out: list[ClaimItem] = []
    ids = ClaimIds(noun="claim_id")
    for loc, item in claim_objects(path):
        record = AVeriTeCClaim.from_dict(item, where=loc.where)
        if not record.claim.strip():
            if skip_empty:
                continue
            raise UserError(f"{loc.where}: empty 'claim' text")
        claim_id = ids.check(item.get("claim_id", loc.index), where=loc.where)
        out.append(ClaimItem(claim_id=claim_id, record=record))
    if not out:
        raise UserError(f"{path}: no claims in file")
    return out


def gold_pairs(record: AVeriTeCClaim) -> list[QAPair]:
    """The claim's gold (question, answer) pairs; a question without answers is skipped.

    Example:
        >>> c = AVeriTeCClaim.from_dict({"claim": "x", "questions": [{"question": "Q?",
        ...     "answers": [{"answer": "Yes", "answer_type": "Boolean", "boolean_explanation": "B."}]}]},
        ...     where="x")
        >>> gold_pairs(c)[0].text
        'Q? Yes. B.'
    """
    return [QAPair(question=q.question, answer=answer_text(a), url=a.source_url or "", answer_type=a.answer_type,
                   base_answer=a.answer, explanation=a.boolean_explanation if a.answer_type == "Boolean" else None)
            for q in record.questions for a in q.answers]


def without_scored_claims(train: Sequence[ClaimItem], scored: Sequence[str]) -> tuple[list[ClaimItem], int]:
    """Training claims with no normalised twin among the claims being scored, and how many were dropped.

    Twins are decided by :func:`averitec_tools.leakage.duplicates.normalise_claim` (NFKC,
    casefold, punctuation and whitespace folded), the one rule both baselines use.

    Example:
        >>> t = [ClaimItem(0, AVeriTeCClaim(claim="a")), ClaimItem(1, AVeriTeCClaim(claim="India’s b."))]
        >>> [c.claim for c in without_scored_claims(t, ["india's  B"])[0]]
        ['a']
    """
    from averitec_tools.leakage.duplicates import train_duplicates

    dropped = set(train_duplicates(train=[c.claim for c in train], scored=scored))
    kept = [c for i, c in enumerate(train) if i not in dropped]
    return kept, len(dropped)


__all__ = ["ClaimItem", "QAPair", "gold_pairs", "read_claims", "without_scored_claims"]
