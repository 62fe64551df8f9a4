"""``averitec score --evidence-scorer SPEC``: an extra, non-official evidence score per claim.

The option never replaces a profile's official figures: it adds ``evidence_scorer`` to the
summary (spec, signature, mean) and to every claim's values, and appends
``evidence-scorer:<its signature>`` to the result's signature, so a printed score always
says it is there. Only scorers that score lists of Q+A strings can be used (today
``minilm-qa-f1``, ``minilm-verdict`` and ``nli-verdict``).

    >>> evidence_scorer_for("bleu")
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: --evidence-scorer bleu: this scorer cannot score Q+A string lists (usable: minilm-qa-f1, minilm-verdict, nli-verdict)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from averitec_tools.errors import UserError


def evidence_scorer_for(spec: str) -> Any:
    """The scorer ``spec`` names, checked to score string lists (``score_strings``, ``signature``)."""
    from averitec_tools.scoring.meta_eval.scorer_base import SCORERS
    from averitec_tools.scoring.meta_eval.scorers import parse_scorer, scorer_names

    scorer = parse_scorer(spec)
    if not hasattr(scorer, "score_strings"):
        usable = [n for n in scorer_names() if hasattr(SCORERS.get(n), "score_strings")]
        raise UserError(f"--evidence-scorer {spec}: this scorer cannot score Q+A string lists "
                        f"(usable: {', '.join(usable)})")
    return scorer


def evidence_scores(*, spec: str, predicted: Sequence[Sequence[str]], references: Sequence[Sequence[str]],
                    claims: Sequence[str] | None = None, labels: Sequence[str] | None = None) -> tuple[list[float], str]:
    """(per-claim scores, signature) of the ``--evidence-scorer`` on each claim's Q+A strings.

    ``claims`` and ``labels`` (the gold claim texts and labels) are needed by scorers that
    judge verdicts (``minilm-verdict``).
    """
    scorer = evidence_scorer_for(spec)
    scores = scorer.score_strings(predicted=predicted, references=references, claims=claims, labels=labels)
    return scores, scorer.signature()


__all__ = ["evidence_scorer_for", "evidence_scores"]
