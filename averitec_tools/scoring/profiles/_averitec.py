"""What the 2023 and 2024 AVeriTeC profiles share: reading and checking the inputs, the
signature, the veracity block, the λ-thresholded per-claim scores and the result.

Each profile keeps only what differs: its prediction format, the strings it compares and
the figures it reports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import numpy as np

from averitec_tools.metrics.averitec_score import AVERITEC_THRESHOLDS, AVeriTeCScore, threshold_key
from averitec_tools.metrics.keys import report_key
from averitec_tools.metrics.label_metrics import LABEL_ACCURACY, LABEL_MACRO_F1, f1_per_label
from averitec_tools.metrics.meteor import MeteorEngine
from averitec_tools.records.averitec import AVERITEC_LABELS, AVeriTeCClaim
from averitec_tools.scoring.evidence_strings import MAX_EVIDENCE, answer_strings, qa_strings
from averitec_tools.scoring.lenient import Lenience
from averitec_tools.scoring.profiles._meteor import make_engine, signature
from averitec_tools.scoring.profiles.base import ClaimScore, PathLike, ProfileResult
from averitec_tools.scoring.submission import check_claim_text, load_gold_claims
from averitec_tools.scoring.warm import WarmScoring, warm_gold_cache


class _Prediction(Protocol):
    @property
    def claim(self) -> str | None: ...
    @property
    def confidence(self) -> float | None: ...
    @property
    def probabilities(self) -> Mapping[str, float] | None: ...


P = TypeVar("P", bound=_Prediction)


@dataclass(frozen=True)
class Inputs(Generic[P]):
    """Checked inputs of one scoring run."""

    metric: str
    gold: list[AVeriTeCClaim]
    preds: list[P]
    lenience: Lenience
    engine: MeteorEngine


def read_inputs(
    *,
    profile: str,
    predictions: PathLike,
    references: PathLike,
    options: dict[str, Any],
    warm: WarmScoring | None,
    load_predictions: Callable[..., list[P]],
    where: Callable[[int], str],
    check_reference: Callable[[int, AVeriTeCClaim, str], None] | None = None,
) -> Inputs[P]:
    """Gold, predictions (aligned one per reference claim), claim texts, engine (the options
    were checked by :meth:`ScoringProfile.score`).

    ``check_reference(i, gold_claim, metric)`` runs right after claim ``i``'s text check,
    so the first defect of a file is the one reported.
    """
    metric = options.get("metric", "all")
    gold = load_gold_claims(references, profile=profile, cache=warm_gold_cache(warm, profile=profile))
    lenience = Lenience(enabled=bool(options.get("lenient", False)))
    preds = load_predictions(predictions, n_references=len(gold), references=str(references), lenience=lenience)
    for i, (p, g) in enumerate(zip(preds, gold, strict=True)):
        check_claim_text(p.claim, g.claim, where(i))
        if check_reference is not None:
            check_reference(i, g, metric)
    engine = make_engine(options, warm=warm, profile=profile)
    return Inputs(metric=metric, gold=gold, preds=preds, lenience=lenience, engine=engine)


def gold_strings(references: PathLike, *, profile: str) -> list[str]:
    """The gold side both AVeriTeC profiles compare: questions, Q+A and answer strings, each once.

    Example:
        >>> import json, pathlib, tempfile
        >>> gold = pathlib.Path(tempfile.mkdtemp()) / "g.json"
        >>> _ = gold.write_text(json.dumps([{"claim": "c", "label": "Refuted",
        ...     "questions": [{"question": "Who?", "answers": [{"answer": "Bob"}]}]}]))
        >>> gold_strings(gold, profile="averitec2024")
        ['Who?', 'Who? Bob', 'Bob']
    """
    out: list[str] = []
    for claim in load_gold_claims(references, profile=profile):
        out += [q.question for q in claim.questions]
        out += qa_strings(claim.questions) + answer_strings(claim.questions)
    return list(dict.fromkeys(out))


def averitec_signature(*, profile: str, engine: MeteorEngine, lenience: Lenience) -> str:
    """Both profiles' signature: the official λ set, strict ``>``, gold normalisation, cap 10."""
    return signature(
        profile=profile,
        engine=engine,
        thresholds=AVERITEC_THRESHOLDS,
        comparison=">",
        normalisation="gold",
        evidence_cap=MAX_EVIDENCE,
        lenient=lenience.enabled,
    )


