"""A long-lived scorer for training loops, sweeps and boards: one profile, one gold file, warm.

:class:`BatchScorer` prepares the gold side once (tokenised, stemmed, interned, pinned) and
keeps its METEOR engine warm between calls, so a call pays only for the new strings:

* :meth:`BatchScorer.score` scores a whole submission (a path, or the records in memory)
  exactly as ``averitec score`` does -- same ``summary``, ``signature`` and per-claim scores;
* :meth:`BatchScorer.score_pairs` scores many (predicted evidence, gold evidence) pairs with
  Hungarian METEOR, as the profile's evidence score does (the 2024 rule: the first 10
  predicted strings, normalised by the number of gold strings);
* :meth:`BatchScorer.gold_evidence` gives a claim's gold evidence strings, the reference of
  :mod:`averitec_tools.scoring.rewards` (a TRL reward function built on this).

Scores are identical to cold ``averitec score`` runs (the warm engine's caches hold only
what it would compute; ``tests/test_batch_scorer.py``). Memory stays bounded: after each
call, strings other than the gold side are forgotten once ``max_prepared`` are held.

Example:
    >>> import json, pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> gold = folder / "gold.json"
    >>> _ = gold.write_text(json.dumps([{"claim": "c", "label": "Refuted",
    ...     "questions": [{"question": "Who?", "answers": [{"answer": "Bob", "answer_type": "Extractive"}]}]}]))
    >>> scorer = BatchScorer(profile="averitec2024", references=gold, allow_download=False)
    >>> scorer.gold_evidence(0)
    ['Who? Bob']
    >>> round(scorer.score_pairs([(["Who? Bob"], ["Who? Bob"])])[0], 4)
    0.9815
    >>> result = scorer.score([{"claim_id": 0, "claim": "c", "pred_label": "Refuted",
    ...                         "evidence": [{"question": "Who?", "answer": "Bob", "url": ""}]}])
    >>> result.summary["questions_answers"], result.signature.split("|")[0]
    (0.9814814814814815, 'profile:averitec2024')
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.metrics._gc import paused_gc
from averitec_tools.metrics.hungarian_meteor import HungarianTask, Normalise, score_tasks
from averitec_tools.metrics.meteor import MeteorEngine
from averitec_tools.scoring.data_source import data_fields, with_data_fields
from averitec_tools.scoring.evidence_strings import MAX_EVIDENCE, qa_strings
from averitec_tools.scoring.profiles import get_profile
from averitec_tools.scoring.profiles.base import PathLike, ProfileResult
from averitec_tools.scoring.warm import WarmScoring


def _averitec_gold(path: Path, profile: str, cache: dict[Any, Any]) -> list[list[str]]:
    from averitec_tools.scoring.submission import load_gold_claims

    return [qa_strings(claim.questions) for claim in load_gold_claims(path, profile=profile, cache=cache)]


def _evalai_gold(path: Path, profile: str, cache: dict[Any, Any]) -> list[list[str]]:
    from averitec_tools.scoring.submission import load_evalai

    return [list(item.evidence) for item in load_evalai(path, role="references")]


@dataclass(frozen=True)
class PairRule:
    """How a METEOR profile scores (predicted, gold) evidence: what the matched sum is divided by,
    how many predicted strings count (``None``: all), and each gold claim's evidence strings."""

    normalise: Normalise
    cap: int | None
    gold: Callable[[Path, str, dict[Any, Any]], list[list[str]]]


PAIR_RULES: Mapping[str, PairRule] = {
    "averitec2024": PairRule("reference", MAX_EVIDENCE, _averitec_gold),
    "averitec2023": PairRule("reference", MAX_EVIDENCE, _averitec_gold),
    "evalai": PairRule("candidate", None, _evalai_gold),
}

#: What :meth:`BatchScorer.score` names a submission given as records in error messages.
RECORDS = "<records>"


