"""Gated (paper-style) and ungated label figures of a run, and the label-prior selector.

The R2VC paper scores an abstention (its ``Uncertain``) as the third class, so its
figures are **gated**: here an abstained record counts as Not Enough Evidence (AVeriTeC;
FEVER: NOT ENOUGH INFO), its mapping of Uncertain. The **ungated** figures score the
chosen candidate's label (``r2vc.candidate_label``) whether or not the gates accepted it,
or the claim-level rule's label (``r2vc.rule_label``: Conflicting) where it fired, or the
verdict head's (``r2vc.head_label``, ``offline.verdict_head``) where it decides.
Both report accuracy, macro-F1 over the label space's labels (AVeriTeC: all four, so a
Conflicting claim is never right) and per-label F1.

The **label-prior selector** is the trivial rival of the gates at the same coverage: it
accepts the claims whose ungated label is the run's majority label first (by π within
each group), as many as the gates accepted; ``selective`` compares the gates' covered
accuracy with it.

Example:
    >>> from averitec_tools.baselines.r2vc.io.claims import ClaimInput
    >>> c = [ClaimInput(0, "a", "False", "Refuted"), ClaimInput(1, "b", "True", "Supported")]
    >>> r = [{"pred_label": "Refuted", "confidence": 0.9, "r2vc": {"abstained": False, "candidate_label": "False"}},
    ...      {"pred_label": "Refuted", "confidence": 0.4, "r2vc": {"abstained": True, "candidate_label": "False"}}]
    >>> s = paper_scores(claims=c, records=r)
    >>> s["gated_paper"]["accuracy"], s["ungated"]["accuracy"], s["gated_paper"]["per_label_f1"]["Refuted"]
    (0.5, 0.5, 1.0)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.labels import AVERITEC_LABELS, FEVER_LABELS

#: The label an abstention is scored as, per output label space (the mapping of Uncertain).
ABSTAIN_AS: dict[str, str] = {"averitec": "Not Enough Evidence", "fever": "NOT ENOUGH INFO"}
_LABELS: dict[str, tuple[str, ...]] = {"averitec": AVERITEC_LABELS, "fever": FEVER_LABELS}


def _label_figures(gold: Sequence[str], predicted: Sequence[str], labels: Sequence[str]) -> dict[str, Any]:
    from averitec_tools.metrics.label_metrics import accuracy, f1_per_label, macro_f1

    return {"accuracy": accuracy(gold=gold, predicted=predicted),
            "macro_f1": macro_f1(gold=gold, predicted=predicted, labels=labels),
            "per_label_f1": f1_per_label(gold=gold, predicted=predicted, labels=labels)}


def _ungated(rec: dict[str, Any], space: str) -> str:
    from averitec_tools.labels import map_label

    diag = rec.get("r2vc", {})
    if diag.get("head_label") is not None and space == "averitec":
        return str(diag["head_label"])  # the verdict head decides the claim (offline.verdict_head)
    if diag.get("rule_label") is not None and space == "averitec":
        return str(diag["rule_label"])  # the claim-level rule (Conflicting) replaces the candidate's label
    cand = diag.get("candidate_label")
    if cand is None:
        return str(rec.get("pred_label", rec.get("predicted_label")))
    return map_label(str(cand), source="r2vc", target=space)


def label_prior_selector(*, ungated: Sequence[str], confidences: Sequence[float], correct: Sequence[bool],
                         n_accept: int) -> dict[str, Any]:
    """Covered accuracy of accepting the majority label's claims first, ``n_accept`` claims in all.

    Example:
        >>> label_prior_selector(ungated=["R", "R", "S"], confidences=[0.1, 0.9, 0.5],
        ...                      correct=[True, False, True], n_accept=2)
        {'majority_label': 'R', 'n_accepted': 2, 'covered_accuracy': 0.5}
    """
    if not ungated or n_accept <= 0:
        return {"majority_label": None, "n_accepted": 0, "covered_accuracy": None}
    majority = Counter(ungated).most_common(1)[0][0]
    order = sorted(range(len(ungated)), key=lambda i: (ungated[i] != majority, -confidences[i], i))
    top = order[:n_accept]
    return {"majority_label": majority, "n_accepted": len(top),
            "covered_accuracy": sum(bool(correct[i]) for i in top) / len(top)}


def paper_scores(*, claims: Sequence[ClaimInput], records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """``gated_paper``, ``ungated`` and ``selective`` figures of labelled claims (``{}`` without any)."""
    from averitec_tools.baselines.r2vc.io.claims import scored_gold

    pairs = [(c, r) for c, r in zip(claims, records, strict=True) if c.gold_label_raw is not None]
    if not pairs:
        return {}
    space = "averitec" if "pred_label" in pairs[0][1] else "fever"
    gold = [str(scored_gold(c, space=space)) for c, _ in pairs]
    abstained = [bool(r.get("r2vc", {}).get("abstained")) for _, r in pairs]
    ungated = [_ungated(r, space) for _, r in pairs]
    gated = [ABSTAIN_AS[space] if a else u for a, u in zip(abstained, ungated, strict=True)]
    conf = [float(r.get("confidence", 0.0)) for _, r in pairs]
    correct = [g == u for g, u in zip(gold, ungated, strict=True)]
    n_cov = abstained.count(False)
    covered = [ok for ok, a in zip(correct, abstained, strict=True) if not a]
    return {
        "gated_paper": {**_label_figures(gold, gated, _LABELS[space]),
                        "scoring": f"an abstention is scored as {ABSTAIN_AS[space]} (the paper's Uncertain)"},
        "ungated": {**_label_figures(gold, ungated, _LABELS[space]),
                    "scoring": "the chosen candidate's label, abstained or not"},
        "selective": {"coverage": n_cov / len(pairs),
                      "covered_accuracy": sum(covered) / n_cov if n_cov else None,
                      "label_prior": label_prior_selector(ungated=ungated, confidences=conf, correct=correct,
                                                          n_accept=n_cov)},
    }


def run_signature(*, config: str, oracle_corpus: bool | None, space: str = "averitec",
                  dev_annotations: bool = False) -> str:
    """The signature of a run's figures: configuration, corpus honesty and the scoring rules.

    ``corpus:`` is ``ORACLE`` (the scored claims' own answers retrievable), ``DEV-ANNOTATIONS``
    (dev answers in the corpus, each claim's own excluded) or ``train-only`` (the honest corpus).

    Example:
        >>> run_signature(config="offline-minilm-oracle", oracle_corpus=True)
        'r2vc-run|config:offline-minilm-oracle|corpus:ORACLE|gated:abstain=Not Enough Evidence|ungated:candidate|macro_f1:4-label-unweighted|selective:label-prior-majority'
        >>> run_signature(config="x", oracle_corpus=False, dev_annotations=True).split("|")[2]
        'corpus:DEV-ANNOTATIONS'
    """
    corpus = {True: "ORACLE", False: "DEV-ANNOTATIONS" if dev_annotations else "train-only", None: "n/a"}[oracle_corpus]
    return (f"r2vc-run|config:{config}|corpus:{corpus}|gated:abstain={ABSTAIN_AS[space]}|ungated:candidate"
            f"|macro_f1:{len(_LABELS[space])}-label-unweighted|selective:label-prior-majority")


__all__ = ["label_prior_selector", "paper_scores", "run_signature"]
