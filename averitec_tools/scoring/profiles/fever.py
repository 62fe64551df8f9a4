"""The ``fever`` scoring profile: the FEVER score of ``sheffieldnlp/fever-scorer``.

Files:
    * references — FEVER gold JSONL (``paper_dev.jsonl``, ``shared_task_dev.jsonl``):
      ``{id, verifiable, label, claim, evidence: [[[annotation_id, evidence_id, page,
      line], ...], ...]}``;
    * predictions — the shared-task JSONL: ``{id, predicted_label, predicted_evidence:
      [[page, line], ...]}`` (``label``/``evidence`` accepted when the ``predicted_*`` keys
      are absent), optionally with ``confidence`` and ``probabilities``.

Reference behaviour reproduced (see :mod:`averitec_tools.metrics.fever_score`):
    * lines are aligned by position, as in the reference's blind mode; unlike the
      reference we also check that the ``id`` of each line matches when both files have
      one (a shuffled file would otherwise be scored silently wrong);
    * labels are compared case-insensitively; other spellings are an error here
      (the reference silently counts them as wrong);
    * only the first ``max_evidence`` (default 5) predicted sentences count;
    * the reference crashes with ``ZeroDivisionError`` when precision and recall are both
      0 or the file is empty; here F1 is 0.0 and an empty file is a clear error.
    * a predictions line that carries its own gold ``label`` *and* ``evidence`` would
      replace the reference file's gold in the reference scorer; here gold always comes
      from the references file;
    * a gold line without an ``evidence`` key (any label), or with ``"evidence": null``
      and a SUPPORTS/REFUTES label, makes the reference raise; here it is an error, and
      under ``lenient`` it is counted (``missing_gold_evidence``) and scored as a claim
      with no evidence sets (recall 1 and never strictly correct, the reference's rule
      for ``"evidence": []``). ``"evidence": null`` on a NOT ENOUGH INFO line is read as
      no evidence, as the reference reads it (NEI evidence is never scored);
    * a SUPPORTS/REFUTES gold line with ``"evidence": []`` (recall 1.0 for any prediction)
      or an empty evidence set (``[[]]``: every prediction with the right label is strictly
      correct) is an error naming the line and the claim; under ``lenient`` it is counted
      (``empty_gold_evidence``) and scored as the reference scores it.

Per-claim values are ``strict_score`` and ``label_accuracy`` (their means are the
headline figures); ``precision``/``recall`` are macro averages over verifiable claims
only and so are not per-claim means.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from averitec_tools.errors import PredictionCountError, UserError
from averitec_tools.jsonio import iter_records
from averitec_tools.labels import FEVER_LABELS
from averitec_tools.metrics.fever_score import CITATION, FEVER_SCORE, FeverScore
from averitec_tools.metrics.keys import claim_key
from averitec_tools.metrics.label_metrics import LABEL_ACCURACY
from averitec_tools.metrics.signature import render_signature
from averitec_tools.records.fever import FeverClaim, FeverPrediction
from averitec_tools.scoring.lenient import Lenience
from averitec_tools.scoring.profiles.base import (
    ClaimScore,
    PathLike,
    ProfileOption,
    ProfileResult,
    ScoreCall,
    ScoringProfile,
)


def _signature(max_evidence: int | None, *, lenient: bool = False) -> str:
    return render_signature([
        ("profile", "fever"), ("metric", "fever_score"), ("cap", "none" if max_evidence is None else max_evidence),
        ("labels", "case-insensitive"), ("precision_recall", "macro-over-verifiable"), ("f1_zero_division", 0),
        ("align", "position+id"), *([("mode", "lenient")] if lenient else []),
    ])


def _missing_evidence(obj: dict[str, Any], label: str) -> str | None:
    """How a gold line lacks the evidence the reference needs (``None``: it does not)."""
    if "evidence" not in obj:
        return "no 'evidence' key"  # the reference asserts the key, whatever the label
    if obj["evidence"] is None and label.upper() != "NOT ENOUGH INFO":
        return "\"evidence\": null"  # the reference iterates it for SUPPORTS/REFUTES
    return None


def _empty_evidence(claim: FeverClaim) -> str | None:
    """How a SUPPORTS/REFUTES gold claim's evidence is empty (``None``: it is not, or NEI)."""
    if claim.label is None or claim.label.upper() == "NOT ENOUGH INFO":
        return None
    if not claim.evidence:
        return "\"evidence\": [] (no evidence set: any prediction gets recall 1.0)"
    empty = [i for i, group in enumerate(claim.evidence) if not group]
    if empty:
        return (f"an empty evidence set (set {empty[0]} of {len(claim.evidence)}: any prediction with the right "
                "label is strictly correct)")
    return None