class BatchScorer:
    """A warm scorer for ``profile`` against the gold file ``references`` (see the module docstring).

    Args:
        profile: A scoring profile name (``averitec score --profile``).
        references: The gold file, as for ``averitec score``.
        allow_download: Whether missing NLTK data (``punkt_tab``) may be downloaded.
        max_prepared: Strings other than the gold side kept prepared between calls.
        **options: The profile's options (``lenient``, ``metric``, ...), applied to every :meth:`score`.

    Raises:
        UserError: an unknown profile or option, or a gold file the profile cannot read.
    """

    def __init__(self, profile: str = "averitec2024", references: PathLike = "", *, allow_download: bool = True,
                 max_prepared: int = 200_000, **options: Any) -> None:
        self.profile = get_profile(profile)
        self.references = Path(references)
        if not self.references.is_file():
            raise UserError(f"{references}: reference file not found")
        self.options = {**({"allow_download": allow_download} if "allow_download" in self.profile.OPTIONS else {}),
                        **options}
        self.engine = MeteorEngine(allow_download=allow_download)
        self.engine.max_prepared = max_prepared
        self.warm = WarmScoring(profile=self.profile.name, engine=self.engine, gold_cache={})
        gold = self.profile.gold_strings(self.references)
        with paused_gc():
            self.engine.prepare_many(gold)
        self.engine.pin(gold)
        self._gold_evidence: list[list[str]] | None = None
        self._data = data_fields(self.references)  # data:REPO@COMMIT as averitec score adds it, found once

    def score(self, predictions: PathLike | Sequence[Mapping[str, Any]]) -> ProfileResult:
        """Score a submission -- a file path, or its records (the profile's submission format)
        -- exactly as ``averitec score`` does."""
        try:
            with paused_gc():  # scoring makes few reference cycles; a collection would walk the warm gold side
                if isinstance(predictions, (str, os.PathLike)):
                    result = self.profile.score(predictions=predictions, references=self.references, jobs=1,
                                                warm=self.warm, **self.options)
                else:
                    result = self._score_records(predictions)
            return with_data_fields(result, self._data)
        finally:
            self.engine.trim()

    def _score_records(self, records: Sequence[Mapping[str, Any]]) -> ProfileResult:
        if isinstance(records, (str, bytes)) or not isinstance(records, Sequence):
            raise UserError(f"{RECORDS}: predictions must be a path or a list of records, not {type(records).__name__}")
        with tempfile.TemporaryDirectory(prefix="averitec-batch-") as folder:
            path = Path(folder) / "predictions.json"
            try:
                path.write_text(json.dumps(list(records), ensure_ascii=False), encoding="utf-8")
            except (TypeError, ValueError) as exc:
                raise UserError(f"{RECORDS}: the records are not JSON-serialisable: {exc}") from None
            try:
                return self.profile.score(predictions=path, references=self.references, jobs=1, warm=self.warm,
                                          **self.options)
            except UserError as exc:  # name the records, not the temporary file
                exc.message = exc.message.replace(str(path), RECORDS)
                exc.args = (str(exc).replace(str(path), RECORDS),)
                raise

    def score_pairs(self, pairs: Iterable[tuple[Sequence[str], Sequence[str]]]) -> list[float]:
        """Hungarian METEOR of each (predicted evidence strings, gold evidence strings) pair, by
        the profile's rule (:data:`PAIR_RULES`); a pair without gold (or, normalised by the
        prediction, without predictions) scores 0."""
        rule = self._rule()
        normalise, cap = rule.normalise, rule.cap
        tasks, scored = [], []
        for predicted, gold in pairs:
            task = HungarianTask(tuple(predicted)[:cap], tuple(gold), normalise)
            scored.append(bool(task.references if normalise == "reference" else task.candidates))
            if scored[-1]:
                tasks.append(task)
        try:
            with paused_gc():
                values = iter(score_tasks(tasks, engine=self.engine, jobs=1))
                return [next(values) if ok else 0.0 for ok in scored]
        finally:
            self.engine.trim()

    def _rule(self) -> PairRule:
        rule = PAIR_RULES.get(self.profile.name)
        if rule is None:
            raise UserError(f"profile {self.profile.name!r} has no Hungarian METEOR evidence score",
                            hint=f"use one of: {', '.join(PAIR_RULES)}")
        return rule

    def gold_evidence(self, claim_id: int) -> list[str]:
        """The gold evidence strings of reference claim ``claim_id`` (by position), as the
        profile compares them ("question answer" strings)."""
        if self._gold_evidence is None:
            self._gold_evidence = self._rule().gold(self.references, self.profile.name, self.warm.gold_cache)
        if not 0 <= claim_id < len(self._gold_evidence):
            raise UserError(f"claim_id {claim_id} has no reference claim",
                            detail=f"{self.references} has {len(self._gold_evidence)} claims")
        return list(self._gold_evidence[claim_id])


__all__ = ["PAIR_RULES", "RECORDS", "BatchScorer", "PairRule"]
