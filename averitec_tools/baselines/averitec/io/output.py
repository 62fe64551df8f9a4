"""Prediction records and the two output formats (``--format 2024`` / ``2023``).

Every record names the component that ran at each stage (``components``: stage → model id
and revision, or the named fallback) and the fallbacks it used (``fallbacks``), and carries
``confidence`` and ``probabilities`` for ``averitec calibration``.

* ``2024`` — the 2024 shared-task format: ``{claim_id, claim, pred_label, evidence:
  [{question, answer, url}], justification, confidence, probabilities, components,
  fallbacks}``.
* ``2023`` — the original ``eval.py`` format: ``{claim, label, justification,
  questions: [{question, answers: [{answer, source_url}]}], ...}``, aligned with the
  reference by position (no ``claim_id``: the scorers read that key as the 2024 format);
  ``--profile averitec2023`` scores its justification.

Both scorers reject an empty evidence list, so a claim without evidence (claim-only, no
store file, nothing retrieved) carries the one placeholder pair :data:`NO_EVIDENCE`,
counted as the ``no-evidence-placeholder`` fallback.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from averitec_tools.baselines.averitec.io.data import QAPair
from averitec_tools.errors import UserError

NO_EVIDENCE = QAPair(question="What evidence is there about the claim?", answer="No answer could be found.")


@dataclass
class ClaimResult:
    """One claim's prediction with provenance."""

    claim_id: Any
    claim: str
    label: str
    confidence: float
    probabilities: dict[str, float]
    evidence: list[QAPair]
    justification: str
    components: dict[str, str]
    fallbacks: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"claim_id": self.claim_id, "claim": self.claim, "label": self.label, "confidence": self.confidence,
                "probabilities": self.probabilities,
                "evidence": [{"question": p.question, "answer": p.answer, "url": p.url} for p in self.evidence],
                "justification": self.justification, "components": self.components, "fallbacks": self.fallbacks,
                **({"extra": self.extra} if self.extra else {})}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ClaimResult:
        return cls(claim_id=d["claim_id"], claim=d["claim"], label=d["label"], confidence=d["confidence"],
                   probabilities=d["probabilities"],
                   evidence=[QAPair(e["question"], e["answer"], e.get("url", "")) for e in d["evidence"]],
                   justification=d["justification"], components=d["components"], fallbacks=d["fallbacks"],
                   extra=d.get("extra", {}))


def to_2024(r: ClaimResult) -> dict[str, Any]:
    """A record in the 2024 shared-task format.

    Example:
        >>> r = ClaimResult(0, "C.", "Refuted", 0.9, {"Refuted": 0.9}, [QAPair("Q?", "A.", "u")], "J.",
        ...                 {"verdict": "m"})
        >>> to_2024(r)["evidence"]
        [{'question': 'Q?', 'answer': 'A.', 'url': 'u'}]
    """
    return {"claim_id": r.claim_id, "claim": r.claim, "pred_label": r.label,
            "evidence": [{"question": p.question, "answer": p.answer, "url": p.url} for p in r.evidence],
            "justification": r.justification, "confidence": r.confidence, "probabilities": r.probabilities,
            "components": r.components, "fallbacks": r.fallbacks}


def to_2023(r: ClaimResult) -> dict[str, Any]:
    """A record in the 2023 ``eval.py`` format (one answer per question).

    Example:
        >>> r = ClaimResult(0, "C.", "Refuted", 0.9, {"Refuted": 0.9}, [QAPair("Q?", "A.", "u")], "J.", {})
        >>> to_2023(r)["questions"]
        [{'question': 'Q?', 'answers': [{'answer': 'A.', 'source_url': 'u'}]}]
    """
    return {"claim": r.claim, "label": r.label, "justification": r.justification,
            "questions": [{"question": p.question, "answers": [{"answer": p.answer, "source_url": p.url}]}
                          for p in r.evidence],
            "confidence": r.confidence, "probabilities": r.probabilities, "components": r.components,
            "fallbacks": r.fallbacks}


FORMATS: dict[str, Callable[[ClaimResult], dict[str, Any]]] = {"2024": to_2024, "2023": to_2023}


def write_predictions(records: Sequence[ClaimResult], *, out: str | os.PathLike[str], output_format: str) -> None:
    """Write the prediction file atomically (never half-written) in ``output_format`` (``2024`` or ``2023``)."""
    from averitec_tools.baselines._run.output import write_rows

    if output_format not in FORMATS:
        raise UserError(f"unknown format {output_format!r}", hint=f"one of: {', '.join(FORMATS)}")
    write_rows([FORMATS[output_format](r) for r in records], out=out, json_lines=False)


__all__ = ["FORMATS", "NO_EVIDENCE", "ClaimResult", "to_2023", "to_2024", "write_predictions"]
