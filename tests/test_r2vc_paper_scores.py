"""Gated (paper-style) and ungated figures, the label-prior selector, the honest/oracle named
configurations and ``--show-config`` (issue 27, parts 2 and 3). Values derived by hand."""

from __future__ import annotations

import json

import pytest

from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.paper_scores import (
    label_prior_selector,
    paper_scores,
    run_signature,
)
from averitec_tools.cli.main import main

# (gold AVeriTeC label, R2VC candidate label, abstained, π)
ROWS = [("Refuted", "False", False, 0.9), ("Supported", "False", True, 0.3),
        ("Not Enough Evidence", "True", True, 0.2), ("Supported", "True", False, 0.8),
        ("Supported", "False", False, 0.7)]
R2VC = {"Refuted": "False", "Supported": "True", "Not Enough Evidence": "Uncertain"}
AV = {"False": "Refuted", "True": "Supported"}


def _fixture(on_abstain: str = "candidate"):
    claims = [ClaimInput(i, f"c{i}", R2VC[g], g) for i, (g, _, _, _) in enumerate(ROWS)]
    records = [{"pred_label": "Not Enough Evidence" if a and on_abstain == "uncertain" else AV[c],
                "confidence": p, "r2vc": {"abstained": a, "candidate_label": c}} for _, c, a, p in ROWS]
    return claims, records


@pytest.mark.parametrize("on_abstain", ["candidate", "uncertain"])
def test_gated_and_ungated_figures_by_hand(on_abstain: str) -> None:
    s = paper_scores(claims=_fixture(on_abstain)[0], records=_fixture(on_abstain)[1])
    g, u = s["gated_paper"], s["ungated"]
    # gated: predictions R, NEE, NEE, S, R against R, S, NEE, S, S
    assert g["accuracy"] == pytest.approx(3 / 5)
    assert g["per_label_f1"] == pytest.approx({"Supported": 0.5, "Refuted": 2 / 3, "Not Enough Evidence": 2 / 3,
                                               "Conflicting Evidence/Cherrypicking": 0.0})
    assert g["macro_f1"] == pytest.approx(11 / 24)
    # ungated: R, R, S, S, R
    assert u["accuracy"] == pytest.approx(2 / 5)
    assert u["per_label_f1"] == pytest.approx({"Supported": 0.4, "Refuted": 0.5, "Not Enough Evidence": 0.0,
                                               "Conflicting Evidence/Cherrypicking": 0.0})
    assert u["macro_f1"] == pytest.approx(0.225)
    # the gates keep claims 0, 3, 4 (2 right); the label prior keeps the 3 Refuted ones: 0, 4, 1 (1 right)
    sel = s["selective"]
    assert sel["coverage"] == pytest.approx(0.6) and sel["covered_accuracy"] == pytest.approx(2 / 3)
    assert sel["label_prior"] == {"majority_label": "Refuted", "n_accepted": 3, "covered_accuracy": pytest.approx(1 / 3)}


def test_label_prior_selector_fills_with_other_labels_by_confidence() -> None:
    out = label_prior_selector(ungated=["R", "S", "R", "S", "N"], confidences=[0.1, 0.9, 0.2, 0.3, 0.8],
                               correct=[False, True, True, False, True], n_accept=3)
    assert out == {"majority_label": "R", "n_accepted": 3, "covered_accuracy": pytest.approx(2 / 3)}  # 2, 0, then 1
    assert label_prior_selector(ungated=[], confidences=[], correct=[], n_accept=0)["covered_accuracy"] is None


def test_no_labelled_claims_no_figures() -> None:
    assert paper_scores(claims=[ClaimInput(0, "x")], records=[{"pred_label": "Refuted"}]) == {}


def test_offline_minilm_is_honest_and_the_oracle_is_named() -> None:
    from averitec_tools.baselines.r2vc.config import resolve_config
    from averitec_tools.baselines.r2vc.offline.preset import describe

    honest, oracle = resolve_config("offline-minilm"), resolve_config("offline-minilm-oracle")
    assert honest.offline.exclude_own_evidence and not oracle.offline.exclude_own_evidence
    assert describe(honest)["oracle_corpus"] is False and describe(oracle)["oracle_corpus"] is True
    assert honest.fingerprint() != oracle.fingerprint()
    assert "corpus:ORACLE" in run_signature(config=oracle.name, oracle_corpus=True)
    assert "corpus:train-only" in run_signature(config=honest.name, oracle_corpus=False)
    dev_corpus = resolve_config("offline-minilm-dev-corpus")
    assert dev_corpus.offline.exclude_own_evidence and dev_corpus.offline.corpus == "train+dev"
    assert describe(dev_corpus)["dev_annotations_in_corpus"] and not describe(honest)["dev_annotations_in_corpus"]
    assert "corpus:DEV-ANNOTATIONS" in run_signature(config=dev_corpus.name, oracle_corpus=False,
                                                     dev_annotations=True)


@pytest.mark.parametrize(("baseline", "name"), [("r2vc", "offline-minilm-oracle"), ("averitec", "offline-minilm")])
def test_show_config_prints_the_resolved_configuration(baseline: str, name: str, capsys) -> None:
    assert main(["baseline", baseline, "--config", name, "--show-config"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config"] == name and out["settings"]["name"] == name
    if baseline == "r2vc":
        assert out["settings"]["offline"]["exclude_own_evidence"] is False
