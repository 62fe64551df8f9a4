"""``fever8``: the FEVER-8 (2025) AVeriTeC scorer -- Ev2R evidence recall by an LLM judge.

Per claim, the judge (temperature 0) compares the reference with the predicted evidence
twice: as question-answer pairs (``qa``) and as questions only (``questions``); see
:mod:`averitec_tools.metrics.ev2r` for the precision/recall arithmetic. Reported:

* ``ev2r`` -- mean precision and recall for ``questions_answers`` and ``questions_only``;
* ``averitec_score_ev2r`` -- the new AVeriTeC score: the share of claims whose label is
  right and whose Q+A recall reaches the threshold. The organisers' scripts differ here:
  one version counts ``recall >= 0.5``, the leaderboard version ``recall > 0.5``, and the
  task page quotes 0.44; default ``>= 0.5``, both configurable and recorded in the signature;
* ``hu_meteor`` -- the Hungarian METEOR figures alongside (first 10 predicted items, gold
  normalisation, AVeriTeC score at 0.25 with ``>``);
* ``judge`` -- model, back-end, prompt hash, calls needed / taken from the cache / sent, and
  how many replies were unparseable (they score 0, as in the official code).

Inputs: predictions in the 2024 JSON format or the FEVER-8 CSV (``id, claim, evi, label,
split``); references ``dev.json`` (claim ids are positions) or a FEVER-8 solution CSV
(matched by ``id``). Gold pairs from ``dev.json``: one per answer (Boolean answers with
``". " + boolean_explanation``), ``"No answer could be found."`` for a question without
answers. The judge sees the claim text of the reference, the evidence as the FEVER-8
``evi`` string (all pairs, no cap), and the questions joined by spaces.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from averitec_tools._version import __version__
from averitec_tools.errors import UserError
from averitec_tools.leaderboard.convert import (
    Item,
    join_evi,
    read_fever8_csv,
    read_submission,
    split_evi,
)
from averitec_tools.leaderboard.profiles.base import (
    ClaimScore,
    PathLike,
    ProfileResult,
    ScoringProfile,
)
from averitec_tools.leaderboard.scoring import MAX_EVIDENCE, NO_ANSWER, make_engine
from averitec_tools.leaderboard.submission import check_label, load_gold_claims
from averitec_tools.metrics.averitec_score import passes, threshold_key
from averitec_tools.metrics.ev2r import (
    UNPARSEABLE,
    Judgement,
    JudgePrompt,
    parse_judgement,
    questions_text,
)
from averitec_tools.metrics.ev2r_judges import DEFAULT_API_KEY_ENV, DEFAULT_JUDGE_MODEL
from averitec_tools.records.averitec import AVERITEC_LABELS

METEOR_THRESHOLD = 0.25
COMPARISONS = (">=", ">")
DEFAULTS: dict[str, Any] = {
    "allow_download": True,
    "judge_backend": "openai",
    "judge_url": None,
    "judge_model": DEFAULT_JUDGE_MODEL,
    "judge_api_key_env": DEFAULT_API_KEY_ENV,
    "judge_prompt": None,
    "judge_cache": None,
    "judge_concurrency": 4,
    "judge_retries": 5,
    "judge_backoff": 1.0,
    "judge_timeout": 120.0,
    "judge_max_tokens": 1024,
    "ev2r_threshold": 0.5,
    "ev2r_comparison": ">=",
    "dry_run": False,
    "cache_dir": None,
}


@dataclass(frozen=True)
class Claim:
    """One claim to judge: reference and predicted pairs, labels and the claim text."""

    id: int | str
    claim: str
    gold_label: str
    pred_label: str
    gold_pairs: tuple[tuple[str, str], ...]
    pred_pairs: tuple[tuple[str, str], ...]


def _gold_from_dev(path: PathLike) -> dict[int | str, tuple[str, str, tuple[tuple[str, str], ...]]]:
    out: dict[int | str, tuple[str, str, tuple[tuple[str, str], ...]]] = {}
    for i, g in enumerate(load_gold_claims(path, profile="fever8")):
        pairs = []
        for q in g.questions:
            for a in q.answers:
                pairs.append((q.question, a.answer + (". " + (a.boolean_explanation or "") if a.answer_type == "Boolean" else "")))
            if not q.answers:
                pairs.append((q.question, NO_ANSWER.strip()))
        out[i] = (g.claim, g.label or "", tuple(pairs))
    return out


def _gold_from_csv(path: PathLike) -> dict[int | str, tuple[str, str, tuple[tuple[str, str], ...]]]:
    from averitec_tools.leaderboard.convert import _csv_id

    out: dict[int | str, tuple[str, str, tuple[tuple[str, str], ...]]] = {}
    for line, row in enumerate(read_fever8_csv(path), start=2):
        where = f"{path}:{line}"
        key = _csv_id(row["id"])
        if key in out:
            raise UserError(f"{where}: duplicate id {key!r}")
        pairs = tuple(split_evi(row.get("evi") or "", where=where))
        if not pairs:
            raise UserError(f"{where}: reference claim has no evidence")
        out[key] = (row.get("claim") or "", check_label(row.get("label") or "", where), pairs)
    return out


def load_claims(*, predictions: PathLike, references: PathLike) -> list[Claim]:
    """Pair predictions with references (every reference predicted exactly once)."""
    gold = _gold_from_csv(references) if str(references).lower().endswith(".csv") else _gold_from_dev(references)
    _, items = read_submission(predictions)
    by_id: dict[int | str, Item] = {}
    for item in items:
        where = f"{predictions} (claim {item.id!r})"
        if item.id in by_id:
            raise UserError(f"{where}: duplicate claim id")
        if item.id not in gold:
            raise UserError(f"{where}: no reference claim with this id", detail=f"not in {references}")
        if item.strings:
            raise UserError(f"{where}: evidence strings without a question/answer split; fever8 needs question/answer pairs")
        by_id[item.id] = item
    missing = [k for k in gold if k not in by_id]
    if missing:
        raise UserError(f"{predictions}: not every reference claim is predicted",
                        detail=f"{len(missing)} reference claim(s) missing, e.g. id {missing[0]!r}")
    return [
        Claim(k, text, label, by_id[k].label, pairs, tuple((e.question, e.answer) for e in by_id[k].evidence or ()))
        for k, (text, label, pairs) in gold.items()
    ]


def _options(options: dict[str, Any]) -> dict[str, Any]:
    unknown = set(options) - set(DEFAULTS)
    if unknown:
        raise UserError(f"profile 'fever8' does not take option(s): {', '.join(sorted(unknown))}")
    opts = {**DEFAULTS, **{k: v for k, v in options.items() if v is not None}}
    if opts["ev2r_comparison"] not in COMPARISONS:
        raise UserError(f"--ev2r-comparison must be one of {', '.join(COMPARISONS)}")
    if not 0.0 <= float(opts["ev2r_threshold"]) <= 1.0:
        raise UserError(f"--ev2r-threshold must be between 0 and 1, got {opts['ev2r_threshold']}")
    if int(opts["judge_concurrency"]) < 1 or int(opts["judge_retries"]) < 0:
        raise UserError("--judge-concurrency must be at least 1 and --judge-retries at least 0")
    return opts


def _requests(claims: Sequence[Claim], prompt: JudgePrompt, model: str) -> list[tuple[Claim, str, Any]]:
    from averitec_tools.metrics.ev2r_runner import JudgeRequest, cache_key

    out = []
    for c in claims:
        texts = {
            "qa": (join_evi(c.gold_pairs, where=f"claim {c.id!r}"), join_evi(c.pred_pairs, where=f"claim {c.id!r}")),
            "questions": (questions_text(c.gold_pairs), questions_text(c.pred_pairs)),
        }
        for kind, (ref, pred) in texts.items():
            key = cache_key(model=model, prompt_sha256=prompt.sha256, claim_id=c.id, kind=kind, reference=ref, prediction=pred)
            text = prompt.render(kind, claim=c.claim, reference=ref, prediction=pred)
            out.append((c, kind, JudgeRequest(key, text, f"claim {c.id!r} ({kind})")))
    return out


class Profile(ScoringProfile):
    """FEVER-8: Ev2R recall by an LLM judge, new AVeriTeC score, Hungarian METEOR alongside."""

    name: ClassVar[str] = "fever8"
    description: ClassVar[str] = "FEVER-8 (2025): Ev2R precision/recall by an LLM judge, new AVeriTeC score, HU-METEOR alongside"
    citation: ClassVar[str] = "Akhtar et al. (2024), Ev2R; FEVER-8 shared task (2025)"
    OPTIONS: ClassVar[tuple[str, ...]] = tuple(DEFAULTS)

    def score(
        self,
        *,
        predictions: PathLike,
        references: PathLike,
        jobs: int | None = None,
        progress: bool = False,
        **options: Any,
    ) -> ProfileResult:
        from averitec_tools.metrics.ev2r_runner import (
            JudgementCache,
            default_cache_path,
            estimate_tokens,
            run_judgements,
        )

        opts = _options(options)
        claims = load_claims(predictions=predictions, references=references)
        prompt = JudgePrompt.load(opts["judge_prompt"])
        model = str(opts["judge_model"])
        requests = _requests(claims, prompt, model)
        cache_dir = opts["judge_cache"] or opts["cache_dir"]
        cache = JudgementCache(Path(cache_dir) / "ev2r-judgements.sqlite" if cache_dir else default_cache_path())
        try:
            if opts["dry_run"]:
                todo = {r.key: r for _, _, r in requests if cache.get(r.key) is None}
                summary = {
                    "profile": self.name,
                    "dry_run": True,
                    "n_claims": len(claims),
                    "judge_calls": len(todo),
                    "prompt_tokens": sum(estimate_tokens(r.prompt) for r in todo.values()),
                    "cached_calls": len({r.key for _, _, r in requests}) - len(todo),
                    "token_estimate": "characters / 4",
                }
                return ProfileResult(profile=self.name, signature="", n_claims=len(claims), summary=summary)
            from averitec_tools.metrics.ev2r_judges import make_judge

            judge = make_judge(
                backend=opts["judge_backend"],
                model=model,
                url=opts["judge_url"],
                api_key_env=opts["judge_api_key_env"],
                timeout=float(opts["judge_timeout"]),
                max_tokens=int(opts["judge_max_tokens"]),
                max_new_tokens=int(opts["judge_max_tokens"]),
            )
            replies, stats = run_judgements(
                [r for _, _, r in requests],
                judge=judge,
                cache=cache,
                concurrency=int(opts["judge_concurrency"]),
                retries=int(opts["judge_retries"]),
                backoff=float(opts["judge_backoff"]),
                progress=progress,
            )
        finally:
            cache.close()
        judged: dict[tuple[int | str, str], Judgement] = {
            (c.id, kind): parse_judgement(replies.get(r.key, ""), kind) for c, kind, r in requests
        }
        return self._result(claims, judged, opts, prompt, judge.backend, stats, jobs, progress, references)

    def _result(
        self,
        claims: Sequence[Claim],
        judged: dict[tuple[int | str, str], Judgement],
        opts: dict[str, Any],
        prompt: JudgePrompt,
        backend: str,
        stats: Any,
        jobs: int | None,
        progress: bool,
        references: PathLike,
    ) -> ProfileResult:
        from averitec_tools.metrics.hungarian_meteor import HungarianTask, score_tasks
        from averitec_tools.metrics.prepared_cache import prepared_cache_file

        n = len(claims)
        engine = make_engine({"allow_download": opts["allow_download"]})
        q_tasks, qa_tasks = [], []
        for c in claims:
            gold_q = tuple(dict.fromkeys(q for q, _ in c.gold_pairs))
            q_tasks.append(HungarianTask(tuple(q for q, _ in c.pred_pairs[:MAX_EVIDENCE]), gold_q))
            qa_tasks.append(HungarianTask(tuple(f"{q} {a}" for q, a in c.pred_pairs[:MAX_EVIDENCE]), tuple(f"{q} {a}" for q, a in c.gold_pairs)))
        meteor = score_tasks(
            [*q_tasks, *qa_tasks], engine=engine, jobs=jobs, progress=progress,
            reference_cache=prepared_cache_file(references=references, cache_dir=opts["cache_dir"]),
        )
        m_q, m_qa = meteor[:n], meteor[n:]

        thr, cmp = float(opts["ev2r_threshold"]), str(opts["ev2r_comparison"])
        key = threshold_key(thr)
        per_claim, unparseable = [], {"questions_answers": 0, "questions_only": 0}
        sums = {"qa_p": 0.0, "qa_r": 0.0, "q_p": 0.0, "q_r": 0.0, "score": 0.0, "acc": 0.0, "m_score": 0.0}
        for i, c in enumerate(claims):
            qa, q = judged.get((c.id, "qa"), UNPARSEABLE), judged.get((c.id, "questions"), UNPARSEABLE)
            unparseable["questions_answers"] += not qa.parsed
            unparseable["questions_only"] += not q.parsed
            correct = c.pred_label == c.gold_label
            new_score = float(correct and passes(qa.recall, thr, strict=cmp == ">"))
            old_score = float(correct and passes(m_qa[i], METEOR_THRESHOLD))
            vals = {
                "ev2r_qa_precision": qa.precision, "ev2r_qa_recall": qa.recall,
                "ev2r_q_precision": q.precision, "ev2r_q_recall": q.recall,
                f"averitec_score_ev2r@{key}": new_score, "label_accuracy": float(correct),
                "hu_meteor_questions_only": m_q[i], "hu_meteor_questions_answers": m_qa[i],
                f"averitec_score_hu_meteor@{threshold_key(METEOR_THRESHOLD)}": old_score,
            }
            for name, v in zip(sums, (qa.precision, qa.recall, q.precision, q.recall, new_score, float(correct), old_score), strict=True):
                sums[name] += v
            per_claim.append(ClaimScore(claim_id=c.id, gold_label=c.gold_label, pred_label=c.pred_label, values=vals))
        mean = {k: v / n for k, v in sums.items()}
        wn = engine.wordnet
        sig = (
            f"profile:fever8|metric:ev2r|judge:{backend}:{opts['judge_model']}|prompt:{prompt.name}+sha256.{prompt.sha256[:12]}"
            f"|temperature:0|unparseable:0|thr:{thr!r}({cmp})|meteor:hu-meteor|tok:nltk-3.9.1-word_tokenize"
            f"|wordnet:{wn.version}+sha256.{wn.checksum}|meteor_thr:{METEOR_THRESHOLD!r}(>)|cap:{MAX_EVIDENCE}|version:{__version__}"
        )
        summary: dict[str, Any] = {
            "profile": self.name,
            "signature": sig,
            "n_claims": n,
            "ev2r": {
                "questions_only": {"precision": mean["q_p"], "recall": mean["q_r"]},
                "questions_answers": {"precision": mean["qa_p"], "recall": mean["qa_r"]},
            },
            "averitec_score_ev2r": {key: mean["score"]},
            "veracity": {"accuracy": mean["acc"]},
            "hu_meteor": {
                "questions_only": sum(m_q) / n,
                "questions_answers": sum(m_qa) / n,
                "averitec_score": {threshold_key(METEOR_THRESHOLD): mean["m_score"]},
            },
            "judge": {
                "backend": backend,
                "model": opts["judge_model"],
                "prompt": prompt.name,
                "prompt_sha256": prompt.sha256,
                "calls": stats.needed,
                "from_cache": stats.cached,
                "sent": stats.sent,
                "retries": stats.retries,
                "unparseable": unparseable,
            },
        }
        warnings = []
        total_bad = sum(unparseable.values())
        if total_bad:
            warnings.append(f"{total_bad} of {2 * n} judge replies could not be parsed; they score 0, as in the official code")
        return ProfileResult(
            profile=self.name, signature=sig, n_claims=n, summary=summary, per_claim=tuple(per_claim),
            labels=AVERITEC_LABELS, warnings=tuple(warnings),
        )


__all__ = ["DEFAULTS", "Claim", "Profile", "load_claims"]