def summary_head(*, profile: str, sig: str, means: dict[str, Sequence[float]], lenience: Lenience) -> dict[str, Any]:
    """The summary's first keys: profile, signature, claim count, the mean of each score
    list in ``means`` (in order), and what ``--lenient`` tolerated."""
    n = len(next(iter(means.values())))
    summary: dict[str, Any] = {"profile": profile, "signature": sig, "n_claims": n}
    summary.update({key: float(np.mean(values)) for key, values in means.items()})
    if lenience.enabled:
        summary["tolerated"] = lenience.summary()
    return summary


def label_correctness(gold: Sequence[AVeriTeCClaim], pred_labels: Sequence[str | None]) -> tuple[list[str | None], list[bool]]:
    """Gold labels and, per claim, whether the predicted label equals it exactly."""
    gold_labels = [g.label for g in gold]
    return gold_labels, [pl == gl for pl, gl in zip(pred_labels, gold_labels, strict=True)]


def veracity(*, gold_labels: Sequence[str | None], pred_labels: Sequence[str | None], correct: Sequence[bool]) -> dict[str, Any]:
    """Label accuracy, macro-F1 (the registry's, under their report keys) and per-label F1
    over the four AVeriTeC labels."""
    return {
        report_key(LABEL_ACCURACY): LABEL_ACCURACY(gold=gold_labels, predicted=pred_labels),
        report_key(LABEL_MACRO_F1): LABEL_MACRO_F1(gold=gold_labels, predicted=pred_labels, labels=AVERITEC_LABELS),
        "f1": f1_per_label(gold=gold_labels, predicted=pred_labels, labels=AVERITEC_LABELS),  # type: ignore[arg-type]
    }


def thresholded(evidence_scores: Sequence[float], values: Sequence[Any]) -> np.ndarray:
    """Per claim and λ: the claim's value where its evidence score clears λ (the registered
    :class:`~averitec_tools.metrics.averitec_score.AVeriTeCScore`, strict ``>``), else 0.0.

    The official scorers store label correctness (a bool) or 0.0 per λ and average with
    ``axis=0``; this is that matrix (claims × :data:`AVERITEC_THRESHOLDS`).

    Example:
        >>> thresholded([0.3, 0.1], [True, True]).tolist()  # strict: 0.3 is not > 0.3
        [[1.0, 1.0, 1.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]]
    """
    levels = [AVeriTeCScore(threshold=t).gated(evidence_scores=evidence_scores, values=values) for t in AVERITEC_THRESHOLDS]
    # claims x levels, laid out row by row as the official scorers build it: the column means
    # then add in the official order (a transposed view would sum in another, differing in the last bits)
    return np.array(list(zip(*levels, strict=True)), dtype=float).reshape(len(evidence_scores), len(AVERITEC_THRESHOLDS))


def level_means(per_level: np.ndarray) -> dict[str, float]:
    """Mean over claims of each λ column, keyed by :func:`threshold_key`."""
    return {threshold_key(t): float(v) for t, v in zip(AVERITEC_THRESHOLDS, np.mean(per_level, axis=0), strict=True)}


def result(
    *,
    profile: str,
    sig: str,
    summary: dict[str, Any],
    inputs: Inputs[Any],
    pred_labels: Sequence[str | None],
    values: Sequence[dict[str, float]],
) -> ProfileResult:
    """The profile's result, one :class:`ClaimScore` per reference claim (ids by position)."""
    per_claim = tuple(
        ClaimScore(
            claim_id=i,
            gold_label=g.label,
            pred_label=label,
            values=vals,
            confidence=p.confidence,
            probabilities=p.probabilities,
            claim_types=g.claim_types,
        )
        for i, (p, g, label, vals) in enumerate(zip(inputs.preds, inputs.gold, pred_labels, values, strict=True))
    )
    return ProfileResult(
        profile=profile,
        signature=sig,
        n_claims=len(inputs.gold),
        summary=summary,
        per_claim=per_claim,
        labels=AVERITEC_LABELS,
        warnings=tuple(inputs.lenience.warnings()),
    )


__all__ = [
    "Inputs", "averitec_signature", "gold_strings", "label_correctness", "level_means", "read_inputs", "result", "summary_head",
    "thresholded", "veracity",
]
