"""``hu-meteor-study``: the Ev2R study's own ``calc_hungarian_meteor``, as an evidence scorer.

The study splits each evidence text at every ``"Question"`` into blocks (each block keeps
the word), fills the reference × candidate METEOR matrix, solves the assignment and
divides the matched sum by the *number of characters* of the predicted text -- a quirk
kept so that its published correlations can be recomputed (``docs/meta_eval.md``).

    >>> study_blocks("Question: A?\\nAnswer: B.\\nQuestion: C?")
    ['Question: A?\\nAnswer: B.', 'Question: C?']
"""

from __future__ import annotations

from typing import Any

from averitec_tools.metrics.base import register_metric
from averitec_tools.metrics.hungarian_meteor import assignment_utility, pairwise_matrix
from averitec_tools.metrics.meteor import MeteorEngineScorer
from averitec_tools.records.rated import RatedItem


def study_blocks(text: str) -> list[str]:
    """The study's blocks: split at every ``"Question"``, each block stripped and prefixed again."""
    return ["Question" + x.strip() for x in text.split("Question") if x]


_DESCRIPTION = ("the Ev2R study's calc_hungarian_meteor: blocks split at every 'Question', matched METEOR sum "
                "divided by the characters of the predicted text")


@register_metric
class StudyHuMeteor(MeteorEngineScorer, name="hu-meteor-study", higher_is_better=True, description=_DESCRIPTION,
                    citation="Akhtar et al. (2024), Ev2R (fc-evidence-evaluation)"):
    """The study's Hungarian METEOR (see the module docstring)."""

    def score_item(self, item: RatedItem, ctx: Any) -> float:
        # the study's matrix is reference x candidate; the assignment sum is the same
        m = pairwise_matrix(candidates=study_blocks(item.predicted), references=study_blocks(item.reference), engine=ctx)
        return assignment_utility(m, normaliser=len(item.predicted))


__all__ = ["StudyHuMeteor"]
