"""AVerImaTeC (FEVER-9, image-text claims): ``averimatec/train``, ``averimatec/val``, ``averimatec/test``.

Upstream layout (the hub dataset ``Rui4416/AVerImaTeC``, as ``averitec data download
averimatec`` installs it)::

    <root>/averimatec/train.json, val.json      # JSON arrays of claims (records.averimatec)
    <root>/averimatec/test_data/test.json       # claims only: no label, justification, questions
    <root>/averimatec/images/<name>             # every image a claim names (claim, question, answer)

Rows carry every field of the record plus ``claim_id`` (the position in the file, what a
submission's ``id`` is) and ``date_parsed``; the claim's images, each question's input
images and each image answer are ``datasets.Image()`` values (file paths when loaded, bytes
once exported), found by base name in ``images/`` beside the split file (``test_data/``'s
own folder and ``images/`` too for the test split). A named image that is not there is an
error naming the claim and the file. Published sizes: 1,297 claims; val 152, test 352.

Example:
    >>> AVERIMATEC.split_files["test"]
    ('test_data/test.json', 'test.json')
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from averitec_tools.errors import UserError
from averitec_tools.loaders.base import (
    DatasetFamily,
    label_stats,
    list_of,
    ratio,
    register_family,
    share,
)
from averitec_tools.records.averimatec import (
    AVERIMATEC_LABELS,
    METADATA_LISTS,
    METADATA_STRINGS,
    AVerImaTeCAnswer,
    AVerImaTeCClaim,
    AVerImaTeCMetadata,
    AVerImaTeCQuestion,
    canonical_label,
)

if TYPE_CHECKING:
    import datasets

CITATION = """@inproceedings{cao2025averimatec,
  title={{AVerImaTeC}: A Dataset for Automatic Verification of Image-Text Claims with Evidence from the Web},
  author={Cao, Rui and Ding, Zifeng and Guo, Zhijiang and Schlichtkrull, Michael and Vlachos, Andreas},
  booktitle={Advances in Neural Information Processing Systems (Datasets and Benchmarks Track)},
  year={2025},
  note={arXiv:2505.17978}
}"""

#: Claims per split as published (issue 40 and the task page: 1,297 claims; val 152, test 352);
#: train is the remainder, 793 (derived, not a published figure).
PUBLISHED_SIZES: Mapping[str, int] = {"train": 793, "val": 152, "test": 352, "total": 1297}
_CLAIM_STRINGS = ("date", "location", "article", "label", "justification")
_ANSWER_STRINGS = ("answer_type", "answer_text", "boolean_explanation", "source_url", "source_medium")


def image_folders(source: Path) -> list[Path]:
    """Where the images of the split file ``source`` are looked for, in order."""
    return [source.parent / "images", source.parent.parent / "images", source.parent]


class _Images:
    """Image values for one split file: ``{"path": <file>, "bytes": None}`` found by base name."""

    def __init__(self, source: Path | None) -> None:
        self.folders = image_folders(source) if source is not None else []
        self.found: dict[str, str] = {}

    def value(self, name: str, *, where: str) -> dict[str, Any]:
        base = name.replace("\\", "/").rsplit("/", 1)[-1]  # the organisers keep only the base name too
        if not self.folders:
            return {"path": base, "bytes": None}
        if base not in self.found:
            path = next((f / base for f in self.folders if (f / base).is_file()), None)
            if path is None:
                raise UserError(f"{where}: image {base!r} not found in {self.folders[0]}",
                                hint="install the images: averitec data download averimatec --split images")
            self.found[base] = str(path)
        return {"path": self.found[base], "bytes": None}

    def values(self, names: Iterable[str], *, where: str) -> list[dict[str, Any]]:
        return [self.value(n, where=where) for n in names]


def _name(value: Any) -> str:
    """An image file name back from a row's image value (a path or ``{"path", "bytes"}``)."""
    path = value.get("path") if isinstance(value, Mapping) else getattr(value, "filename", value)
    if not path:
        raise UserError("an image value without a file name cannot be turned back into a record",
                        hint="load with the image columns undecoded: records_from_dataset does this")
    return os.path.basename(str(path))


