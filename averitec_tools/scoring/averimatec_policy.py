"""The ``averimatec`` profile under the shared judge-failure policy
(:mod:`averitec_tools.metrics.judge_policy`): the input bound, the judge snapshot, and what
each failure means for a claim.

* **Input bound** (``judge_max_items``, ``judge_item_chars``): the judge is shown the first
  ``judge_max_items`` predicted evidence items (with their images) and questions, and each
  predicted text (evidence item, question, justification) cut to ``judge_item_chars``
  characters; gold is never cut. ``averitec score`` sends everything by default, as the
  organisers' evaluator does; a leaderboard phase bounds it
  (:data:`~averitec_tools.metrics.judge_policy.BOARD_INPUT_BOUND` unless the phase says
  otherwise). The signature's ``input`` field says which.
* **Failures**: what the submission's content causes scores as the organisers' code scores
  it -- a request refused for its content gets the empty reply (0; counted in
  ``judge.refused_content``), an unparseable reply is parsed as theirs parses it (0 where
  theirs raises). Only a failure on the judge's side (after its retries) stops the run
  (``raise``), scores 0 (``zero``) or leaves the claim unscored (``unscored``: the result
  is incomplete until it is scored again).
* **Snapshot** (``judge_snapshot``: a JSON file): replies stored there by a run with the
  same model, prompts and settings are re-used; afterwards it holds every reply the score
  depends on; its digest is the signature's ``judge_snapshot`` field.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from averitec_tools.metrics.averimatec_prompts import MAX_NEW_TOKENS
from averitec_tools.metrics.judge_policy import InputBound
from averitec_tools.records.averimatec import AVerImaTeCEvidence
from averitec_tools.scoring.averimatec_inputs import PairedClaim, PairedSet

#: The signature's ``max_tokens`` field: the reply limits of the ``qa`` call and of every other call.
MAX_TOKENS_FIELD = f"qa={MAX_NEW_TOKENS['qa']},other={MAX_NEW_TOKENS['evidence']}"


def bounded_claim(claim: PairedClaim, bound: InputBound) -> tuple[PairedClaim, bool]:
    """What the judge is shown of a claim's prediction, and whether the bound changed it.

    Example:
        >>> from averitec_tools.records.averimatec import AVerImaTeCClaim, AVerImaTeCPrediction
        >>> pred = AVerImaTeCPrediction(0, ("q1?", "q2?"), "long justification", "Refuted",
        ...                             (AVerImaTeCEvidence("first"), AVerImaTeCEvidence("second")))
        >>> c, cut = bounded_claim(PairedClaim(0, AVerImaTeCClaim("c"), pred, ((), ())), InputBound(1, 4))
        >>> c.pred.questions, c.pred.justification, [e.text for e in c.pred.evidence], cut
        (('q1?',), 'long', ['firs'], True)
    """
    if not bound.active:
        return claim, False
    p, n = claim.pred, bound.max_items
    evidence = tuple(AVerImaTeCEvidence(bound.clip(e.text), e.images) for e in p.evidence[:n])
    pred = replace(p, questions=tuple(bound.clip(q) for q in p.questions[:n]), justification=bound.clip(p.justification),
                   evidence=evidence)
    return replace(claim, pred=pred, pred_images=claim.pred_images[:n]), pred != p


def bounded(paired: PairedSet, bound: InputBound) -> tuple[PairedSet, int]:
    """Every claim as the judge is shown it, and how many the bound changed."""
    out = [bounded_claim(c, bound) for c in paired.claims]
    return replace(paired, claims=[c for c, _ in out]), sum(1 for _, cut in out if cut)


def snapshot_settings(sampling: str, bound: InputBound) -> dict[str, Any]:
    """The request settings an AVerImaTeC snapshot's replies depend on (besides model and prompts).

    Example:
        >>> snapshot_settings("greedy", InputBound(10, 2000))
        {'sampling': 'greedy', 'max_tokens': 'qa=256,other=1024', 'input': '10x2000c'}
    """
    return {"sampling": sampling, "max_tokens": MAX_TOKENS_FIELD, "input": bound.field()}


__all__ = ["MAX_TOKENS_FIELD", "bounded", "bounded_claim", "snapshot_settings"]