def _read_gold(path: PathLike, lenience: Lenience) -> list[FeverClaim]:
    golds = []
    for loc in iter_records(path):
        obj = loc.value
        if isinstance(obj, dict) and "predicted_label" in obj and "label" not in obj:
            raise UserError(
                f"{loc.where}: this looks like a FEVER predictions file, expected the gold file "
                "({id, label, claim, evidence}) as REFERENCES"
            )
        gold = FeverClaim.from_dict(obj, where=loc.where)
        if gold.label is None:
            raise UserError(f"{loc.where}: claim {gold.id!r} has no gold label")
        missing = _missing_evidence(obj, gold.label)
        if missing is not None and not lenience.tolerate("missing_gold_evidence"):
            why = "" if gold.label.upper() == "NOT ENOUGH INFO" else " (read as no evidence, any prediction would get recall 1.0)"
            raise UserError(
                f"{loc.where}: claim {gold.id!r} ({gold.label}) has {missing}{why}",
                hint="the FEVER scorer raises on such a line; give its evidence sets, or pass --lenient to score it "
                "as a claim without evidence sets",
            )
        empty = None if missing is not None else _empty_evidence(gold)
        if empty is not None and not lenience.tolerate("empty_gold_evidence"):
            raise UserError(f"{loc.where}: claim {gold.id!r} ({gold.label}) has {empty}",
                            hint="give the claim its evidence sets, or pass --lenient to score it as the FEVER "
                            "scorer does")
        golds.append(gold)
    return golds


def _count_jsonl_items(path: PathLike) -> int | None:
    """Non-blank lines of a JSONL file without parsing them (``None`` for a JSON array)."""
    from averitec_tools.jsonio import sniff_format

    if sniff_format(path) != "jsonl":
        return None
    with open(path, "rb") as fh:
        return sum(1 for line in fh if line.strip())


def _read_predictions(path: PathLike) -> list[tuple[str, FeverPrediction]]:
    out = []
    for loc in iter_records(path):
        obj = loc.value
        if (
            isinstance(obj, dict)
            and "predicted_label" not in obj
            and "claim" in obj
            and "verifiable" in obj
        ):
            raise UserError(
                f"{loc.where}: this looks like a FEVER gold file, expected predictions "
                "({id, predicted_label, predicted_evidence}) as PREDICTIONS"
            )
        out.append((loc.where, FeverPrediction.from_dict(obj, where=loc.where)))
    return out


