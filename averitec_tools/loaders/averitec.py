"""AVeriTeC (Schlichtkrull et al., 2023): ``averitec/train``, ``averitec/dev``, ``averitec/test``
and the FEVER-8 (2025) test claims ``averitec/test_2025``.

Upstream files: ``train.json``, ``dev.json`` (full gold), ``test.json`` (the 2024 shared
task's claims and metadata only) and ``test_2025.json`` (FEVER-8's). Rows carry every
field of ``dev.json`` plus ``claim_id`` (the position in the file, which is what the
scorers align on) and ``claim_date_parsed`` (a ``date32``; ``null`` when the raw
``claim_date`` string does not parse).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from averitec_tools.loaders.base import (
    DatasetFamily,
    label_stats,
    list_of,
    ratio,
    register_family,
    reject_predictions,
    share,
)
from averitec_tools.records.averitec import AVeriTeCClaim

if TYPE_CHECKING:
    import datasets

CITATION = """@inproceedings{schlichtkrull2023averitec,
  title={{AVeriTeC}: A Dataset for Real-world Claim Verification with Evidence from the Web},
  author={Schlichtkrull, Michael and Guo, Zhijiang and Vlachos, Andreas},
  booktitle={Advances in Neural Information Processing Systems (Datasets and Benchmarks Track)},
  year={2023}
}"""

#: The AVeriTeC paper's whole-dataset statistics (§5), for comparison.
PAPER_STATS: Mapping[str, float] = {
    "questions_per_claim": 2.60,
    "answers_per_question": 1.07,
    "extractive": 0.53,
    "abstractive": 0.26,
    "boolean": 0.17,
    "unanswerable_questions": 0.04,
}

_STR_FIELDS = (
    "claim",
    "label",
    "justification",
    "claim_date",
    "speaker",
    "original_claim_url",
    "cached_original_claim_url",
    "fact_checking_article",
    "reporting_source",
    "location_ISO_code",
)
_ANSWER_FIELDS = (
    "answer",
    "answer_type",
    "source_url",
    "cached_source_url",
    "source_medium",
    "boolean_explanation",
)


class AVeriTeCFamily(DatasetFamily):
    """The AVeriTeC dataset family (typed records: :class:`AVeriTeCClaim`)."""

    name: ClassVar[str] = "averitec"
    pretty_name: ClassVar[str] = "AVeriTeC"
    license: ClassVar[str] = "cc-by-nc-4.0"
    citation: ClassVar[str] = CITATION
    homepage: ClassVar[str] = "https://fever.ai/dataset/averitec.html"
    description: ClassVar[str] = (
        "Real-world claims checked by fact-checkers, with question-answer evidence from the "
        "web, veracity labels (Supported, Refuted, Not Enough Evidence, Conflicting "
        "Evidence/Cherrypicking) and justifications. Splits are temporally separated."
    )
    split_files: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "train": ("train.json",),
        "dev": ("dev.json",),
        "test": ("test.json",),
        "test_2025": ("test_2025.json",),
    }
    #: Raw train/dev JSON pushed to the hub with the upstream field names.
    hub_id: ClassVar[str | None] = "pminervini/averitec"

    def parse(self, obj: Any, *, where: str, index: int) -> AVeriTeCClaim:
        reject_predictions(obj, where=where, dataset="AVeriTeC", gold_fields=("label", "questions", "justification"))
        return AVeriTeCClaim.from_dict(obj, where=where, claim_id=index)

    def features(self) -> datasets.Features:
        import datasets

        string = datasets.Value("string")
        answer = {name: string for name in _ANSWER_FIELDS}
        return datasets.Features(
            {
                "claim_id": datasets.Value("int64"),
                **{name: string for name in _STR_FIELDS},
                "claim_date_parsed": datasets.Value("date32"),
                "required_reannotation": datasets.Value("bool"),
                "claim_types": list_of(string),
                "fact_checking_strategies": list_of(string),
                "questions": list_of({"question": string, "answers": list_of(answer)}),
            }
        )

    def to_row(self, record: AVeriTeCClaim) -> dict[str, Any]:
        row: dict[str, Any] = {"claim_id": record.claim_id}
        for name in _STR_FIELDS:
            row[name] = getattr(record, name)
        row["claim_date_parsed"] = record.date
        row["required_reannotation"] = record.required_reannotation
        row["claim_types"] = list(record.claim_types)
        row["fact_checking_strategies"] = list(record.fact_checking_strategies)
        row["questions"] = [
            {
                "question": q.question,
                "answers": [{name: getattr(a, name) for name in _ANSWER_FIELDS} for a in q.answers],
            }
            for q in record.questions
        ]
        return row

    def from_row(self, row: Mapping[str, Any]) -> AVeriTeCClaim:
        obj = {k: v for k, v in row.items() if k not in ("claim_id", "claim_date_parsed")}
        return AVeriTeCClaim.from_dict(obj, where=f"row {row.get('claim_id')}", claim_id=row.get("claim_id"))

    def stats(self, records: Iterable[AVeriTeCClaim]) -> dict[str, Any]:
        """The AVeriTeC paper's §5 statistics.

        ``answer_types`` are shares of answers; ``unanswerable_questions`` is the share of
        questions with at least one answer typed Unanswerable (the paper's "4% of
        questions are unanswerable"); claim types and strategies are multi-label shares
        of claims.
        """
        n_claims = n_questions = n_answers = n_unanswerable_q = 0
        labels: Counter[str] = Counter()
        answer_types: Counter[str] = Counter()
        claim_types: Counter[str] = Counter()
        strategies: Counter[str] = Counter()
        media: Counter[str] = Counter()
        dates = []
        for r in records:
            n_claims += 1
            labels[r.label or "(none)"] += 1
            claim_types.update(r.claim_types)
            strategies.update(r.fact_checking_strategies)
            if r.date is not None:
                dates.append(r.date)
            for q in r.questions:
                n_questions += 1
                n_answers += len(q.answers)
                if any(a.answer_type == "Unanswerable" for a in q.answers):
                    n_unanswerable_q += 1
                for a in q.answers:
                    answer_types[a.answer_type or "(none)"] += 1
                    media[a.source_medium or "(none)"] += 1
        return {
            "n_claims": n_claims,
            "n_questions": n_questions,
            "n_answers": n_answers,
            "questions_per_claim": ratio(n_questions, n_claims),
            "answers_per_question": ratio(n_answers, n_questions),
            "answer_types": share(answer_types, n_answers),
            "unanswerable_questions": ratio(n_unanswerable_q, n_questions),
            **label_stats(labels, n_claims),
            "claim_types": share(claim_types, n_claims),
            "fact_checking_strategies": share(strategies, n_claims),
            "source_media": share(media, n_answers),
            "claim_date_range": [min(dates).isoformat(), max(dates).isoformat()] if dates else None,
            "paper_whole_dataset": dict(PAPER_STATS),
        }


AVERITEC = register_family(AVeriTeCFamily())

__all__ = ["AVERITEC", "CITATION"]
