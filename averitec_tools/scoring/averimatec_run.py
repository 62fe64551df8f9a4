"""One ``averimatec`` scoring run: prompts, cache and judge set up, the rounds judged (or
counted, ``--dry-run``), failures handled by the run's mode, the result assembled.

Judge failures follow :mod:`averitec_tools.metrics.judge_policy`, as the ``fever8``
profile's (:mod:`averitec_tools.scoring.averimatec_policy`): what the submission's content
causes -- a request refused for its content, a reply without the organisers' markers --
scores as the organisers' code scores an empty or unparseable reply (0), in every mode.
A request that still fails on the judge's side after its retries has three modes
(``failures`` in the signature): ``raise`` (the run stops; what finished is cached, a
re-run resumes), ``zero`` (``--official-failure-mode``: it gets an empty reply, as the
official code) and ``unscored`` (``--judge-unscored``: its claim is left out of the four
columns' means, counted, and ``judge.complete`` is false until it is scored again).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from averitec_tools.metrics.averimatec import recall_plan, score_extraction
from averitec_tools.metrics.averimatec_official import load_prompts
from averitec_tools.metrics.averimatec_prompts import gold_pair, statement
from averitec_tools.metrics.ev2r_runner import (
    JudgementCache,
    JudgeRequest,
    default_cache_path,
    run_judgements,
)
from averitec_tools.metrics.judge_policy import UNAVAILABLE_REASON
from averitec_tools.scoring.averimatec_calls import (
    SAMPLING,
    CallSettings,
    estimate,
    evidence_request,
    justification_request,
    qa_request,
    questions_request,
)
from averitec_tools.scoring.averimatec_images import GoldImages
from averitec_tools.scoring.averimatec_inputs import PairedClaim, PairedSet
from averitec_tools.scoring.averimatec_judging import ClaimOutcome, Totals, judge_claims
from averitec_tools.scoring.averimatec_policy import MAX_TOKENS_FIELD, bounded, snapshot_settings
from averitec_tools.scoring.averimatec_summary import Assembled, clean, signature
from averitec_tools.scoring.fever8_failures import failures_field
from averitec_tools.scoring.fever8_judging import input_bound, open_snapshot, save_snapshot

CACHE_FILE = "averimatec-judgements.sqlite"
FAILURE_TITLES = {"raise": "raise", "zero": "zero (a failed request gets an empty reply)",
                  "unscored": "unscored (failed on the judge's side: excluded from the means, the result incomplete)"}


def _cache(opts: Mapping[str, Any]) -> JudgementCache:
    folder = opts["judge_cache"] or opts["cache_dir"]
    return JudgementCache(Path(folder) / CACHE_FILE if folder else default_cache_path().with_name(CACHE_FILE))


def _unscored(outcomes: Sequence[ClaimOutcome], totals: Totals, mode: str) -> list[str | None]:
    """Why each claim is unscored: only a failure on the judge's side, and only under ``unscored``
    (a refusal for the content and an unparseable reply score as the organisers' code scores them)."""
    if mode != "unscored":
        return [None] * len(outcomes)
    failed = {r.key for r in totals.failed}
    return [UNAVAILABLE_REASON if failed.intersection(o.keys) else None for o in outcomes]


def _judge_block(opts: Mapping[str, Any], settings: CallSettings, run: Any, outcomes: Sequence[ClaimOutcome],
                 reasons: Sequence[str | None]) -> dict[str, Any]:
    totals: Totals = run.totals
    unparseable: dict[str, int] = {}
    for o in outcomes:
        for kind in o.unparseable:
            unparseable[kind] = unparseable.get(kind, 0) + 1
    n_unscored = sum(1 for r in reasons if r is not None)
    return {
        "backend": run.backend, "model": settings.model, "prompt": settings.prompts.name,
        "prompt_sha256": settings.prompts.sha256, "sampling": settings.sampling.name,
        "input": run.bound.field(), "claims_cut": run.cut,
        "calls": totals.needed, "calls_by_kind": totals.by_kind, "from_snapshot": totals.from_snapshot,
        "from_cache": totals.cached, "sent": totals.sent, "retries": totals.retries, "unparseable": unparseable,
        "refused_content": len(totals.refused), "failure_mode": FAILURE_TITLES[opts["failure_mode"]],
        "failed_scored_zero": len(totals.failed) if opts["failure_mode"] == "zero" else 0,
        "unscored": {"count": n_unscored, "reasons": {UNAVAILABLE_REASON: n_unscored}}, "complete": n_unscored == 0,
        "snapshot_sha256": run.snapshot.digest(),
    }


def _judge_fields(opts: Mapping[str, Any], settings: CallSettings, run: Any, unscored: int) -> list[tuple[str, Any]]:
    failures = failures_field(opts["failure_mode"], failed=len(run.totals.failed), unscored=unscored)
    s = settings.sampling
    sampling = f"{s.name}(t={s.temperature:g}" + (f",top_p={s.top_p:g},top_k={s.top_k}" if s.top_p else "") + ")"
    return [("judge", clean(f"{run.backend}:{settings.model}")),
            ("prompt", clean(f"{settings.prompts.name}+sha256.{settings.prompts.sha256[:12]}")),
            ("sampling", sampling), ("max_tokens", MAX_TOKENS_FIELD), ("input", run.bound.field()),
            ("unparseable", 0), ("refused", f"zero({len(run.totals.refused)})"), ("failures", failures),
            ("judge_snapshot", run.snapshot.field())]


def _warnings(opts: Mapping[str, Any], settings: CallSettings, totals: Totals, paired: PairedSet,
              outcomes: Sequence[ClaimOutcome]) -> list[str]:
    out = []
    if not settings.prompts.is_official:
        out.append(f"judge prompt {settings.prompts.name} is not the organisers'; for figures comparable with the "
                   "leaderboard use --judge-prompt official")
    if totals.refused:
        out.append(f"the judge refused {len(totals.refused)} request(s) for their content (e.g. past its context "
                   "length); they got an empty reply and score as it scores")
    if totals.failed and opts["failure_mode"] == "zero":
        shown = ", ".join(r.where for r in totals.failed[:5]) + (" ..." if len(totals.failed) > 5 else "")
        out.append(f"{len(totals.failed)} judge request(s) failed and got an empty reply: {shown}")
    elif totals.failed:
        out.append(f"{len(totals.failed)} judge request(s) failed on the judge's side; their claims are unscored "
                   "(--judge-unscored: left out of the means; the result is incomplete until they are scored again)")
    bad = sum(len(o.unparseable) for o in outcomes)
    if bad:
        out.append(f"{bad} judge repl(ies) lacked the markers the organisers' parsing reads; scored as that "
                   "parsing scores them (a justification reply without them: 0)")
    if paired.ignored_predictions:
        out.append(f"{paired.ignored_predictions} prediction(s) past the last gold claim ignored (--averimatec-align "
                   "position, as the official loop)")
    return out


def check_gold_images(paired: PairedSet, gold_images: GoldImages) -> None:
    """Every gold image an image rating could need is there and valid, before anything is sent
    (the claims with predicted images; a rating needs images on both sides)."""
    for c in paired.claims:
        if any(c.pred_images):
            for k, q in enumerate(c.gold.questions):
                for name in gold_pair(q)[2]:
                    gold_images.get(name, where=f"claim {c.id}: gold QA {k}")


def settings_of(opts: Mapping[str, Any]) -> CallSettings:
    """The model, prompts and sampling every request of the run shares.

    Example:
        >>> s = settings_of({"judge_prompt": None, "judge_cache": None, "cache_dir": None, "allow_download": False,
        ...                  "judge_model": "google/gemma-3-27b-it", "judge_sampling": "greedy"})
        >>> s.prompts.name, s.sampling.temperature
        ('averimatec_prompt_v1.txt', 0.0)
    """
    prompts = load_prompts(opts["judge_prompt"], cache_dir=opts["judge_cache"] or opts["cache_dir"],
                           allow_download=bool(opts["allow_download"]))
    return CallSettings(str(opts["judge_model"]), prompts, SAMPLING.get(str(opts["judge_sampling"])))


def _judge(opts: Mapping[str, Any], settings: CallSettings) -> Any:
    """The judge of ``--judge-backend``: an OpenAI-compatible server, or a local image-text-to-text model."""
    s = settings.sampling
    if opts["judge_backend"] == "transformers":
        from averitec_tools.metrics.averimatec_local import TransformersVLMJudge

        return TransformersVLMJudge(settings.model, temperature=s.temperature, top_p=s.top_p, top_k=s.top_k)
    from averitec_tools.metrics.ev2r_judges import make_judge

    return make_judge(backend=opts["judge_backend"], model=settings.model, url=opts["judge_url"],
                      api_key_env=opts["judge_api_key_env"], timeout=float(opts["judge_timeout"]),
                      max_tokens=1024, temperature=s.temperature, top_p=s.top_p, top_k=s.top_k)


@dataclass
class _Run:
    """What the judge gave: the statistics, back-end, input bound (and claims it cut) and snapshot."""

    totals: Totals
    backend: str
    bound: Any
    cut: int
    snapshot: Any


def judge_run(paired: PairedSet, *, opts: Mapping[str, Any], gold_images: Path, progress: bool,
              ) -> Assembled | dict[str, Any]:
    """Judge every claim and assemble the outcome (``dry_run``: the summary of what would be sent)."""
    settings = settings_of(opts)
    images = GoldImages(gold_images)
    check_gold_images(paired, images)
    bound = input_bound(opts)
    shown, cut = bounded(paired, bound)
    cache = _cache(opts)
    try:
        if opts["dry_run"]:
            return dry_run(shown, settings=settings, cache=cache)
        judge = _judge(opts, settings)
        snapshot = open_snapshot(opts, settings.prompts, backend=judge.backend, bound=bound,
                                 settings=snapshot_settings(settings.sampling.name, bound))
        runner = partial(run_judgements, judge=judge, cache=cache, concurrency=int(opts["judge_concurrency"]),
                         retries=int(opts["judge_retries"]), backoff=float(opts["judge_backoff"]), progress=progress,
                         on_failure=opts["failure_mode"], snapshot=snapshot)
        outcomes, totals = judge_claims(shown.claims, settings=settings, gold_images=images, runner=runner)
        save_snapshot(opts["judge_snapshot"], snapshot)
    finally:
        cache.close()
    run = _Run(totals, judge.backend, bound, cut, snapshot)
    reasons = _unscored(outcomes, totals, opts["failure_mode"])
    sig = signature(opts, judge=_judge_fields(opts, settings, run, sum(1 for r in reasons if r is not None)))
    extra: dict[str, Any] = {"judge": _judge_block(opts, settings, run, outcomes, reasons)}
    if paired.ignored_predictions:
        extra["ignored_predictions"] = paired.ignored_predictions
    labels = [(c.gold_label, c.pred.verdict) for c in paired.claims]
    return Assembled([o.scores for o in outcomes], labels, sig, extra, reasons,
                     _warnings(opts, settings, totals, paired, outcomes))


@dataclass
class _Count:
    """What ``--dry-run`` adds up."""

    calls: dict[str, int] = field(default_factory=lambda: dict.fromkeys(("qa", "questions", "justification", "evidence"), 0))
    tokens: int = 0
    cached: int = 0
    images: int = 0

    def add(self, kind: str, request: JudgeRequest | None, have: Mapping[str, str]) -> None:
        if request is None:
            return
        if request.key in have:
            self.cached += 1
        else:
            self.calls[kind] += 1
            self.tokens += estimate(request)


def _image_bound(c: PairedClaim, reply: str | None, has_evidence: bool) -> int:
    """Image ratings of a claim: exact from a cached evidence reply, else one per gold item with images."""
    images = [len(gold_pair(q)[2]) for q in c.gold.questions]
    if reply is not None:
        plan = recall_plan(score_extraction(reply).detailed_ref_in_pred, pred_images=[len(i) for i in c.pred_images],
                           gold_images=images)
        return sum(1 for t in plan if t.needs_rating)
    return sum(1 for n in images if n) if has_evidence and any(c.pred_images) else 0


def dry_run(paired: PairedSet, *, settings: CallSettings, cache: JudgementCache) -> dict[str, Any]:
    """The calls a run would send and their estimated prompt tokens; nothing is sent.

    Rounds whose inputs are cached are counted exactly; evidence calls whose gold statements
    are not all cached are estimated from the gold QA texts, and image ratings whose
    evidence reply is not cached are bounded (at most one per gold item with images).
    """
    count = _Count()
    for c in paired.claims:
        gold = [qa_request(settings, *gold_pair(q)[:2], f"claim {c.id}") for q in c.gold.questions]
        batch = [("qa", r) for r in gold] + [("questions", questions_request(settings, c)),
                                             ("justification", justification_request(settings, c))]
        have = cache.get_many([r.key for _, r in batch if r is not None])
        statements = [statement(have[r.key]) if r.key in have else " ".join(gold_pair(q)[:2])
                      for r, q in zip(gold, c.gold.questions, strict=True)]
        evidence = evidence_request(settings, c, statements)
        if evidence is not None:
            have.update(cache.get_many([evidence.key]))
        for kind, r in [*batch, ("evidence", evidence)]:
            count.add(kind, r, have)
        exact = evidence is not None and all(r.key in have for r in gold)
        count.images += _image_bound(c, have.get(evidence.key) if exact and evidence else None, evidence is not None)
    return {"dry_run": True, "n_claims": len(paired.claims), "judge_calls": sum(count.calls.values()),
            "calls_by_kind": count.calls, "image_calls_at_most": count.images, "prompt_tokens": count.tokens,
            "cached_calls": count.cached,
            "token_estimate": "text calls: characters / 4; an image rating adds ~60 text tokens and 256 per image",
            "prompt": settings.prompts.name, "model": settings.model}


__all__ = ["CACHE_FILE", "dry_run", "judge_run", "settings_of"]
