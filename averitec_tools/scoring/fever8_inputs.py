"""What the FEVER-8 judge is shown: claims paired with references, and the judge requests.

Shared by the ``fever8`` profile and ``averitec judge-agreement``. The texts are built as
the organisers' scorer builds them: the reference claim; for Q+A the ``evi`` string (read
verbatim from a FEVER-8 CSV, or built from JSON as their converter writes it: every pair
``question TAB TAB NL answer TAB TAB NL NL``); for questions only, the question of every
``evi`` piece joined by spaces. References from ``dev.json`` give one pair per answer (a
Boolean answer with ``". " + boolean_explanation``) and ``No answer could be found.`` for
an unanswered question; that is byte for byte the organisers' ``solution_dev.csv``. A
reference CSV with a ``split`` column is scored on its ``gold`` rows only, as the
leaderboard does.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.metrics.ev2r import KINDS, JudgePrompt
from averitec_tools.metrics.judge_policy import InputBound
from averitec_tools.scoring.convert import NO_ANSWER, read_submission
from averitec_tools.scoring.fever8_csv import (
    csv_id,
    evi_questions,
    join_evi,
    read_fever8_csv,
    split_evi,
)
from averitec_tools.scoring.formats import is_fever8_csv
from averitec_tools.scoring.submission import check_label, load_gold_claims

PathLike = str | os.PathLike[str]
Pairs = tuple[tuple[str, str], ...]
#: Rows of a reference CSV the leaderboard scores (``solution[solution.split == "gold"]``).
GOLD_SPLIT = "gold"


@dataclass(frozen=True)
class Claim:
    """One claim to judge: labels, the reference claim text, and both sides' pairs and ``evi`` strings."""

    id: int | str
    claim: str
    gold_label: str
    pred_label: str
    gold_pairs: Pairs
    pred_pairs: Pairs
    gold_evi: str
    pred_evi: str


@dataclass(frozen=True)
class ClaimSet:
    """The paired claims, and how many reference rows were left out (``split`` not ``gold``)."""

    claims: list[Claim]
    skipped_references: int = 0


def _is_csv(path: PathLike) -> bool:
    return str(path).lower().endswith(".csv") or is_fever8_csv(path)


def _gold_from_dev(path: PathLike) -> dict[int | str, tuple[str, str, Pairs, str]]:
    out: dict[int | str, tuple[str, str, Pairs, str]] = {}
    for i, g in enumerate(load_gold_claims(path, profile="fever8")):
        pairs = []
        for q in g.questions:
            for a in q.answers:
                boolean = a.answer_type == "Boolean"  # the gold loader requires its explanation
                pairs.append((q.question, a.answer + (". " + (a.boolean_explanation or "") if boolean else "")))
            if not q.answers:
                pairs.append((q.question, NO_ANSWER))
        out[i] = (g.claim, g.label or "", tuple(pairs), join_evi(pairs, where=f"{path} (claim {i})"))
    return out


def _gold_from_csv(path: PathLike) -> tuple[dict[int | str, tuple[str, str, Pairs, str]], set[int | str]]:
    out: dict[int | str, tuple[str, str, Pairs, str]] = {}
    skipped: set[int | str] = set()
    rows = read_fever8_csv(path)
    by_split = bool(rows) and "split" in rows[0]
    for line, row in enumerate(rows, start=2):
        where = f"{path}:{line}"
        key = csv_id(row["id"])
        if key in out or key in skipped:
            raise UserError(f"{where}: duplicate id {key!r}")
        if by_split and (row.get("split") or "") != GOLD_SPLIT:
            skipped.add(key)
            continue
        evi = row.get("evi") or ""
        pairs = tuple(split_evi(evi, where=where))
        if not pairs:
            raise UserError(f"{where}: reference claim has no evidence")
        out[key] = (row.get("claim") or "", check_label(row.get("label") or "", where), pairs, evi)
    if not out:
        raise UserError(f"{path}: no reference rows with split '{GOLD_SPLIT}' (the leaderboard scores only those)")
    return out, skipped


def _raw_pred_evi(path: PathLike) -> dict[int | str, str]:
    return {csv_id(row["id"]): row.get("evi") or "" for row in read_fever8_csv(path)}


