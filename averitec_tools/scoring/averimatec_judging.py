"""Judging AVerImaTeC claims in three concurrent rounds, and the per-claim arithmetic.

Round 1 sends every gold ``qa`` conversion, ``questions`` and ``justification`` call;
round 2 the ``evidence`` calls (they need round 1's gold statements); round 3 the
``image`` ratings the evidence replies ask for (in chunks, so that only a bounded number of
image-bearing requests is held at once). Each round goes through the judge runner of the
``fever8`` profile (:func:`~averitec_tools.metrics.ev2r_runner.run_judgements`): replies
cached as they arrive, ``--judge-concurrency`` requests in flight, retries with backoff,
failures by the run's mode. The organisers send the same calls one at a time.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from averitec_tools.metrics.averimatec import (
    REF_IN_PRED,
    ClaimScores,
    RecallTuple,
    evidence_recall,
    justification_score,
    question_score,
    recall_plan,
    score_extraction,
    verdict_score,
)
from averitec_tools.metrics.averimatec_prompts import gold_pair, statement
from averitec_tools.metrics.ev2r_runner import JudgeRequest, RunStats
from averitec_tools.scoring.averimatec_calls import (
    CallSettings,
    evidence_request,
    image_request,
    justification_request,
    qa_request,
    questions_request,
)
from averitec_tools.scoring.averimatec_images import GoldImages
from averitec_tools.scoring.averimatec_inputs import PairedClaim

#: Runs one batch of requests: ``key -> reply`` and the batch's statistics.
Runner = Callable[[list[JudgeRequest]], tuple[dict[str, str], RunStats]]
#: Image requests held at once (round 3 goes in chunks of this many).
IMAGE_CHUNK = 512


@dataclass
class ClaimOutcome:
    """A claim's scores, its judge requests' keys and what went wrong with them."""

    scores: ClaimScores
    keys: list[str] = field(default_factory=list)
    #: Replies not in the form the organisers' parsing expects, by call kind.
    unparseable: list[str] = field(default_factory=list)
    gold_statements: list[str] = field(default_factory=list)
    plan: list[RecallTuple] = field(default_factory=list)
    ratings: list[str] = field(default_factory=list)


@dataclass
class Totals:
    """The statistics of all rounds together."""

    needed: int = 0
    cached: int = 0
    sent: int = 0
    retries: int = 0
    failed: list[JudgeRequest] = field(default_factory=list)
    refused: list[JudgeRequest] = field(default_factory=list)
    from_snapshot: int = 0
    by_kind: dict[str, int] = field(default_factory=dict)

    def add(self, stats: RunStats) -> None:
        self.needed += stats.needed
        self.cached += stats.cached
        self.sent += stats.sent
        self.retries += stats.retries
        self.failed.extend(stats.failed)
        self.refused.extend(stats.refused)
        self.from_snapshot += stats.from_snapshot


def _gold_requests(claim: PairedClaim, settings: CallSettings) -> list[JudgeRequest]:
    out = []
    for k, q in enumerate(claim.gold.questions):
        question, answer, _ = gold_pair(q)
        out.append(qa_request(settings, question, answer, f"claim {claim.id} (gold QA {k})"))
    return out


def _run(runner: Runner, requests: Sequence[JudgeRequest | None], totals: Totals, kind: str) -> dict[str, str]:
    """One batch through the runner (each key once); counts the batch's unique calls under ``kind``."""
    unique = list({r.key: r for r in requests if r is not None}.values())
    if not unique:
        return {}
    replies, stats = runner(unique)
    totals.add(stats)
    totals.by_kind[kind] = totals.by_kind.get(kind, 0) + len(unique)
    return replies


def _image_round(claims: Sequence[PairedClaim], plans: dict[int, list[RecallTuple]], settings: CallSettings,
                 gold_images: GoldImages, run: Callable[[list[JudgeRequest]], dict[str, str]],
                 ) -> dict[int, list[JudgeRequest]]:
    """Round 3: each claim's rating requests in plan order, sent in chunks of :data:`IMAGE_CHUNK`.

    The requests are returned without their image parts (only keys and places are kept).
    """
    kept: dict[int, list[JudgeRequest]] = {c.id: [] for c in claims}
    pending: list[JudgeRequest] = []
    for c in claims:
        gold_names = [gold_pair(q)[2] for q in c.gold.questions]
        for t in plans.get(c.id, []):
            if not t.needs_rating:
                continue
            where = f"claim {c.id} (image REF_{t.ref} PRED_{t.pred})"
            gold = [gold_images.get(name, where=where) for name in gold_names[t.ref - 1]]
            request = image_request(settings, c.pred_images[t.pred - 1], gold, where)
            kept[c.id].append(JudgeRequest(request.key, (), where))
            pending.append(request)
            if len(pending) >= IMAGE_CHUNK:
                run(pending)
                pending = []
    if pending:
        run(pending)
    return kept


