"""``fever8``: the FEVER-8 (2025) AVeriTeC scorer -- Ev2R evidence recall by an LLM judge.

Per claim, the judge (temperature 0, at most 3000 tokens, as the organisers call it)
compares the reference with the predicted evidence twice: as question-answer pairs
(``qa``) and as questions only (``questions``); see :mod:`averitec_tools.metrics.ev2r` for
the arithmetic and :mod:`averitec_tools.scoring.fever8_inputs` for the texts it sees.
Reported:

* ``ev2r`` -- mean precision and recall for ``questions_answers`` and ``questions_only``;
* ``averitec_score_ev2r`` -- the new AVeriTeC score: the share of claims whose label is
  right and whose Q+A recall clears the threshold. Default: the leaderboard's rule,
  ``recall > 0.5`` (preset ``leaderboard``); the other published rules are presets
  (``--ev2r-preset``); the rule and its preset name are in the signature;
* ``hu_meteor`` -- the Hungarian METEOR figures alongside (first 10 predicted items, gold
  normalisation, AVeriTeC score at 0.25 with ``>``);
* ``judge`` -- model, back-end, prompt name and hash, calls needed / taken from the cache /
  sent, unparseable replies (they score 0, as in the official code) and, under
  ``--official-failure-mode``, the requests that failed and were scored 0.

Judge failures follow :mod:`averitec_tools.metrics.judge_policy` (the run:
:mod:`averitec_tools.scoring.fever8_judging`). What the submission's content causes scores
0 in every mode, as in the organisers' code: an unparseable reply, and a request the judge
refuses for its content (a prompt past its context; counted in ``judge.refused_content``).
A failure on the judge's side (timeout, connection, 5xx, after its retries) has three
modes (``failures`` in the signature): ``raise`` (the default of ``averitec score``: the
run stops), ``zero`` (``--official-failure-mode``, the organisers' code: it scores 0) and
``unscored`` (``--judge-unscored``, the leaderboard's default for judge phases: the claim
is left unscored -- its judge metrics are NaN, it is excluded from their means,
``judge.unscored`` counts it, and ``judge.complete`` is false until it is scored again).
``--judge-max-items`` / ``--judge-item-chars`` bound what the judge sees of each
prediction (``input`` in the signature); ``--judge-snapshot FILE`` re-uses and records the
replies the score depends on (``judge_snapshot`` in the signature).

Inputs: predictions in the 2024 JSON format or a FEVER-8 CSV (``id, claim, evi, label,
split``, recognised by its header); references ``dev.json`` (claim ids are positions) or a
FEVER-8 solution CSV (matched by ``id``; only ``split == gold`` rows, as the leaderboard).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

from averitec_tools.metrics.averitec_score import AVeriTeCScore, threshold_key
from averitec_tools.metrics.ev2r import (
    COMPARISONS,
    DEFAULT_PRESET,
    THRESHOLD_PRESETS,
    UNPARSEABLE,
    Judgement,
    JudgePrompt,
    ThresholdPreset,
    threshold_rule,
)
from averitec_tools.metrics.ev2r_judges import (
    DEFAULT_API_KEY_ENV,
    DEFAULT_JUDGE_MODEL,
    DEFAULT_MAX_TOKENS,
)
from averitec_tools.metrics.keys import claim_key, report_key
from averitec_tools.metrics.label_metrics import LABEL_ACCURACY
from averitec_tools.metrics.signature import (
    lexicon_field,
    render_signature,
    threshold_field,
    wordnet_field,
)
from averitec_tools.metrics.tokenize import TOKENIZER_NAME
from averitec_tools.records.averitec import AVERITEC_LABELS
from averitec_tools.scoring.evidence_strings import MAX_EVIDENCE
from averitec_tools.scoring.fever8_failures import (
    FAILURE_MODE_TITLES,
    JUDGE_KEYS,
    METEOR_THRESHOLD,
    UNSCORED_REASONS,
    failures_field,
)
from averitec_tools.scoring.fever8_failures import means as _means
from averitec_tools.scoring.fever8_inputs import (
    Claim,
    ClaimSet,
    judge_requests,
    load_claims,
    load_prompt,
)
from averitec_tools.scoring.fever8_judging import (
    FAILED,
    REFUSED,
    input_bound,
    judged,
    open_snapshot,
    run_warnings,
    save_snapshot,
)
from averitec_tools.scoring.profiles._meteor import ALLOW_DOWNLOAD, CACHE_DIR, make_engine
from averitec_tools.scoring.profiles.base import (
    ClaimScore,
    PathLike,
    ProfileOption,
    ProfileResult,
    ScoreCall,
    ScoringProfile,
)
from averitec_tools.scoring.warm import WarmScoring

#: From benchmarks/bench_ev2r_judge.py (docs/fever8.md#cache-and-speed).
DEFAULT_CONCURRENCY = 32
_STR, _NUMBER = (str, type(None)), (int, float)
#: The declared options (``averitec score`` flags ``--judge-*``, ``--ev2r-*``, ...).
OPTIONS: Mapping[str, ProfileOption] = {
    "allow_download": ALLOW_DOWNLOAD,
    "judge_backend": ProfileOption(str, "openai", "judge back-end (see metrics.ev2r_judges)"),
    "judge_url": ProfileOption(_STR, None, "OpenAI-compatible server URL"),
    "judge_model": ProfileOption(str, DEFAULT_JUDGE_MODEL, "judge model name"),
    "judge_api_key_env": ProfileOption(str, DEFAULT_API_KEY_ENV, "environment variable holding the API key"),
    "judge_prompt": ProfileOption(_STR, None, "prompt file or name (None: the organisers')"),
    "judge_cache": ProfileOption(_STR, None, "judgement cache directory"),
    "judge_concurrency": ProfileOption(int, DEFAULT_CONCURRENCY, "judge requests in flight", minimum=1),
    "judge_retries": ProfileOption(int, 5, "retries of a failed request", minimum=0),
    "judge_backoff": ProfileOption(_NUMBER, 1.0, "seconds before the first retry (doubling)"),
    "judge_timeout": ProfileOption(_NUMBER, 120.0, "seconds per request"),
    "judge_max_tokens": ProfileOption(int, DEFAULT_MAX_TOKENS, "reply token limit", minimum=1),
    "ev2r_preset": ProfileOption(str, DEFAULT_PRESET, "published threshold rule", choices=tuple(THRESHOLD_PRESETS)),
    "ev2r_threshold": ProfileOption((float, type(None)), None, "custom recall threshold", minimum=0.0, maximum=1.0),
    "ev2r_comparison": ProfileOption(_STR, None, "custom comparison ('>' or '>=')", choices=(None, *COMPARISONS)),
    "official_failure_mode": ProfileOption(bool, False, "score failed requests 0, as the official code",
                                           excludes=("judge_unscored",)),
    "judge_unscored": ProfileOption(bool, False, "leave claims whose judge request failed or whose reply does not parse unscored",
                                    excludes=("official_failure_mode",)),
    "dry_run": ProfileOption(bool, False, "count judge calls and tokens, call nothing"),
    "judge_max_items": ProfileOption((int, type(None)), None, "predicted pairs the judge is shown (None: all, as the organisers)"),
    "judge_item_chars": ProfileOption((int, type(None)), None, "characters of each predicted question and answer the judge is shown"),
    "judge_snapshot": ProfileOption(_STR, None, "JSON file: replies re-used from it, then every reply the score depends on written to it"),
    "cache_dir": CACHE_DIR,
}
DEFAULTS: dict[str, Any] = {name: option.default for name, option in OPTIONS.items()}


def _options(options: dict[str, Any]) -> dict[str, Any]:
    """The options (checked by :meth:`ScoringProfile.score`) with their defaults, the Ev2R rule and the failure mode."""
    opts = {**DEFAULTS, **{k: v for k, v in options.items() if v is not None}}
    opts["rule"] = threshold_rule(preset=opts["ev2r_preset"], threshold=opts["ev2r_threshold"],
                                  comparison=opts["ev2r_comparison"])
    opts["failure_mode"] = "unscored" if opts["judge_unscored"] else "zero" if opts["official_failure_mode"] else "raise"
    return opts



def _signature(opts: dict[str, Any], prompt: JudgePrompt, *, backend: str, stats: Any, rule: ThresholdPreset,
               engine: Any, unscored: int = 0, snapshot: Any = None) -> str:
    """The fever8 signature: judge, prompt hash, input bound, failure policy, judge snapshot,
    the Ev2R rule and the METEOR side."""
    failures = failures_field(stats.failure_mode, failed=len(stats.failed), unscored=unscored)
    return render_signature([
        ("profile", "fever8"), ("metric", "ev2r"), ("judge", f"{backend}:{opts['judge_model']}"),
        ("prompt", f"{prompt.name}+sha256.{prompt.sha256[:12]}"), ("temperature", 0),
        ("max_tokens", int(opts["judge_max_tokens"])), ("input", input_bound(opts).field()),
        ("unparseable", 0), ("refused", f"zero({len(stats.refused)})"), ("failures", failures),
        *([("judge_snapshot", snapshot.field())] if snapshot is not None else []),
        ("thr", threshold_field(rule.threshold, rule.comparison)), ("thr_preset", rule.name), ("meteor", "hu-meteor"),
        ("tok", TOKENIZER_NAME), ("wordnet", wordnet_field(engine.lexicon)), ("lex", lexicon_field(engine.lexicon)),
        ("meteor_thr", threshold_field(METEOR_THRESHOLD, ">")), ("cap", MAX_EVIDENCE),
    ])


def _claim_rows(claims: Sequence[Claim], judged: Mapping[tuple[int | str, str], Judgement], *, rule: ThresholdPreset,
                m_q: Sequence[float], m_qa: Sequence[float], unscored_mode: bool,
                ) -> tuple[list[ClaimScore], dict[str, int], dict[str, int]]:
    """Per-claim scores, unparseable replies per kind and (``unscored_mode``) unscored claims per reason."""
    key, meteor_rule = threshold_key(rule.threshold), AVeriTeCScore(threshold=METEOR_THRESHOLD)
    per_claim, unparseable = [], {"questions_answers": 0, "questions_only": 0}
    unscored = dict.fromkeys(UNSCORED_REASONS, 0) if unscored_mode else {}
    for i, c in enumerate(claims):
        qa, q = judged.get((c.id, "qa"), UNPARSEABLE), judged.get((c.id, "questions"), UNPARSEABLE)
        unparseable["questions_answers"] += not qa.parsed and qa is not FAILED and qa is not REFUSED
        unparseable["questions_only"] += not q.parsed and q is not FAILED and q is not REFUSED
        correct = c.pred_label == c.gold_label
        vals = {
            "ev2r_qa_precision": qa.precision, "ev2r_qa_recall": qa.recall,
            "ev2r_q_precision": q.precision, "ev2r_q_recall": q.recall,
            f"averitec_score_ev2r@{key}": float(correct and rule.passes(qa.recall)), claim_key(LABEL_ACCURACY): float(correct),
            "hu_meteor_questions_only": m_q[i], "hu_meteor_questions_answers": m_qa[i],
            f"averitec_score_hu_meteor@{threshold_key(METEOR_THRESHOLD)}": meteor_rule.claim_score(
                evidence_score=m_qa[i], correct=correct),
        }
        reason = None
        if unscored_mode and (qa is FAILED or q is FAILED):  # only the judge's side; what the content causes is 0
            reason = UNSCORED_REASONS[0]
            unscored[reason] += 1
            vals.update(dict.fromkeys((*JUDGE_KEYS, f"averitec_score_ev2r@{key}"), float("nan")))
        per_claim.append(ClaimScore(claim_id=c.id, gold_label=c.gold_label, pred_label=c.pred_label, values=vals,
                                    unscored=reason))
    return per_claim, unparseable, unscored


class JudgeRun(NamedTuple):
    """What the judge gave a submission: each (claim id, kind)'s judgement, the prompt, the
    back-end, the run's counts and the snapshot of every reply.

    Example:
        >>> JudgeRun({(0, "qa"): FAILED}, JudgePrompt.load(), "openai", None, None).judged[(0, "qa")].parsed
        False
    """

    judged: dict[tuple[int | str, str], Judgement]
    prompt: JudgePrompt
    backend: str
    stats: Any
    snapshot: Any


class Profile(ScoringProfile):
    """FEVER-8: Ev2R recall by an LLM judge, new AVeriTeC score, Hungarian METEOR alongside."""

    name: ClassVar[str] = "fever8"
    description: ClassVar[str] = "FEVER-8 (2025): Ev2R precision/recall by an LLM judge, new AVeriTeC score, HU-METEOR alongside"
    citation: ClassVar[str] = "Akhtar et al. (2024), Ev2R; FEVER-8 shared task (2025)"
    OPTIONS: ClassVar[Mapping[str, ProfileOption]] = OPTIONS
    #: Under the default threshold rule (another rule's key: ``averitec_score_ev2r@<its threshold>``).
    per_claim_metrics: ClassVar[tuple[str, ...]] = (
        *JUDGE_KEYS, f"averitec_score_ev2r@{threshold_key(0.5)}", claim_key(LABEL_ACCURACY), "hu_meteor_questions_only",
        "hu_meteor_questions_answers", f"averitec_score_hu_meteor@{threshold_key(METEOR_THRESHOLD)}",
    )

    def _score(self, call: ScoreCall) -> ProfileResult:
        predictions, references, options = call.predictions, call.references, call.options
        jobs, progress, warm = call.jobs, call.progress, call.warm
        from averitec_tools.metrics.ev2r_runner import (
            CACHE_FILE,
            JudgementCache,
            default_cache_path,
        )

        opts = _options(options)
        claim_set = load_claims(predictions=predictions, references=references)
        cache_dir = opts["judge_cache"] or opts["cache_dir"]
        prompt = load_prompt(opts["judge_prompt"], cache_dir=cache_dir, allow_download=bool(opts["allow_download"]))
        bound = input_bound(opts)
        requests = judge_requests(claim_set.claims, prompt=prompt, model=str(opts["judge_model"]), bound=bound)
        cache = JudgementCache(Path(cache_dir) / CACHE_FILE if cache_dir else default_cache_path())
        try:
            if opts["dry_run"]:
                return self._dry_run(claim_set.claims, requests, cache, prompt)
            run = self._judge(requests, opts, prompt, cache, bound=bound, progress=progress)
        finally:
            cache.close()
        return self._result(claim_set, run, opts, jobs, progress, references, warm)

    def _dry_run(self, claims: Sequence[Claim], requests: Sequence[Any], cache: Any, prompt: JudgePrompt) -> ProfileResult:
        from averitec_tools.metrics.ev2r_runner import estimate_tokens

        known = cache.get_many([r.key for _, _, r in requests])
        todo = {r.key: r for _, _, r in requests if r.key not in known}
        summary = {
            "profile": self.name, "dry_run": True, "n_claims": len(claims), "judge_calls": len(todo),
            "prompt_tokens": sum(estimate_tokens(r.prompt) for r in todo.values()),
            "cached_calls": len({r.key for _, _, r in requests}) - len(todo), "token_estimate": "characters / 4",
            "prompt": prompt.name,
        }
        return ProfileResult(profile=self.name, signature="", n_claims=len(claims), summary=summary)

    @staticmethod
    def _judge(requests: Sequence[Any], opts: dict[str, Any], prompt: JudgePrompt, cache: Any, *, bound: Any,
               progress: bool) -> JudgeRun:
        """Every judgement, under the judge-failure policy, recorded in the run's snapshot."""
        from averitec_tools.metrics.ev2r_judges import make_judge
        from averitec_tools.metrics.ev2r_runner import run_judgements

        judge = make_judge(backend=opts["judge_backend"], model=str(opts["judge_model"]), url=opts["judge_url"],
                           api_key_env=opts["judge_api_key_env"], timeout=float(opts["judge_timeout"]),
                           max_tokens=int(opts["judge_max_tokens"]), max_new_tokens=int(opts["judge_max_tokens"]))
        snapshot = open_snapshot(opts, prompt, backend=judge.backend, bound=bound)
        replies, stats = run_judgements(
            [r for _, _, r in requests], judge=judge, cache=cache, concurrency=int(opts["judge_concurrency"]),
            retries=int(opts["judge_retries"]), backoff=float(opts["judge_backoff"]), progress=progress,
            on_failure=opts["failure_mode"], snapshot=snapshot,
        )
        save_snapshot(opts["judge_snapshot"], snapshot)
        return JudgeRun(judged(requests, replies, stats), prompt, judge.backend, stats, snapshot)

    def _result(
        self,
        claim_set: ClaimSet,
        run: JudgeRun,
        opts: dict[str, Any],
        jobs: int | None,
        progress: bool,
        references: PathLike,
        warm: WarmScoring | None,
    ) -> ProfileResult:
        claims: Sequence[Claim] = claim_set.claims
        n = len(claims)
        engine = make_engine({"allow_download": opts["allow_download"]}, warm=warm, profile=self.name)
        m_q, m_qa = _meteor(claims, engine=engine, jobs=jobs, progress=progress, references=references, opts=opts)
        rule: ThresholdPreset = opts["rule"]
        key = threshold_key(rule.threshold)
        stats = run.stats
        per_claim, unparseable, unscored = _claim_rows(claims, run.judged, rule=rule, m_q=m_q, m_qa=m_qa,
                                                       unscored_mode=stats.failure_mode == "unscored")
        mean = _means(per_claim, key=key)
        sig = _signature(opts, run.prompt, backend=run.backend, stats=stats, rule=rule, engine=engine,
                         unscored=sum(unscored.values()), snapshot=run.snapshot)
        summary: dict[str, Any] = {
            "profile": self.name,
            "signature": sig,
            "n_claims": n,
            "ev2r": {
                "questions_only": {"precision": mean["q_p"], "recall": mean["q_r"]},
                "questions_answers": {"precision": mean["qa_p"], "recall": mean["qa_r"]},
            },
            "averitec_score_ev2r": {key: mean["score"]},
            "threshold": {"preset": rule.name, "threshold": rule.threshold, "comparison": rule.comparison, "source": rule.source},
            "veracity": {report_key(LABEL_ACCURACY): mean["acc"]},
            "hu_meteor": {
                "questions_only": sum(m_q) / n,
                "questions_answers": sum(m_qa) / n,
                "averitec_score": {threshold_key(METEOR_THRESHOLD): mean["m_score"]},
            },
            "judge": _judge_summary(run, opts, unparseable=unparseable, unscored=unscored),
        }
        if claim_set.skipped_references:
            summary["reference_rows_skipped"] = claim_set.skipped_references
        warnings = run_warnings(stats, unparseable, n=n, skipped=claim_set.skipped_references, prompt=run.prompt)
        return ProfileResult(
            profile=self.name, signature=sig, n_claims=n, summary=summary, per_claim=tuple(per_claim),
            labels=AVERITEC_LABELS, warnings=tuple(warnings),
        )


