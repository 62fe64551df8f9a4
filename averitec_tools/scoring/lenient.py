"""``--lenient``: accept what an official scorer accepts, and score it as that scorer does.

Strict is the default: input the official scripts would score in a surprising way is an
error. With ``--lenient`` each such case below is tolerated, counted, scored exactly as
the profile's official scorer scores it (``missing_gold_evidence``, on which the FEVER
scorer raises: as the nearest input it scores, ``"evidence": []``; ``empty_gold_evidence``,
which the FEVER scorer scores as recall 1 — and an empty set as complete in any
prediction), and reported as one
warning line per class; the signature records ``mode:lenient``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

#: Tolerated class -> what was done (the warning text after the count).
TOLERATED: dict[str, str] = {
    "unknown_label": "prediction(s) with a label that is not an exact label name, counted as wrong",
    "empty_evidence": "prediction(s) with an empty evidence list, scored 0",
    "empty_evidence_skipped": "prediction(s) with an empty evidence list, skipped and scored 0 as the EvalAI scorer does",
    "empty_questions": "prediction(s) with an empty 'questions' list, scored as eval.py does (question-only 0, "
    "string_evidence only for Q+A)",
    "null_justification": "prediction(s) with \"justification\": null, treated as absent",
    "missing_gold_evidence": "gold line(s) with a label but no 'evidence' (missing or null), scored as having no "
    "evidence sets (the FEVER scorer raises on them)",
    "empty_gold_evidence": "gold line(s) with a SUPPORTS/REFUTES label and an empty evidence list or an empty "
    "evidence set, scored as the FEVER scorer does (recall 1; an empty set is in every prediction)",
}


@dataclass
class Lenience:
    """Whether lenient mode is on, and how often each tolerated class occurred.

    Example:
        >>> strict, lenient = Lenience(), Lenience(enabled=True)
        >>> strict.tolerate("unknown_label"), lenient.tolerate("unknown_label")
        (False, True)
        >>> lenient.warnings()
        ['lenient: 1 prediction(s) with a label that is not an exact label name, counted as wrong']
    """

    enabled: bool = False
    counts: Counter[str] = field(default_factory=Counter)

    def tolerate(self, kind: str) -> bool:
        """Count one case of ``kind`` and return True if lenient; return False if strict."""
        if kind not in TOLERATED:
            raise KeyError(kind)
        if not self.enabled:
            return False
        self.counts[kind] += 1
        return True

    def warnings(self) -> list[str]:
        """One line per tolerated class that occurred, in :data:`TOLERATED` order."""
        return [f"lenient: {self.counts[k]} {TOLERATED[k]}" for k in TOLERATED if self.counts[k]]

    def summary(self) -> dict[str, int]:
        """``{class: count}`` of the tolerated classes that occurred (for ``--json``)."""
        return {k: self.counts[k] for k in TOLERATED if self.counts[k]}


__all__ = ["Lenience"]