class Profile(ScoringProfile):
    """FEVER score (strict score, label accuracy, evidence precision/recall/F1).

    Options:
        max_evidence: predicted sentences that count (default 5; ``None`` = all).
        lenient: tolerate (and count) gold lines without evidence, or with empty evidence
            on a SUPPORTS/REFUTES claim (see the module notes).

    Example:
        >>> import json, pathlib, tempfile
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "gold.jsonl").write_text(json.dumps({"id": 1, "verifiable": "VERIFIABLE",
        ...     "label": "REFUTES", "claim": "c", "evidence": [[[0, 0, "P", 3]]]}) + "\\n")
        >>> _ = (d / "pred.jsonl").write_text(json.dumps({"id": 1,
        ...     "predicted_label": "REFUTES", "predicted_evidence": [["P", 3]]}) + "\\n")
        >>> Profile().score(predictions=d / "pred.jsonl", references=d / "gold.jsonl").summary["strict_score"]
        1.0
    """

    name: ClassVar[str] = "fever"
    per_claim_metrics: ClassVar[tuple[str, ...]] = (claim_key(FEVER_SCORE), claim_key(LABEL_ACCURACY))
    description: ClassVar[str] = "FEVER score (fever-scorer): strict score, label accuracy, evidence P/R/F1"
    citation: ClassVar[str] = CITATION
    OPTIONS: ClassVar[Mapping[str, ProfileOption]] = {
        "max_evidence": ProfileOption((int, type(None)), 5, "predicted evidence sentences that count (None: all)",
                                      minimum=1),
        "lenient": ProfileOption(bool, False, "tolerate and count gold lines without evidence"),
    }

    def _score(self, call: ScoreCall) -> ProfileResult:
        predictions, references, options = call.predictions, call.references, call.options
        max_evidence = options.get("max_evidence", self.OPTIONS["max_evidence"].default)
        metric = FeverScore(max_evidence=max_evidence)
        lenience = Lenience(enabled=bool(options.get("lenient", False)))
        golds = _read_gold(references, lenience)
        preds = _aligned_predictions(predictions, references, golds)
        result = metric.compute(golds=golds, predictions=[p for _, p in preds])
        strict_key, acc_key = self.per_claim_metrics
        per_claim = tuple(
            ClaimScore(
                claim_id=gold.id,
                gold_label=gold.label,
                pred_label=pred.predicted_label,
                values={
                    strict_key: 1.0 if outcome.strict_correct and outcome.label_correct else 0.0,
                    acc_key: 1.0 if outcome.label_correct else 0.0,
                },
                confidence=pred.confidence,
                probabilities=pred.probabilities,
            )
            for gold, (_, pred), outcome in zip(golds, preds, result.per_claim, strict=True)
        )
        signature = _signature(max_evidence, lenient=lenience.enabled)
        summary: dict[str, Any] = {"profile": self.name, "signature": signature, "n_claims": result.n_claims,
                                   **result.as_dict()}
        if lenience.enabled:
            summary["tolerated"] = lenience.summary()
        return ProfileResult(profile=self.name, signature=signature, n_claims=result.n_claims, summary=summary,
                             per_claim=per_claim, labels=FEVER_LABELS, warnings=tuple(lenience.warnings()))


def _aligned_predictions(predictions: PathLike, references: PathLike,
                         golds: Sequence[FeverClaim]) -> list[tuple[str, FeverPrediction]]:
    """``(where, prediction)`` per gold line: one per line, in order, ids matching where given."""
    def count_error(n: int) -> PredictionCountError:
        return PredictionCountError(
            f"{predictions}: {n} predictions, not one per reference claim",
            n_predictions=n, n_references=len(golds), detail=f"{references} has {len(golds)} claims",
            hint="the FEVER scorer aligns lines by position; predict every claim once, in order",
        )

    n_lines = _count_jsonl_items(predictions)
    if n_lines is not None and n_lines != len(golds):  # cheap: before parsing every line
        raise count_error(n_lines)
    preds = _read_predictions(predictions)
    if len(preds) != len(golds):
        raise count_error(len(preds))
    for gold, (where, pred) in zip(golds, preds, strict=True):
        if pred.id is not None and pred.id != gold.id:
            raise UserError(
                f"{where}: prediction id {pred.id!r} is not the claim id on the same line of the references",
                detail=f"{references} has claim id {gold.id!r} there",
                hint="keep the predictions in the order of the gold file",
            )
    return preds


__all__ = ["Profile"]
