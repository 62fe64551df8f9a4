"""VitaminC (Schuster et al., 2021): ``vitaminc/train``, ``vitaminc/dev``, ``vitaminc/test``,
and the R2VC view ``vitaminc/r2vc``.

Upstream JSONL files ``train.jsonl``, ``dev.jsonl``, ``test.jsonl`` with ``claim``,
``evidence`` (one sentence) and ``label``. The hub copy ``tals/vitaminc`` (a dataset
repository of data files, no loading script, so every ``datasets`` version reads it) names
the dev split ``validation``. Rows keep every upstream field, ``wiki_revision_id`` and
``FEVER_id`` included.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from averitec_tools.labels import map_label
from averitec_tools.loaders.base import (
    DatasetFamily,
    label_stats,
    register_family,
    reject_predictions,
    share,
)
from averitec_tools.loaders.r2vc import VIEW
from averitec_tools.records.standardized import StandardizedExample
from averitec_tools.records.vitaminc import VitaminCClaim

if TYPE_CHECKING:
    import datasets

CITATION = """@inproceedings{schuster2021vitaminc,
  title={Get Your Vitamin {C}! Robust Fact Verification with Contrastive Evidence},
  author={Schuster, Tal and Fisch, Adam and Barzilay, Regina},
  booktitle={Proceedings of NAACL-HLT},
  pages={624--643},
  year={2021}
}"""

_FIELDS = ("unique_id", "case_id", "claim", "evidence", "label", "page", "revision_type", "wiki_revision_id",
           "FEVER_id")


class VitaminCFamily(DatasetFamily):
    """The VitaminC dataset family (typed records: :class:`VitaminCClaim`)."""

    name: ClassVar[str] = "vitaminc"
    pretty_name: ClassVar[str] = "VitaminC"
    license: ClassVar[str] = "cc-by-sa-3.0"
    citation: ClassVar[str] = CITATION
    homepage: ClassVar[str] = "https://github.com/TalSchuster/VitaminC"
    description: ClassVar[str] = (
        "Contrastive claim-evidence pairs mined from Wikipedia revisions, labelled "
        "SUPPORTS / REFUTES / NOT ENOUGH INFO."
    )
    split_files: ClassVar[Mapping[str, tuple[str, ...]]] = {
        "train": ("train.jsonl",),
        "dev": ("dev.jsonl", "validation.jsonl"),
        "test": ("test.jsonl",),
    }
    hub_id: ClassVar[str | None] = "tals/vitaminc"
    hub_splits: ClassVar[Mapping[str, str]] = {"dev": "validation"}

    def parse(self, obj: Any, *, where: str, index: int) -> VitaminCClaim:
        reject_predictions(obj, where=where, dataset="VitaminC", gold_fields=("label",))
        return VitaminCClaim.from_dict(obj, where=where)

    def features(self) -> datasets.Features:
        import datasets

        return datasets.Features({name: datasets.Value("string") for name in _FIELDS})

    def to_row(self, record: VitaminCClaim) -> dict[str, Any]:
        return record.to_dict()

    def from_row(self, row: Mapping[str, Any]) -> VitaminCClaim:
        return VitaminCClaim(
            claim=row["claim"],
            evidence=row["evidence"],
            label=row.get("label"),
            unique_id=row.get("unique_id"),
            case_id=row.get("case_id"),
            page=row.get("page"),
            revision_type=row.get("revision_type"),
            wiki_revision_id=row.get("wiki_revision_id"),
            fever_id=row.get("FEVER_id"),
        )

    def standardize(self, record: VitaminCClaim, *, source: str) -> StandardizedExample | None:
        if not record.claim.strip() or record.label is None:
            return None
        return StandardizedExample(
            claim=record.claim,
            evidence_text=record.evidence,
            label=map_label(record.label, source="vitaminc", target="ternary"),
            source=source,
            source_id=record.unique_id or "",
        )

    def stats(self, records: Iterable[VitaminCClaim]) -> dict[str, Any]:
        n = 0
        labels: Counter[str] = Counter()
        revision: Counter[str] = Counter()
        cases: set[str] = set()
        for r in records:
            n += 1
            labels[r.label or "(none)"] += 1
            revision[r.revision_type or "(none)"] += 1
            if r.case_id is not None:
                cases.add(r.case_id)
        return {
            "n_claims": n,
            **label_stats(labels, n),
            "revision_types": share(revision, n),
            "distinct_cases": len(cases),
        }


VITAMINC = register_family(VitaminCFamily(), views=(VIEW,))

__all__ = ["CITATION"]
