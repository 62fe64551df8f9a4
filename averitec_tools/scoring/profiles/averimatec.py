"""``averimatec``: the FEVER-9 AVerImaTeC scorer, exact, concurrent, cached -- or replayed.

Reproduces ``prepare_submission/`` of ``abril4416/AVerImaTec_Shared_Task`` at ``f6f361d``
and its ``Eval_Score_Compute`` notebook: per claim a question score, an evidence score (a
text judge call listing matched items, then image ratings by a vision-language judge), a
verdict score and a justification score; the four leaderboard columns are question and
evidence means over all claims, and verdict (the AVerImaTeC score) and justification
summed only where the evidence score clears the threshold rule, over all claims
(:mod:`averitec_tools.metrics.averimatec`). Default rule: the notebook's ``> 0.4``.

Departures, each in the signature: claims align by ``id`` (``--averimatec-align
position``: the official); temperature 0 (``--judge-sampling organisers``: theirs); a claim
without predicted or gold evidence scores evidence 0 and never passes (``no_evidence:0``;
theirs crashes); an empty question list scores 0 and a justification reply without its
markers scores 0 (theirs raise). ``--replay FILE`` aggregates the official intermediate
rows instead of calling a judge (:mod:`averitec_tools.scoring.averimatec_replay`).

Judge failures follow the policy of every judged profile
(:mod:`averitec_tools.metrics.judge_policy`, :mod:`averitec_tools.scoring.averimatec_policy`):
a request refused for its content and an unparseable reply score as the organisers' code
scores them (0); only a failure on the judge's side, after its retries, stops the run,
scores 0 (``--official-failure-mode``) or leaves the claim unscored (``--judge-unscored``,
the leaderboard's default: ``judge.complete`` false). ``--judge-max-items`` /
``--judge-item-chars`` bound what the judge is shown (``input`` in the signature) and
``--judge-snapshot FILE`` re-uses and records the replies (``judge_snapshot``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from averitec_tools.errors import UserError
from averitec_tools.metrics.averimatec import AVERIMATEC_PRESETS, DEFAULT_AVERIMATEC_PRESET
from averitec_tools.metrics.ev2r import threshold_rule
from averitec_tools.metrics.ev2r_judges import DEFAULT_API_KEY_ENV
from averitec_tools.records.averimatec import AVERIMATEC_LABELS
from averitec_tools.scoring.averimatec_images import DEFAULT_LIMITS, ImageLimits
from averitec_tools.scoring.averimatec_inputs import ALIGNMENTS
from averitec_tools.scoring.averimatec_summary import (
    COLUMNS,
    Assembled,
    per_claim_values,
    signature,
    summary,
)
from averitec_tools.scoring.profiles._meteor import ALLOW_DOWNLOAD, CACHE_DIR
from averitec_tools.scoring.profiles.base import (
    ClaimScore,
    ProfileOption,
    ProfileResult,
    ScoreCall,
    ScoringProfile,
)

#: The organisers' judge (``eval_offline.py``: ``--eval_model google/gemma-3-27b-it``).
DEFAULT_MODEL = "google/gemma-3-27b-it"
_STR = (str, type(None))
OPTIONS: Mapping[str, ProfileOption] = {
    "allow_download": ALLOW_DOWNLOAD,
    "cache_dir": CACHE_DIR,
    "judge_backend": ProfileOption(str, "openai", "judge back-end (see metrics.ev2r_judges)"),
    "judge_url": ProfileOption(_STR, None, "OpenAI-compatible server URL"),
    "judge_model": ProfileOption(str, DEFAULT_MODEL, "judge model name (a vision-language model)"),
    "judge_api_key_env": ProfileOption(str, DEFAULT_API_KEY_ENV, "environment variable holding the API key"),
    "judge_prompt": ProfileOption(_STR, None, "prompt file, or official[:PATH] (None: the packaged prompts)"),
    "judge_cache": ProfileOption(_STR, None, "judgement cache directory"),
    "judge_concurrency": ProfileOption(int, 32, "judge requests in flight", minimum=1),
    "judge_retries": ProfileOption(int, 5, "retries of a failed request", minimum=0),
    "judge_backoff": ProfileOption((int, float), 1.0, "seconds before the first retry (doubling)", minimum=0),
    "judge_timeout": ProfileOption((int, float), 300.0, "seconds per request", minimum=0),
    "judge_sampling": ProfileOption(str, "greedy", "sampling preset", choices=("greedy", "organisers")),
    "official_failure_mode": ProfileOption(bool, False, "a request that still fails gets an empty reply (scores 0)",
                                           excludes=("judge_unscored",)),
    "judge_unscored": ProfileOption(bool, False, "leave claims whose requests fail on the judge's side unscored",
                                    excludes=("official_failure_mode",)),
    "dry_run": ProfileOption(bool, False, "count judge calls and tokens, call nothing"),
    "judge_max_items": ProfileOption((int, type(None)), None, "predicted evidence items and questions the judge is shown "
                                                              "(None: all, as the organisers)", minimum=1),
    "judge_item_chars": ProfileOption((int, type(None)), None, "characters of each predicted text the judge is shown",
                                      minimum=1),
    "judge_snapshot": ProfileOption(_STR, None, "JSON file: replies re-used from it, then every reply the score depends "
                                                "on written to it"),
    "gold_images": ProfileOption(_STR, None, "the dataset's images folder (None: images/ beside the gold file)"),
    "averimatec_preset": ProfileOption(str, DEFAULT_AVERIMATEC_PRESET, "published threshold rule",
                                       choices=tuple(AVERIMATEC_PRESETS.names())),
    "averimatec_threshold": ProfileOption((float, type(None)), None, "custom evidence threshold", minimum=0.0,
                                          maximum=1.0),
    "averimatec_comparison": ProfileOption(_STR, None, "custom comparison ('>' or '>=')", choices=(None, ">", ">=")),
    "averimatec_align": ProfileOption(str, "id", "pair claims by 'id' or by 'position' (the official)",
                                      choices=ALIGNMENTS),
    "max_images_per_claim": ProfileOption(int, DEFAULT_LIMITS.max_images_per_claim, "evidence images a claim may have",
                                          minimum=0),
    "max_image_bytes": ProfileOption(int, DEFAULT_LIMITS.max_bytes, "bytes of one image", minimum=1),
    "max_image_pixels": ProfileOption(int, DEFAULT_LIMITS.max_pixels, "pixels of one image (read before decoding)",
                                      minimum=1),
    "replay": ProfileOption(_STR, None, "aggregate an official intermediate file instead of judging"),
    "replay_rows": ProfileOption(str, "all", "'last': the last N rows of a resumed official file",
                                 choices=("all", "last")),
}
DEFAULTS: dict[str, Any] = {name: option.default for name, option in OPTIONS.items()}


def options_of(options: Mapping[str, Any]) -> dict[str, Any]:
    """The options (checked by :meth:`ScoringProfile.score`) with defaults filled in, the
    threshold rule built and the failure mode named.

    Example:
        >>> o = options_of({"averimatec_preset": "fork-0.3", "judge_unscored": True})
        >>> (o["rule"].threshold, o["rule"].comparison, o["failure_mode"], o["judge_model"])
        (0.3, '>', 'unscored', 'google/gemma-3-27b-it')
    """
    opts = {**DEFAULTS, **{k: v for k, v in options.items() if v is not None}}
    opts["rule"] = threshold_rule(preset=opts["averimatec_preset"], threshold=opts["averimatec_threshold"],
                                  comparison=opts["averimatec_comparison"], presets=AVERIMATEC_PRESETS,
                                  flag="--averimatec")
    opts["failure_mode"] = "unscored" if opts["judge_unscored"] else "zero" if opts["official_failure_mode"] else "raise"
    return opts


def result(name: str, run: Assembled, opts: Mapping[str, Any]) -> ProfileResult:
    """The profile result of an assembled run (judged or replayed)."""
    values = per_claim_values(run, opts["rule"])
    per_claim = tuple(ClaimScore(claim_id=i, gold_label=g, pred_label=p, values=v, unscored=r)
                      for i, ((g, p), v, r) in enumerate(zip(run.labels, values, run.reasons(), strict=True)))
    return ProfileResult(profile=name, signature=run.signature, n_claims=len(run.scores),
                         summary=summary(name, run, opts), per_claim=per_claim, labels=AVERIMATEC_LABELS,
                         warnings=tuple(run.warnings))


class Profile(ScoringProfile):
    """FEVER-9 AVerImaTeC: question, evidence, verdict (AVerImaTeC score) and justification by a judge VLM."""

    name: ClassVar[str] = "averimatec"
    description: ClassVar[str] = ("FEVER-9 (2026) AVerImaTeC: question, evidence, verdict (AVerImaTeC score) and "
                                  "justification scores by a judge VLM, as the organisers' evaluator")
    citation: ClassVar[str] = "Cao et al. (2025), AVerImaTeC; FEVER-9 shared task (2026)"
    per_claim_metrics: ClassVar[tuple[str, ...]] = (*COLUMNS, "label_accuracy")
    OPTIONS: ClassVar[Mapping[str, ProfileOption]] = OPTIONS

    def _score(self, call: ScoreCall) -> ProfileResult:
        opts = options_of(call.options)
        if opts["replay"]:
            return self._replay(call, opts)
        from averitec_tools.scoring.averimatec_inputs import pair_claims
        from averitec_tools.scoring.averimatec_run import judge_run

        limits = ImageLimits(max_bytes=int(opts["max_image_bytes"]), max_pixels=int(opts["max_image_pixels"]),
                             max_images_per_claim=int(opts["max_images_per_claim"]))
        paired = pair_claims(predictions=call.predictions, references=call.references,
                             align=opts["averimatec_align"], limits=limits)
        gold_images = opts["gold_images"]
        if gold_images is None:
            from averitec_tools.scoring.averimatec_images import default_gold_images

            gold_images = str(default_gold_images(call.references))
        run = judge_run(paired, opts=opts, gold_images=Path(gold_images), progress=call.progress)
        if isinstance(run, dict):  # --dry-run
            return ProfileResult(profile=self.name, signature="", n_claims=run["n_claims"],
                                 summary={"profile": self.name, **run})
        return result(self.name, run, opts)

    def _replay(self, call: ScoreCall, opts: Mapping[str, Any]) -> ProfileResult:
        from averitec_tools.scoring.averimatec_inputs import load_gold, load_predictions
        from averitec_tools.scoring.averimatec_replay import replay

        gold = load_gold(call.references)
        preds = [p for _, p in load_predictions(call.predictions)]
        if opts["averimatec_align"] == "id":
            by_id = {p.id: p for p in preds}
            preds = [by_id[i] for i in range(len(gold)) if i in by_id]
        if len(preds) < len(gold):
            raise UserError(f"{call.predictions}: {len(preds)} predictions for {len(gold)} gold claims")
        done = replay(str(opts["replay"]), gold=gold, predictions=preds, rows=opts["replay_rows"])
        sig = signature(opts, judge=[("source", "replay"), ("rows", f"{len(done.scores)}/{done.rows_in_file}")])
        extra = {"replay": {"file": done.path.name, "rows_in_file": done.rows_in_file, "rows_used": len(done.scores),
                            "recomputed_mismatches": done.mismatches}}
        warnings = [f"{n} row(s) whose stored {k} differs from its recomputation from intermediate_info"
                    for k, n in done.mismatches.items() if n]
        labels = [(g.label or "", p.verdict) for g, p in zip(gold, preds, strict=False)]
        return result(self.name, Assembled(done.scores, labels, sig, extra, (), warnings), opts)


__all__ = ["DEFAULTS", "DEFAULT_MODEL", "OPTIONS", "Profile", "options_of"]