class AVerImaTeCFamily(DatasetFamily):
    """The AVerImaTeC dataset family (typed records: :class:`AVerImaTeCClaim`)."""

    name: ClassVar[str] = "averimatec"
    pretty_name: ClassVar[str] = "AVerImaTeC"
    license: ClassVar[str] = "unknown"
    citation: ClassVar[str] = CITATION
    homepage: ClassVar[str] = "https://huggingface.co/datasets/Rui4416/AVerImaTeC"
    description: ClassVar[str] = (
        "Real-world image-text claims checked by fact-checkers, with question-answer evidence (text and "
        "image answers) from the web, veracity labels (Supported, Refuted, Not Enough Evidence, Conflicting "
        "Evidence/Cherrypicking) and justifications: the FEVER-9 shared task."
    )
    split_files: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "train": ("train.json",),
        "val": ("val.json",),
        "test": ("test_data/test.json", "test.json"),
    }
    published_sizes: ClassVar[Mapping[str, int]] = PUBLISHED_SIZES

    def undecoded_features(self) -> datasets.Features:
        return self.features(decode=False)

    def parse(self, obj: Any, *, where: str, index: int) -> AVerImaTeCClaim:
        record = AVerImaTeCClaim.from_dict(obj, where=where, claim_id=index)
        if record.label is not None and canonical_label(record.label) is None:  # spelling variants are the same label
            raise UserError(f"{where}: unknown label {record.label!r}", hint=f"valid labels: {', '.join(AVERIMATEC_LABELS)}")
        return record

    def features(self, *, decode: bool = True) -> datasets.Features:
        """The rows' features; ``decode=False`` keeps images as ``{"path", "bytes"}``."""
        import datasets

        string, image = datasets.Value("string"), datasets.Image(decode=decode)
        answer = {name: string for name in _ANSWER_STRINGS}
        answer["image_answers"] = list_of(image)
        question = {"question": string, "input_images": list_of(image), "question_type": list_of(string),
                    "answer_method": string, "answers": list_of(answer)}
        metadata = {**{k: string for k in METADATA_STRINGS}, **{k: list_of(string) for k in METADATA_LISTS}}
        return datasets.Features({
            "claim_id": datasets.Value("int64"), "claim_text": string, "claim_images": list_of(image),
            **{k: string for k in _CLAIM_STRINGS}, "date_parsed": datasets.Value("date32"),
            "questions": list_of(question), "metadata": metadata,
        })

    def _row(self, record: AVerImaTeCClaim, images: _Images) -> dict[str, Any]:
        where = f"claim {record.claim_id}"
        return {
            "claim_id": record.claim_id, "claim_text": record.claim_text,
            "claim_images": images.values(record.claim_images, where=where),
            **{k: getattr(record, k) for k in _CLAIM_STRINGS}, "date_parsed": record.parsed_date,
            "questions": [{
                "question": q.question, "input_images": images.values(q.input_images, where=where),
                "question_type": list(q.question_type), "answer_method": q.answer_method,
                "answers": [{**{k: getattr(a, k) for k in _ANSWER_STRINGS},
                             "image_answers": images.values(a.image_answers, where=where)} for a in q.answers],
            } for q in record.questions],
            "metadata": None if record.metadata is None else record.metadata.to_dict(),
        }

    def to_row(self, record: AVerImaTeCClaim) -> dict[str, Any]:
        """A row whose images are bare file names (no folder known: use :meth:`rows`)."""
        return self._row(record, _Images(None))

    def rows(self, records: Iterable[Any], *, source: Path | None) -> Iterator[dict[str, Any]]:
        images = _Images(source)
        for record in records:
            yield self._row(record, images)

    def from_row(self, row: Mapping[str, Any]) -> AVerImaTeCClaim:
        meta = row.get("metadata")
        return AVerImaTeCClaim(
            claim_text=row["claim_text"], claim_images=tuple(_name(v) for v in row.get("claim_images") or ()),
            **{k: row.get(k) for k in _CLAIM_STRINGS},
            questions=tuple(AVerImaTeCQuestion(
                question=q["question"], input_images=tuple(_name(v) for v in q.get("input_images") or ()),
                question_type=tuple(q.get("question_type") or ()), answer_method=q.get("answer_method"),
                answers=tuple(AVerImaTeCAnswer(
                    **{k: a.get(k) for k in _ANSWER_STRINGS},
                    image_answers=tuple(_name(v) for v in a.get("image_answers") or ())) for a in q["answers"]),
            ) for q in row.get("questions") or ()),
            metadata=None if meta is None else AVerImaTeCMetadata(**{
                **{k: meta.get(k) for k in METADATA_STRINGS}, **{k: tuple(meta.get(k) or ()) for k in METADATA_LISTS}}),
            claim_id=row.get("claim_id"),
        )

    def stats(self, records: Iterable[AVerImaTeCClaim]) -> dict[str, Any]:
        """Claims, labels, images per claim, questions and answer types, beside the published sizes."""
        n = n_questions = n_answers = n_claim_images = n_qa_images = 0
        labels: Counter[str] = Counter()
        answer_types: Counter[str] = Counter()
        question_types: Counter[str] = Counter()
        for r in records:
            n += 1
            labels[r.label or "(none)"] += 1
            n_claim_images += len(r.claim_images)
            for q in r.questions:
                n_questions += 1
                question_types.update(q.question_type)
                n_qa_images += len(q.images())
                n_answers += len(q.answers)
                answer_types.update(a.answer_type for a in q.answers)
        return {
            "n_claims": n, **label_stats(labels, n),
            "claim_images_per_claim": ratio(n_claim_images, n),
            "n_questions": n_questions, "questions_per_claim": ratio(n_questions, n),
            "answers_per_question": ratio(n_answers, n_questions), "answer_types": share(answer_types, n_answers),
            "question_types": share(question_types, n_questions),
            "evidence_images_per_question": ratio(n_qa_images, n_questions),
        }


AVERIMATEC = register_family(AVerImaTeCFamily())

__all__ = ["CITATION", "AVerImaTeCFamily"]
