"""How far an Ev2R judge can be trusted: repeat runs, a second judge, bootstrap intervals.

:func:`judge_agreement` judges the Q+A evidence of every claim (the half of Ev2R the new
AVeriTeC score uses) with one or two judges, ``repeats`` times each, through the same
judgement cache as ``averitec score --profile fever8`` (run 0 at temperature 0 without a
seed is exactly what ``score`` asks, so a scored file costs nothing more), and reports:

* per judge and run: the new AVeriTeC score and the mean Q+A recall;
* per judge, for k >= 2 repeats: the standard deviation of the headline over runs and of
  each claim's recall across runs, and the claims whose verdict (label right and recall
  clears the threshold) flips between runs;
* per judge: a bootstrap confidence interval of the new AVeriTeC score (claims resampled;
  :func:`averitec_tools.metrics.bootstrap.mean_ci`), on each claim's score averaged over
  the repeats;
* for two judges (run 0 of each): Cohen's kappa and the 2x2 table of evidence pass/fail
  (recall against the threshold), Pearson and Spearman correlation of per-claim recall,
  and the claims whose verdict differs.

Repeat ``r`` uses seed ``seed + r`` when a seed is given (sent as the request's ``seed``)
and is cached apart from the other repeats, so k repeats cost k calls per claim even at
temperature 0. Judges are told apart in the cache by model name: two judges must have
different ``model`` names.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.metrics.agreement import (
    cohen_kappa,
    confusion,
    correlations,
    flips,
    repeat_spread,
)
from averitec_tools.metrics.ev2r import (
    DEFAULT_PRESET,
    JudgePrompt,
    ThresholdPreset,
    parse_judgement,
    threshold_rule,
)
from averitec_tools.metrics.ev2r_judges import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_JUDGE_MODEL,
    DEFAULT_MAX_TOKENS,
)
from averitec_tools.metrics.signature import render_signature, threshold_field
from averitec_tools.scoring.fever8_inputs import Claim, judge_requests, load_claims, load_prompt

PathLike = str | os.PathLike[str]


@dataclass(frozen=True)
class JudgeSpec:
    """One judge: back-end, model and endpoint (``url`` for ``openai``).

    Example:
        >>> JudgeSpec(model="qwen-72b", url="http://127.0.0.1:8001/v1").name
        'openai:qwen-72b'
    """

    backend: str = "openai"
    model: str = DEFAULT_JUDGE_MODEL
    url: str | None = None
    api_key_env: str = DEFAULT_API_KEY_ENV
    timeout: float = 120.0
    max_tokens: int = DEFAULT_MAX_TOKENS

    @property
    def name(self) -> str:
        return f"{self.backend}:{self.model}"


@dataclass(frozen=True)
class JudgeRun:
    """One run of one judge over every claim (per-claim lists in claim order)."""

    judge: str
    repeat: int
    seed: int | None
    recall: tuple[float, ...]
    evidence_pass: tuple[bool, ...]
    score: tuple[float, ...]
    unparseable: int
    sent: int
    from_cache: int

    @property
    def headline(self) -> float:
        return sum(self.score) / len(self.score) if self.score else 0.0


@dataclass(frozen=True)
class AgreementReport:
    """What :func:`judge_agreement` found; :meth:`as_dict` is the ``--json`` object."""

    claim_ids: tuple[int | str, ...]
    rule: ThresholdPreset
    prompt: JudgePrompt
    temperature: float
    seed: int | None
    runs: dict[str, list[JudgeRun]]
    summary: dict[str, Any] = field(default_factory=dict)
    signature: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"signature": self.signature, **self.summary}


def _run_one(
    claims: Sequence[Claim], spec: JudgeSpec, *, repeat: int, seed: int | None, temperature: float,
    prompt: JudgePrompt, rule: ThresholdPreset, cache: Any, cache_only: bool, run_options: dict[str, Any],
) -> JudgeRun:
    from averitec_tools.metrics.ev2r_judges import make_judge
    from averitec_tools.metrics.ev2r_runner import run_judgements

    requests = judge_requests(claims, prompt=prompt, model=spec.model, kinds=("qa",), temperature=temperature,
                              seed=seed, repeat=repeat)
    if cache_only:
        known = cache.get_many([r.key for _, _, r in requests])
        missing = [r.where for _, _, r in requests if r.key not in known]
        if missing:
            raise UserError(
                f"--cache-only: {len(missing)} judgement(s) of {spec.name} (repeat {repeat}) are not in the cache, "
                f"e.g. {missing[0]}",
                hint="run without --cache-only to obtain them",
            )
        replies, sent, from_cache = known, 0, len(known)
    else:
        judge = make_judge(backend=spec.backend, model=spec.model, url=spec.url, api_key_env=spec.api_key_env,
                           timeout=spec.timeout, max_tokens=spec.max_tokens, max_new_tokens=spec.max_tokens,
                           temperature=temperature)
        replies, stats = run_judgements([r for _, _, r in requests], judge=judge, cache=cache, **run_options)
        sent, from_cache = stats.sent, stats.cached
    judged = [parse_judgement(replies.get(r.key, ""), "qa") for _, _, r in requests]
    recall = tuple(j.recall for j in judged)
    evidence = tuple(rule.passes(x) for x in recall)
    score = tuple(float(ok and c.pred_label == c.gold_label) for ok, c in zip(evidence, claims, strict=True))
    return JudgeRun(spec.name, repeat, seed, recall, evidence, score, sum(not j.parsed for j in judged), sent, from_cache)


def _judge_summary(runs: list[JudgeRun], ids: tuple[int | str, ...], ci: Any, temperature: float) -> dict[str, Any]:
    out: dict[str, Any] = {
        "judge": runs[0].judge,
        "runs": [{"repeat": r.repeat, "seed": r.seed, "new_averitec_score": r.headline,
                  "qa_recall": sum(r.recall) / len(r.recall), "unparseable": r.unparseable,
                  "sent": r.sent, "from_cache": r.from_cache} for r in runs],
        "new_averitec_score_ci": {"estimate": ci.estimate, "low": ci.low, "high": ci.high,
                                  "confidence_level": ci.confidence_level, "method": ci.method,
                                  "n_resamples": ci.n_resamples},
        "repeats": None,
    }
    if len(runs) > 1:
        headline = repeat_spread([r.score for r in runs])
        recall = repeat_spread([r.recall for r in runs])
        flipped = flips(ids, [[s > 0 for s in r.score] for r in runs])
        out["repeats"] = {
            "k": len(runs), "temperature": temperature, "seeds": [r.seed for r in runs],
            "new_averitec_score": {"mean": sum(headline.run_means) / headline.k, "std": headline.headline_std,
                                   "min": min(headline.run_means), "max": max(headline.run_means)},
            "qa_recall": {"mean": sum(recall.run_means) / recall.k, "std": recall.headline_std,
                          "claim_std_mean": recall.item_std_mean, "claim_std_max": recall.item_std_max},
            "verdict_flips": flipped,
            "n_verdict_flips": len(flipped),
        }
    return out


def _pair_summary(a: JudgeRun, b: JudgeRun, ids: tuple[int | str, ...], rule: ThresholdPreset) -> dict[str, Any]:
    table = confusion(a.evidence_pass, b.evidence_pass)
    verdicts = flips(ids, [[s > 0 for s in a.score], [s > 0 for s in b.score]])
    return {
        "judges": [a.judge, b.judge],
        "on": f"evidence pass/fail (Q+A recall {rule.comparison} {rule.threshold!r}), repeat 0 of each judge",
        "n_claims": table.n,
        "observed_agreement": table.observed_agreement,
        "cohen_kappa": cohen_kappa(a.evidence_pass, b.evidence_pass),
        "confusion": table.as_dict(),
        "qa_recall_correlation": correlations(list(a.recall), list(b.recall)),
        "new_averitec_score_difference": a.headline - b.headline,
        "evidence_flips": flips(ids, [list(a.evidence_pass), list(b.evidence_pass)]),
        "verdict_flips": verdicts,
        "n_verdict_flips": len(verdicts),
    }


def judge_agreement(
    *,
    predictions: PathLike,
    references: PathLike,
    judges: Sequence[JudgeSpec],
    repeats: int = 1,
    temperature: float = 0.0,
    seed: int | None = None,
    judge_prompt: str | None = None,
    preset: str = DEFAULT_PRESET,
    threshold: float | None = None,
    comparison: str | None = None,
    cache_dir: PathLike | None = None,
    cache_only: bool = False,
    concurrency: int = 32,
    retries: int = 5,
    backoff: float = 1.0,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    bootstrap_seed: int = 0,
    allow_download: bool = True,
    progress: bool = False,
) -> AgreementReport:
    """Repeat-run spread, two-judge agreement and bootstrap intervals of the new AVeriTeC score.

    Example (two local judges; see ``tests/test_judge_agreement.py``)::

        report = judge_agreement(predictions="preds.json", references="dev.json",
                                 judges=[JudgeSpec(url=URL_A, model="a"), JudgeSpec(url=URL_B, model="b")],
                                 repeats=3, temperature=0.7, seed=0)
        report.as_dict()["agreement"]["cohen_kappa"]
    """
    _check_settings(judges, repeats=repeats, temperature=temperature)
    rule = threshold_rule(preset=preset, threshold=threshold, comparison=comparison)
    claims = load_claims(predictions=predictions, references=references).claims
    ids = tuple(c.id for c in claims)
    prompt = load_prompt(judge_prompt, cache_dir=cache_dir, allow_download=allow_download)
    run_options = {"concurrency": concurrency, "retries": retries, "backoff": backoff, "progress": progress}
    runs = _all_runs(claims, judges, repeats=repeats, seed=seed, temperature=temperature, prompt=prompt, rule=rule,
                     cache_dir=cache_dir, cache_only=cache_only, run_options=run_options)
    per_judge = []
    for judge_runs in runs.values():
        ci = _score_ci(judge_runs, n_resamples=n_resamples, confidence_level=confidence_level, seed=bootstrap_seed)
        per_judge.append(_judge_summary(judge_runs, ids, ci, temperature))
    firsts = [judge_runs[0] for judge_runs in runs.values()]
    summary: dict[str, Any] = {
        "n_claims": len(ids),
        "threshold": {"preset": rule.name, "threshold": rule.threshold, "comparison": rule.comparison},
        "prompt": {"name": prompt.name, "sha256": prompt.sha256},
        "sampling": {"repeats": repeats, "temperature": temperature, "seed": seed},
        "judges": per_judge,
        "agreement": _pair_summary(firsts[0], firsts[1], ids, rule) if len(firsts) == 2 else None,
    }
    signature = render_signature([
        ("report", "judge-agreement"), ("metric", "ev2r-qa"), ("judges", ",".join(runs)),
        ("prompt", f"{prompt.name}+sha256.{prompt.sha256[:12]}"), ("thr", threshold_field(rule.threshold, rule.comparison)),
        ("thr_preset", rule.name), ("repeats", repeats), ("temperature", repr(temperature)), ("seed", seed),
        ("bootstrap", f"{n_resamples}@{confidence_level!r},seed.{bootstrap_seed}"),
    ])
    return AgreementReport(ids, rule, prompt, temperature, seed, runs, summary, signature)


def _check_settings(judges: Sequence[JudgeSpec], *, repeats: int, temperature: float) -> None:
    """Refuse other than one or two judges, two judges of one model name, no repeat, a negative temperature."""
    if not 1 <= len(judges) <= 2:
        raise UserError(f"give one or two judges, not {len(judges)}")
    if len(judges) == 2 and judges[0].model == judges[1].model:
        raise UserError(f"both judges are named {judges[0].model!r}; the judgement cache tells judges apart by "
                        "model name", hint="give the second judge another --second-judge-model")
    if repeats < 1:
        raise UserError(f"--repeats must be at least 1, got {repeats}")
    if temperature < 0:
        raise UserError(f"--judge-temperature must be at least 0, got {temperature}")


def _all_runs(claims: Sequence[Claim], judges: Sequence[JudgeSpec], *, repeats: int, seed: int | None,
              temperature: float, prompt: JudgePrompt, rule: ThresholdPreset, cache_dir: PathLike | None,
              cache_only: bool, run_options: dict[str, Any]) -> dict[str, list[JudgeRun]]:
    """Every judge's ``repeats`` runs (repeat ``r`` seeded ``seed + r``), through one judgement cache."""
    from averitec_tools.metrics.ev2r_runner import CACHE_FILE, JudgementCache, default_cache_path

    cache = JudgementCache(Path(cache_dir) / CACHE_FILE if cache_dir else default_cache_path())
    runs: dict[str, list[JudgeRun]] = {}
    try:
        for spec in judges:
            runs[spec.name] = [
                _run_one(claims, spec, repeat=r, seed=None if seed is None else seed + r, temperature=temperature,
                         prompt=prompt, rule=rule, cache=cache, cache_only=cache_only, run_options=run_options)
                for r in range(repeats)
            ]
    finally:
        cache.close()
    return runs


def _score_ci(judge_runs: list[JudgeRun], *, n_resamples: int, confidence_level: float, seed: int) -> Any:
    """Bootstrap CI of the new AVeriTeC score, on each claim's score averaged over the repeats."""
    from averitec_tools.metrics.bootstrap import mean_ci

    n = len(judge_runs[0].score)
    mean_score = [sum(r.score[i] for r in judge_runs) / len(judge_runs) for i in range(n)]
    return mean_ci(values=mean_score, n_resamples=n_resamples, confidence_level=confidence_level, seed=seed)


__all__ = ["JudgeSpec", "judge_agreement"]