def _meteor(claims: Sequence[Claim], *, engine: Any, jobs: int | None, progress: bool, references: PathLike,
            opts: dict[str, Any]) -> tuple[list[float], list[float]]:
    """The Hungarian METEOR side (questions only, Q+A), first :data:`MAX_EVIDENCE` predicted pairs."""
    from averitec_tools.metrics.hungarian_meteor import HungarianTask, score_tasks
    from averitec_tools.metrics.prepared_cache import prepared_cache_file

    q_tasks, qa_tasks = [], []
    for c in claims:
        gold_q = tuple(dict.fromkeys(q for q, _ in c.gold_pairs))
        q_tasks.append(HungarianTask(tuple(q for q, _ in c.pred_pairs[:MAX_EVIDENCE]), gold_q))
        qa_tasks.append(HungarianTask(tuple(f"{q} {a}" for q, a in c.pred_pairs[:MAX_EVIDENCE]), tuple(f"{q} {a}" for q, a in c.gold_pairs)))
    meteor = score_tasks(
        [*q_tasks, *qa_tasks], engine=engine, jobs=jobs, progress=progress,
        reference_cache=prepared_cache_file(references=references, cache_dir=opts["cache_dir"]),
    )
    n = len(claims)
    return list(meteor[:n]), list(meteor[n:])


def _judge_summary(run: JudgeRun, opts: dict[str, Any], *, unparseable: dict[str, int], unscored: dict[str, int]) -> dict[str, Any]:
    """The summary's ``judge`` section: who judged, what was sent, the policy's counts, the snapshot."""
    stats = run.stats
    n_unscored = sum(unscored.values())
    return {
        "backend": run.backend,
        "model": opts["judge_model"],
        "prompt": run.prompt.name,
        "prompt_sha256": run.prompt.sha256,
        "input": input_bound(opts).field(),
        "calls": stats.needed,
        "from_snapshot": stats.from_snapshot,
        "from_cache": stats.cached,
        "sent": stats.sent,
        "retries": stats.retries,
        "unparseable": unparseable,
        "refused_content": len(stats.refused),
        "failure_mode": FAILURE_MODE_TITLES[stats.failure_mode],
        "failed_scored_zero": len(stats.failed) if stats.failure_mode == "zero" else 0,
        "unscored": {"count": n_unscored, "reasons": unscored},
        "complete": n_unscored == 0,
        "snapshot_sha256": run.snapshot.digest(),
    }


__all__ = ["OPTIONS", "Claim", "Profile", "load_claims"]
