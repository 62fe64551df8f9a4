"""Evaluating the evaluators: evidence scorers against the Ev2R study's human ratings.

``ratings`` loads the study's ratings and the texts they rated, ``stats`` the correlations
and claim-clustered bootstrap intervals, ``reproduce`` the study's 48 published figures,
``lite`` the lite subset rule, ``leaderboard`` the rated teams against the 2024 board, and
``report`` one run of all of it (``averitec meta-eval``). The scorers themselves are
metrics, in the one registry (:mod:`averitec_tools.metrics.evidence_scorer`):

    >>> from averitec_tools.metrics.evidence_scorer import parse_evidence_scorer
    >>> str(parse_evidence_scorer("minilm-qa-f1"))
    'minilm-qa-f1'
"""

from averitec_tools.scoring.meta_eval.ratings import DIMENSIONS, RatedItem, load_rated_items

__all__ = ["DIMENSIONS", "RatedItem", "load_rated_items"]
