"""FEVER/VitaminC accuracy, macro-F1, Brier and ECE as the R2VC paper's Tables 1 and 2 print them.

The paper reports, per benchmark, **Accuracy** as a percentage with two decimals
(84.71), **Macro-F1** ×100 with two decimals (85.68), **Brier** with three decimals
(0.083) and **ECE** with four (0.0125). It does not define Brier, ECE or how an
abstention is scored; the choices here (in the signature) are:

* labels in the FEVER/VitaminC space; an abstention (R2VC's ``Uncertain``) is the
  prediction NOT ENOUGH INFO, so it is right exactly on NEI claims;
* accuracy = share of claims whose predicted label equals the gold label;
  macro-F1 = unweighted mean of the three per-label F1 (SUPPORTS, REFUTES, NOT ENOUGH
  INFO; a label never predicted nor gold counts 0);
* Brier = binary top-label Brier of ``confidence`` (π of the chosen candidate) against
  correctness; ECE = top-label ECE over 15 equal-width bins (Guo et al., 2017) — the
  same definitions as ``averitec calibration``.

:func:`paper_row` computes one row from a ternary prediction file and the gold file
(FEVER ``id`` or VitaminC ``unique_id`` rows; the ids must match one to one);
:func:`markdown_table` lays rows out as the paper's table does.

Example:
    >>> row = PaperRow.from_values(name="toy", dataset="VitaminC", gold=["SUPPORTS", "REFUTES"],
    ...                            predicted=["SUPPORTS", "SUPPORTS"], confidences=[0.9, 0.6])
    >>> row.cells()
    ['50.00', '22.22', '0.185', '0.3500']
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools._version import __version__
from averitec_tools.errors import UserError
from averitec_tools.labels import FEVER_LABELS

#: ECE bins (equal width), as ``averitec calibration``'s default.
N_BINS = 15


#: The paper's Table 2 as its §5 text reports it (Accuracy %, Macro-F1, Brier, ECE), per
#: row of :data:`averitec_tools.baselines.r2vc.experiments.paper.ROWS`. The NLI-only row equals the
#: base Llama-3.1-Nemotron-8B row of Table 1 (§4.1) number for number.
PAPER_TABLE2: dict[str, dict[str, tuple[float, float, float, float]]] = {
    "full": {"FEVER": (84.71, 85.68, 0.083, 0.0125), "VitaminC": (99.78, 99.82, 0.073, 0.0077)},
    "no_dpo": {"FEVER": (83.02, 83.97, 0.091, 0.0138), "VitaminC": (97.78, 97.82, 0.080, 0.0085)},
    "no_verifier_selection": {"FEVER": (76.24, 77.11, 0.093, 0.0140), "VitaminC": (89.80, 89.84, 0.082, 0.0086)},
    "single_candidate": {"FEVER": (78.78, 79.68, 0.088, 0.0133), "VitaminC": (92.80, 92.83, 0.077, 0.0082)},
    "no_calibration": {"FEVER": (77.48, 77.16, 0.161, 0.0312), "VitaminC": (96.32, 96.57, 0.085, 0.0227)},
    "nli_only": {"FEVER": (74.54, 75.40, 0.095, 0.0143), "VitaminC": (87.81, 87.84, 0.083, 0.0088)},
}


def signature(n_bins: int = N_BINS) -> str:
    """The definitions behind a row (printed with every table)."""
    return (f"r2vc-paper-table|labels:fever-3way|abstain:NOT ENOUGH INFO|acc:top-label|macro_f1:3-label-unweighted"
            f"|brier:binary-top-label(confidence)|ece:{n_bins}-uniform-top-label|version:{__version__}")


@dataclass(frozen=True)
class PaperRow:
    """One benchmark's figures for one system (fractions; :meth:`cells` formats them).

    Attributes:
        name: Row label (e.g. ``"R2VC (full)"``).
        dataset: ``"FEVER"`` or ``"VitaminC"`` (free text).
        n: Claims scored.
        accuracy: Label accuracy in [0, 1].
        macro_f1: Macro-F1 in [0, 1].
        brier: Binary top-label Brier score.
        ece: Top-label ECE.
        n_abstained: Claims predicted NOT ENOUGH INFO because the gates abstained
            (``r2vc.abstained``), when the file says.
        labels: Predicted label counts.
    """

    name: str
    dataset: str
    n: int
    accuracy: float
    macro_f1: float
    brier: float
    ece: float
    n_abstained: int | None = None
    labels: Mapping[str, int] | None = None

    @classmethod
    def from_values(
        cls, *, name: str, dataset: str, gold: Sequence[str], predicted: Sequence[str],
        confidences: Sequence[float], abstained: Sequence[bool] | None = None, n_bins: int = N_BINS,
    ) -> PaperRow:
        """Compute a row from aligned gold labels, predicted labels and confidences."""
        from collections import Counter

        from averitec_tools.metrics.brier import brier_score
        from averitec_tools.metrics.ece import expected_calibration_error
        from averitec_tools.metrics.label_metrics import accuracy, macro_f1

        if not gold:
            raise UserError("no claims to score")
        correct = [g == p for g, p in zip(gold, predicted, strict=True)]
        return cls(
            name=name, dataset=dataset, n=len(gold),
            accuracy=accuracy(gold=list(gold), predicted=list(predicted)),
            macro_f1=macro_f1(gold=list(gold), predicted=list(predicted), labels=FEVER_LABELS),
            brier=brier_score(confidences=list(confidences), correct=correct),
            ece=expected_calibration_error(confidences=list(confidences), correct=correct, n_bins=n_bins),
            n_abstained=None if abstained is None else int(sum(abstained)),
            labels=dict(sorted(Counter(predicted).items())),
        )

    def cells(self) -> list[str]:
        """Accuracy %, Macro-F1 ×100, Brier, ECE — the paper's precision."""
        return [f"{100 * self.accuracy:.2f}", f"{100 * self.macro_f1:.2f}", f"{self.brier:.3f}", f"{self.ece:.4f}"]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dataset": self.dataset, "n": self.n, "accuracy": self.accuracy,
                "macro_f1": self.macro_f1, "brier": self.brier, "ece": self.ece,
                "n_abstained": self.n_abstained, "labels": dict(self.labels or {}),
                "paper_cells": dict(zip(("accuracy", "macro_f1", "brier", "ece"), self.cells(), strict=True))}