@dataclass
class _Calls:
    """One claim's requests: its gold ``qa`` conversions, ``questions``, ``justification``,
    ``evidence`` (round 2) and image ratings (round 3, in plan order)."""

    gold: list[JudgeRequest]
    questions: JudgeRequest | None
    justification: JudgeRequest
    evidence: JudgeRequest | None = None
    rated: list[JudgeRequest] = field(default_factory=list)

    def keys(self) -> list[str]:
        reqs = [*self.gold, self.questions, self.justification, self.evidence, *self.rated]
        return [r.key for r in reqs if r is not None]


def judge_claims(claims: Sequence[PairedClaim], *, settings: CallSettings, gold_images: GoldImages, runner: Runner,
                 ) -> tuple[list[ClaimOutcome], Totals]:
    """Every claim's scores from the judge (through ``runner``), and the run's statistics."""
    totals = Totals()
    calls = {c.id: _Calls(_gold_requests(c, settings), questions_request(settings, c), justification_request(settings, c))
             for c in claims}
    replies = _run(runner, [r for c in claims for r in calls[c.id].gold], totals, "qa")
    replies.update(_run(runner, [k.questions for k in calls.values()], totals, "questions"))
    replies.update(_run(runner, [k.justification for k in calls.values()], totals, "justification"))
    statements = {c.id: [statement(replies.get(r.key, "")) for r in calls[c.id].gold] for c in claims}
    for c in claims:
        calls[c.id].evidence = evidence_request(settings, c, statements[c.id])
    replies.update(_run(runner, [k.evidence for k in calls.values()], totals, "evidence"))
    plans = _plans(claims, calls, replies)

    def run_images(batch: list[JudgeRequest]) -> dict[str, str]:
        got = _run(runner, batch, totals, "image")
        replies.update(got)
        return got

    for cid, rated in _image_round(claims, plans, settings, gold_images, run_images).items():
        calls[cid].rated = rated
    missing = {r.key for r in (*totals.failed, *totals.refused)}  # no reply: scored as the empty one, not "unparseable"
    answered = {k: v for k, v in replies.items() if k not in missing}
    outcomes = [_outcome(c, answered, calls[c.id], plans.get(c.id, [])) for c in claims]
    for c, outcome in zip(claims, outcomes, strict=True):
        outcome.gold_statements = statements[c.id]
    return outcomes, totals


def _plans(claims: Sequence[PairedClaim], calls: dict[int, _Calls], replies: dict[str, str]) -> dict[int, list[RecallTuple]]:
    """Each claim's recall tuples from its evidence reply (claims without an evidence call have none)."""
    plans = {}
    for c in claims:
        e = calls[c.id].evidence
        if e is not None:
            details = score_extraction(replies.get(e.key, "")).detailed_ref_in_pred
            plans[c.id] = recall_plan(details, pred_images=[len(i) for i in c.pred_images],
                                      gold_images=[len(gold_pair(q)[2]) for q in c.gold.questions])
    return plans


def _outcome(c: PairedClaim, answered: dict[str, str], calls: _Calls, plan: list[RecallTuple]) -> ClaimOutcome:
    """The claim's scores from its replies (a request without one -- failed or refused -- is
    not in ``answered`` and scores as the empty reply); replies not in the form the
    organisers' parsing expects are listed by kind."""
    bad = []
    q, j, e = calls.questions, calls.justification, calls.evidence
    q_reply = answered.get(q.key, "") if q is not None else ""
    if q is not None and q.key in answered and REF_IN_PRED not in q_reply:
        bad.append("questions")
    j_score = justification_score(answered.get(j.key, ""))
    if j_score is None and j.key in answered:
        bad.append("justification")
    ratings = [answered.get(r.key, "") for r in calls.rated]
    evidence = None
    if e is not None:
        if e.key in answered and REF_IN_PRED not in answered[e.key]:
            bad.append("evidence")
        evidence = evidence_recall(plan, ratings, n_gold=len(c.gold.questions), n_pred=len(c.pred.evidence))
    bad += ["image"] * sum(1 for r in calls.rated if r.key in answered and not _is_int(answered[r.key]))
    scores = ClaimScores(
        question=question_score(q_reply, n_gold=len(c.gold.questions), n_pred=len(c.pred.questions)),
        evidence=evidence, verdict=verdict_score(c.pred.verdict, c.gold_label),
        justification=0.0 if j_score is None else j_score,
    )
    return ClaimOutcome(scores, keys=calls.keys(), unparseable=bad, plan=plan, ratings=ratings)


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


def nan_scores(verdict: float) -> ClaimScores:
    """An unscored claim: judge values NaN, the verdict kept (label accuracy still counts it).

    Example:
        >>> nan_scores(1.0).verdict, math.isnan(nan_scores(1.0).question)
        (1.0, True)
    """
    return ClaimScores(math.nan, math.nan, verdict, math.nan)


__all__ = ["IMAGE_CHUNK", "ClaimOutcome", "Runner", "Totals", "judge_claims", "nan_scores"]
