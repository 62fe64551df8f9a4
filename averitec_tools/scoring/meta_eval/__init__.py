"""Evaluating the evaluators: evidence scorers against the Ev2R study's human ratings.

``ratings`` loads the study's ratings and the texts they rated, ``stats`` the correlations
and claim-clustered bootstrap intervals, ``scorers`` (with ``ev2r_scorer`` and
``free_scorer``) the scorers named by spec, ``reproduce`` the study's 48 published
figures, ``lite`` the lite subset rule, ``report`` one run of all of it (``averitec meta-eval``).

    >>> from averitec_tools.scoring.meta_eval import parse_scorer
    >>> str(parse_scorer("minilm-qa-f1"))
    'minilm-qa-f1'
"""

from averitec_tools.scoring.meta_eval import (  # noqa: F401  (register their scorers)
    ev2r_scorer,
    free_scorer,
    nli_verdict,
    verdict_scorer,
)
from averitec_tools.scoring.meta_eval.ratings import DIMENSIONS, RatedItem, load_rated_items
from averitec_tools.scoring.meta_eval.scorer_base import SCORERS, Scorer
from averitec_tools.scoring.meta_eval.scorers import parse_scorer

__all__ = ["DIMENSIONS", "SCORERS", "RatedItem", "Scorer", "load_rated_items", "parse_scorer"]
