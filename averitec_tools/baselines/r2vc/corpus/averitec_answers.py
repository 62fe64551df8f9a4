"""AVeriTeC gold answers as passages: the corpus of the offline configuration and the evidence
of an AVeriTeC claim under ``--evidence given``."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import urlparse

from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.records.averitec import AVeriTeCClaim


def answer_passages(dev: Sequence[AVeriTeCClaim], *, split: str = "dev") -> list[tuple[int, Passage]]:
    """Every answer of every claim as a passage, with the index of its claim.

    Example:
        >>> c = AVeriTeCClaim.from_dict({"claim": "x", "questions": [{"question": "q", "answers": [
        ...     {"answer": "Yes", "answer_type": "Boolean", "boolean_explanation": "It is.",
        ...      "source_url": "https://a.org/p"}]}]}, where="t")
        >>> [(i, p.text, p.title) for i, p in answer_passages([c])]
        [(0, 'Yes. It is.', 'a.org')]
    """
    out = []
    for ci, claim in enumerate(dev):
        for qi, q in enumerate(claim.questions):
            for ai, a in enumerate(q.answers):
                if a.answer_type == "Unanswerable" or not a.answer.strip():
                    continue
                text = a.answer.strip()
                if a.answer_type == "Boolean" and a.boolean_explanation:
                    text = f"{text.rstrip('.')}. {a.boolean_explanation.strip()}"
                url = a.source_url or ""
                out.append((ci, Passage(doc_id=f"averitec-{split}-{ci}-q{qi}-a{ai}",
                                        title=urlparse(url).netloc or "AVeriTeC answer", url=url, text=text)))
    return out


__all__ = ["answer_passages"]