def _gold_labels(path: str | os.PathLike[str]) -> dict[str, str]:
    from averitec_tools.jsonio import iter_records
    from averitec_tools.labels import normalize_label

    out: dict[str, str] = {}
    for loc in iter_records(path):
        item = loc.value
        if not isinstance(item, Mapping):
            raise UserError(f"{loc.where}: expected a gold claim object")
        key = next((k for k in ("id", "unique_id") if k in item), None)
        if key is None or item.get("label") is None:
            raise UserError(f"{loc.where}: a FEVER/VitaminC gold row needs 'id' (or 'unique_id') and 'label'")
        cid = str(item[key])
        if cid in out:
            raise UserError(f"{loc.where}: duplicate claim id {cid!r}")
        out[cid] = normalize_label(str(item["label"]), space="fever", where=loc.where)
    if not out:
        raise UserError(f"{os.fspath(path)}: no gold claims")
    return out


def paper_row(
    *, predictions: str | os.PathLike[str], gold: str | os.PathLike[str], name: str, dataset: str,
    n_bins: int = N_BINS,
) -> PaperRow:
    """One table row from an R2VC ternary prediction file and its gold file.

    Raises:
        UserError: a prediction without ``id``/``predicted_label``/``confidence``, an id
            missing on either side (named), a duplicate id or an unknown label.
    """
    from averitec_tools.jsonio import iter_records
    from averitec_tools.labels import normalize_label

    gold_by_id = _gold_labels(gold)
    golds, preds, confs, abstained = [], [], [], []
    seen: set[str] = set()
    for loc in iter_records(predictions):
        item = loc.value
        if not isinstance(item, Mapping) or "id" not in item or "predicted_label" not in item:
            raise UserError(f"{loc.where}: expected a ternary prediction {{id, predicted_label, confidence}}")
        cid = str(item["id"])
        if cid in seen:
            raise UserError(f"{loc.where}: duplicate prediction for claim {cid!r}")
        seen.add(cid)
        if cid not in gold_by_id:
            raise UserError(f"{loc.where}: claim {cid!r} is not in the gold file {os.fspath(gold)}")
        conf = item.get("confidence")
        if isinstance(conf, bool) or not isinstance(conf, (int, float)) or not 0.0 <= float(conf) <= 1.0:
            raise UserError(f"{loc.where}: claim {cid!r}: 'confidence' must be a number in [0, 1], found {conf!r}")
        golds.append(gold_by_id[cid])
        preds.append(normalize_label(str(item["predicted_label"]), space="fever", where=loc.where))
        confs.append(float(conf))
        diag = item.get("r2vc")
        abstained.append(bool(diag.get("abstained")) if isinstance(diag, Mapping) else False)
    missing = [cid for cid in gold_by_id if cid not in seen]
    if missing:
        raise UserError(f"{os.fspath(predictions)}: no prediction for {len(missing)} gold claims (first: {missing[0]!r})",
                        hint="score against the gold subset the run wrote (--write-gold-subset)")
    return PaperRow.from_values(name=name, dataset=dataset, gold=golds, predicted=preds, confidences=confs,
                                abstained=abstained, n_bins=n_bins)


def markdown_table(rows: Sequence[PaperRow]) -> str:
    """Rows as the paper lays Table 2 out: one column group per benchmark.

    Example:
        >>> a = PaperRow("full", "FEVER", 2, 0.5, 0.3333, 0.185, 0.25)
        >>> print(markdown_table([a]))  # doctest: +NORMALIZE_WHITESPACE
        | system | FEVER Acc | FEVER Macro-F1 | FEVER Brier | FEVER ECE |
        |---|---|---|---|---|
        | full | 50.00 | 33.33 | 0.185 | 0.2500 |
    """
    datasets = list(dict.fromkeys(r.dataset for r in rows))
    names = list(dict.fromkeys(r.name for r in rows))
    by = {(r.name, r.dataset): r for r in rows}
    head = ["system"] + [f"{d} {m}" for d in datasets for m in ("Acc", "Macro-F1", "Brier", "ECE")]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in names:
        cells = [name]
        for d in datasets:
            row = by.get((name, d))
            cells.extend(row.cells() if row else ["–"] * 4)
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


__all__ = ["PAPER_TABLE2", "PaperRow", "markdown_table", "paper_row", "signature"]
