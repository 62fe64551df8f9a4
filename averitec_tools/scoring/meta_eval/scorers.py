"""Evidence scorers named by spec (``hu-meteor``, ``bleu``, ``ev2r(url=...,model=...)`` ...), one registry.

A scorer is a frozen dataclass whose fields are its parameters; ``NAME(PARAM=VALUE,...)``
sets them (typed by the field defaults, unknown names and parameters get close-name
suggestions), and ``str(scorer)`` writes the spec back. ``scorer.score(items=...)`` gives
one score per item, ``None`` where none could be had (a judge failure): such items are
counted and left out of every correlation, never scored 0.

    >>> str(parse_scorer("hu-meteor(normalise=candidate)")), parse_scorer("bleu").llm
    ('hu-meteor(normalise=candidate)', False)
    >>> parse_scorer("blue")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: unknown evidence scorer 'blue' (did you mean: bleu...)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from averitec_tools.errors import ResourceError, UserError
from averitec_tools.scoring.meta_eval.ratings import RatedItem, read_items_file
from averitec_tools.scoring.meta_eval.scorer_base import (
    SCORERS,
    Scorer,
    qa_strings,
    register_scorer,
)


def parse_scorer(text: str) -> Scorer:
    """The scorer a spec ``NAME`` or ``NAME(PARAM=VALUE,...)`` names.

    Raises:
        UserError: An unknown scorer or parameter (with close names), or a bad value.
    """
    from averitec_tools.metrics.base import spec_params, split_spec

    name, args = split_spec(text, kind="scorer spec")
    cls = SCORERS.get(name)
    base = cls()
    fields = {f.name for f in dataclasses.fields(cls) if isinstance(getattr(base, f.name), (bool, int, float, str))}
    values = spec_params(spec=text, args=args, base=base, fields=fields, kind="scorer")
    scorer = dataclasses.replace(base, **values)
    check = getattr(scorer, "check", None)
    if check is not None:
        check()
    return scorer


def _meteor_engine() -> Any:
    from averitec_tools.metrics.meteor import MeteorEngine

    return MeteorEngine(allow_download=False)


@dataclass(frozen=True)
class PerItemScorer(Scorer):
    """A scorer of one item at a time: ``setup()`` once (an engine, a library object), then ``score_item``."""

    def setup(self) -> Any:
        return _meteor_engine()

    def score_item(self, item: RatedItem, ctx: Any) -> float:
        raise NotImplementedError

    def score(self, *, items: Sequence[RatedItem]) -> list[float | None]:
        ctx = self.setup()
        return [self.score_item(it, ctx) for it in items]


def _library(module: str, package: str, scorer: str) -> Any:
    """``import module``, or a ResourceError naming the scorer and the package it needs."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError:
        raise ResourceError(f"the {scorer} scorer needs {package}", hint="pip install 'averitec-tools[meta-eval]'") from None


def _study_blocks(text: str) -> list[str]:
    return ["Question" + x.strip() for x in text.split("Question") if x]


@register_scorer
@dataclass(frozen=True)
class HuMeteorScorer(PerItemScorer):
    """The project's Hungarian METEOR of the Q+A strings (``normalise``: reference = AVeriTeC 2024, candidate = EvalAI)."""

    name: ClassVar[str] = "hu-meteor"
    normalise: str = "reference"

    def check(self) -> None:
        if self.normalise not in ("reference", "candidate"):
            raise UserError(f"hu-meteor: normalise must be reference or candidate, got {self.normalise!r}")

    def score_item(self, item: RatedItem, ctx: Any) -> float:
        from averitec_tools.metrics.hungarian_meteor import HU_METEOR

        cands, refs = qa_strings(item.predicted), qa_strings(item.reference)
        if not (cands and refs):
            return 0.0
        return HU_METEOR(candidates=cands, references=refs, normalise=self.normalise, engine=ctx)  # type: ignore[arg-type]


@register_scorer
@dataclass(frozen=True)
class StudyHuMeteorScorer(PerItemScorer):
    """The study's ``calc_hungarian_meteor``: blocks split at every "Question", sum / characters of the candidate."""

    name: ClassVar[str] = "hu-meteor-study"

    def score_item(self, item: RatedItem, ctx: Any) -> float:
        from averitec_tools.metrics.hungarian_meteor import assignment_utility, pairwise_matrix

        # the study's matrix is reference x candidate; the assignment sum is the same
        m = pairwise_matrix(candidates=_study_blocks(item.predicted), references=_study_blocks(item.reference), engine=ctx)
        return assignment_utility(m, normaliser=len(item.predicted))


@register_scorer
@dataclass(frozen=True)
class MeteorScorer(PerItemScorer):
    """Sentence METEOR of the whole evidence texts (NLTK 3.9.1 ``word_tokenize``, the project's engine)."""

    name: ClassVar[str] = "meteor"

    def score_item(self, item: RatedItem, ctx: Any) -> float:
        return ctx.score(candidate=item.predicted, reference=item.reference)


@register_scorer
@dataclass(frozen=True)
class BleuScorer(PerItemScorer):
    """Sentence BLEU-4 on whitespace tokens, no smoothing (``sacrebleu``; the study's HF ``bleu``)."""

    name: ClassVar[str] = "bleu"

    def setup(self) -> Any:
        return _library("sacrebleu", "sacrebleu", self.name).metrics.BLEU(smooth_method="none", tokenize="none",
                                                                          force=True)

    def score_item(self, item: RatedItem, ctx: Any) -> float:
        return ctx.corpus_score([" ".join(item.predicted.split())], [[" ".join(item.reference.split())]]).score / 100


@register_scorer
@dataclass(frozen=True)
class RougeScorer(PerItemScorer):
    """ROUGE-L F-measure (``rouge-score``, no stemming; the study's HF ``rouge`` ``rougeL``)."""

    name: ClassVar[str] = "rouge"

    def setup(self) -> Any:
        return _library("rouge_score.rouge_scorer", "rouge-score", self.name).RougeScorer(["rougeL"], use_stemmer=False)

    def score_item(self, item: RatedItem, ctx: Any) -> float:
        return ctx.score(item.reference, item.predicted)["rougeL"].fmeasure


@register_scorer
@dataclass(frozen=True)
class FileScorer(Scorer):
    """Stored per-item scores: a JSON-lines file in the study's format, one line per rated item, in order."""

    name: ClassVar[str] = "file"
    path: str = ""

    def check(self) -> None:
        if not self.path:
            raise UserError("scorer file needs path=FILE.jsonl")

    def score(self, *, items: Sequence[RatedItem]) -> list[float | None]:
        rows = read_items_file(Path(self.path))
        if len(rows) != len(items):
            raise UserError(f"{self.path}: {len(rows)} lines, expected one per rated item ({len(items)})")
        out: list[float | None] = []
        for n, (row, it) in enumerate(zip(rows, items, strict=True), start=1):
            if row["id"] != it.claim_id:
                raise UserError(f"{self.path}: line {n}: claim id {row['id']}, expected {it.claim_id}")
            s = row["score"]
            out.append(None if s is None or s != s else float(s))  # blank or NaN: left out, not 0
        return out


def scorer_names() -> list[str]:
    """Every registered scorer name (importing the ones defined elsewhere)."""
    from averitec_tools.scoring.meta_eval import (  # noqa: F401  (registers)
        ev2r_scorer,
        free_scorer,
        nli_verdict,
        verdict_scorer,
    )

    return SCORERS.names()


__all__ = ["parse_scorer", "scorer_names"]