def load_claims(*, predictions: PathLike, references: PathLike) -> ClaimSet:
    """Pair predictions with references (every scored reference predicted exactly once).

    Predictions of reference rows the leaderboard leaves out (``split`` not ``gold``) are
    ignored, as there.
    """
    if _is_csv(references):
        gold, skipped = _gold_from_csv(references)
    else:
        gold, skipped = _gold_from_dev(references), set()
    fmt, items = read_submission(predictions)
    raw_evi = _raw_pred_evi(predictions) if fmt == "fever8" else {}
    by_id: dict[int | str, Any] = {}
    for item in items:
        where = f"{predictions} (claim {item.id!r})"
        if item.id in by_id:
            raise UserError(f"{where}: duplicate claim id")
        if item.id in skipped:
            continue
        if item.id not in gold:
            raise UserError(f"{where}: no reference claim with this id", detail=f"not in {references}")
        if item.strings:
            raise UserError(f"{where}: evidence strings without a question/answer split; fever8 needs question/answer pairs")
        by_id[item.id] = item
    missing = [k for k in gold if k not in by_id]
    if missing:
        raise UserError(f"{predictions}: not every reference claim is predicted",
                        detail=f"{len(missing)} reference claim(s) missing, e.g. id {missing[0]!r}")
    claims = []
    for k, (text, label, pairs, evi) in gold.items():
        item = by_id[k]
        pred_pairs = tuple((e.question, e.answer) for e in item.evidence or ())
        pred_evi = raw_evi[k] if k in raw_evi else join_evi(pred_pairs, where=f"{predictions} (claim {k!r})")
        claims.append(Claim(k, text, label, item.label, pairs, pred_pairs, evi, pred_evi))
    return ClaimSet(claims, len(skipped))


def judge_texts(claim: Claim, kind: str, *, bound: InputBound | None = None) -> tuple[str, str]:
    """``(reference, prediction)`` as the judge sees them for ``kind``; with an active
    ``bound`` the prediction is rebuilt from its bounded pairs (the reference never is).

    Example:
        >>> c = Claim(0, "C", "Refuted", "Refuted", (), (("Q2?", "B."),), "Q1?\\t\\t\\nA.\\t\\t\\n\\n", "Q2?\\t\\t\\nB.\\t\\t\\n\\n")
        >>> judge_texts(c, "questions")
        ('Q1?', 'Q2?')
        >>> judge_texts(c, "qa", bound=InputBound(max_chars=1))[1]
        'Q\\t\\t\\nB\\t\\t\\n\\n'
    """
    pred_evi = claim.pred_evi
    if bound is not None and bound.active:
        pred_evi = join_evi(bound.pairs(claim.pred_pairs)[0], where=f"claim {claim.id!r}")
    if kind == "qa":
        return claim.gold_evi, pred_evi
    return evi_questions(claim.gold_evi), evi_questions(pred_evi)


def judge_requests(
    claims: Sequence[Claim],
    *,
    prompt: JudgePrompt,
    model: str,
    kinds: Sequence[str] = KINDS,
    temperature: float = 0.0,
    seed: int | None = None,
    repeat: int = 0,
    bound: InputBound | None = None,
) -> list[tuple[Claim, str, Any]]:
    """``(claim, kind, JudgeRequest)`` for every claim and kind (questions first, as the
    organisers send them); ``bound`` cuts what the judge sees of each prediction."""
    from averitec_tools.metrics.ev2r_runner import JudgeRequest, cache_key, sampling_tag

    tag = sampling_tag(temperature=temperature, seed=seed, repeat=repeat)
    out = []
    for kind in sorted(kinds, key=lambda k: k != "questions"):
        for c in claims:
            ref, pred = judge_texts(c, kind, bound=bound)
            key = cache_key(model=model, prompt_sha256=prompt.sha256, claim_id=c.id, kind=kind, reference=ref,
                            prediction=pred, sampling=tag)
            text = prompt.render(kind, claim=c.claim, reference=ref, prediction=pred)
            out.append((c, kind, JudgeRequest(key, text, f"claim {c.id!r} ({kind})", seed)))
    return out


def load_prompt(spec: str | None, *, cache_dir: PathLike | None = None, allow_download: bool = True) -> JudgePrompt:
    """``--judge-prompt``: the packaged prompt (``None``), a prompt file, or ``official[:PATH]``."""
    from averitec_tools.metrics.ev2r_official import is_official, load_official_prompt

    if is_official(spec):
        return load_official_prompt(str(spec), cache_dir=cache_dir, allow_download=allow_download)
    return JudgePrompt.load(spec)


__all__ = ["Claim", "ClaimSet", "judge_requests", "load_claims", "load_prompt"]
