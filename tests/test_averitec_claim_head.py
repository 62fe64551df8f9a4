"""The AVeriTeC baseline's issue-37 settings: the verdict model trained on retrieved evidence too
(``verdict.train_evidence: gold+retrieved``) and the claim head as the final decision
(``decision.head: claim-head``) — values hand-derived on tiny inputs, stand-in models."""

from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest

from averitec_tools.baselines._run.claim_head import ClaimHead
from averitec_tools.baselines.averitec.config import builtin_config, config_from_mapping
from averitec_tools.baselines.averitec.stages import head as head_stage
from averitec_tools.baselines.averitec.stages.verdict import LABELS, NEE, C, R, S
from averitec_tools.baselines.averitec.training import head_fit


def test_head_features_are_the_log_prior_then_the_log_claim_distribution() -> None:
    prior = np.array([[0.2, 0.6, 0.1, 0.1]])
    # one pair: the upstream rule's distribution is the pair's own (S 0.5, R 0.3, NEE + C 0.2 -> NEE)
    X = head_stage.head_features(prior, [np.array([[0.5, 0.3, 0.15, 0.05]])], rule="upstream")
    assert X[0].tolist() == pytest.approx(np.log([0.2, 0.6, 0.1, 0.1, 0.5, 0.3, 0.2, 1e-6]).tolist())
    # no evidence pair: the rule says NEE with certainty
    X = head_stage.head_features(prior, [np.zeros((0, 4))], rule="upstream")
    assert X[0, 4:].tolist() == pytest.approx(np.log([1e-6, 1e-6, 1.0, 1e-6]).tolist())


def test_choice_is_the_best_macro_f1_among_settings_as_accurate_as_the_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    table = {(0.1, "none"): (0.70, 0.30), (0.1, "macro-f1"): (0.60, 0.45), (1.0, "macro-f1-keep-accuracy"): (0.66, 0.40)}
    monkeypatch.setattr(head_fit, "_cv", lambda X, y, g, *, c, objective, seed: table.get((c, objective), (0.5, 0.2)))
    X, y, g = np.zeros((4, 8)), np.zeros(4, dtype=int), np.arange(4)
    chosen = head_fit.choose_head(X, y, g, probe_accuracy=0.65)
    assert (chosen["c"], chosen["objective"]) == (1.0, "macro-f1-keep-accuracy")  # 0.40 > 0.30; 0.45 is below 0.65
    assert len(chosen["grid"]) == len(head_fit.HEAD_C_GRID) * 3
    chosen = head_fit.choose_head(X, y, g, probe_accuracy=0.9)  # none reaches the probe: the most accurate
    assert (chosen["c"], chosen["objective"]) == (0.1, "none") and chosen["rule"].startswith("max accuracy")


def test_a_slice_of_one_label_is_refused_in_one_line() -> None:
    """Six claims, all Refuted: no head can be fitted; a UserError (exit 2), not scikit-learn's ValueError."""
    from averitec_tools.errors import UserError

    X, y, g = np.random.default_rng(0).normal(size=(6, 8)), np.full(6, R), np.arange(6)
    with pytest.raises(UserError, match="too small for the claim head: .* of one label"):
        head_fit.choose_head(X, y, g, probe_accuracy=0.5)


def _head(offsets: list[float] | None = None) -> ClaimHead:
    """p = softmax(log prior): the head repeats the probe (the verdict part weighs nothing)."""
    coef = np.hstack([np.eye(4), np.zeros((4, 4))])
    return ClaimHead(features=head_stage.HEAD_FEATURES, mean=np.zeros(8), scale=np.ones(8), coef=coef,
                     intercept=np.zeros(4), offsets=np.asarray(offsets or [0.0] * 4), c=1.0)


def test_head_decision_reads_the_head_not_the_rule() -> None:
    probs = np.array([[0.9, 0.05, 0.05, 0.0]])  # the rule: Supported
    label, conf, dist = head_stage.head_decision(_head(), np.array([0.1, 0.7, 0.1, 0.1]), probs, rule="upstream")
    assert label == LABELS[R] and conf == pytest.approx(0.7) and sum(dist.values()) == pytest.approx(1.0)
    # an NEE offset of log 8: 0.1 * 8 = 0.8 > 0.7
    label, conf, _ = head_stage.head_decision(_head([0, 0, np.log(8.0), 0]), np.array([0.1, 0.7, 0.1, 0.1]), probs,
                                            rule="upstream")
    assert label == LABELS[NEE] and conf == pytest.approx(0.1)


class _Verdict:
    def predict(self, pairs):  # noqa: ANN001, ANN201
        return np.array([[0.9, 0.05, 0.05, 0.0]] * len(pairs))


class _Justifier:
    def justify(self, items):  # noqa: ANN001, ANN201
        return [label for *_, label in items]


def test_decided_builds_a_new_pipeline_with_the_head_and_the_scored_priors() -> None:
    from averitec_tools.baselines.averitec.io.data import ClaimItem
    from averitec_tools.baselines.averitec.pipeline import AVeriTeCPipeline
    from averitec_tools.baselines.averitec.training.decision_slice import decided
    from averitec_tools.baselines.averitec.variants import VARIANTS
    from averitec_tools.records.averitec import AVeriTeCClaim

    built = AVeriTeCPipeline(config=builtin_config("offline-minilm"), variant=VARIANTS["claim-only"], store=None,
                             question_writer=None, reranker=None, verdict=_Verdict(), justifier=_Justifier(),
                             components={}, verdict_training={"gold_examples": 4, "retrieved_examples": 6})
    item = ClaimItem(0, AVeriTeCClaim(claim="The sky is green."))
    assert built.run_claim(item).label == LABELS[S]  # the aggregation rule
    fitted = {"head": {"model": _head().to_dict(), "choice": {"c": 1.0}}}
    pipe = decided(built, fitted, seconds=0.5, priors={"The sky is green.": [0.1, 0.2, 0.1, 0.6]})
    assert built.head is None and not built.priors  # built whole, not changed
    r = pipe.run_claim(item)
    assert (r.label, r.confidence) == (LABELS[C], pytest.approx(0.6))
    assert pipe.stage_settings["justification"]["head"]  # the label is the head's: the justification key sees it
    assert pipe.decision["head"]["choice"] == {"c": 1.0} and pipe.verdict_training["retrieved_examples"] == 6
    with pytest.raises(KeyError):  # a scored claim without its prior is an error, never the rule's label
        pipe.run_claim(ClaimItem(1, AVeriTeCClaim(claim="Another claim.")))


def test_settings_are_checked_and_gold_training_keeps_its_cache_key() -> None:
    from averitec_tools.baselines.averitec.training.checkpoints import training_settings
    from averitec_tools.errors import UserError

    with pytest.raises(UserError, match=r"decision.head: unknown value 'head' \(did you mean: claim-head\?\)"):
        config_from_mapping({"base": "offline-minilm", "decision": {"head": "head"}}, source="c.yaml")
    with pytest.raises(UserError, match="verdict.train_evidence"):
        config_from_mapping({"verdict": {"train_evidence": "retrieved"}}, source="c.yaml")
    paper = builtin_config("paper")
    # gold evidence: the checkpoint key's settings of before issue 37 (a cached model stays valid)
    assert training_settings("verdict", paper) == {"base": "bert-base-uncased", "input": "upstream",
                                                   "aggregation": "upstream", "train": asdict(paper.verdict.train)}
    ours = builtin_config("offline-minilm-ours")
    assert ours.verdict.train_evidence == "gold" and ours.decision.head == "none"
    retrieved = training_settings("verdict", builtin_config("offline-minilm"))
    assert retrieved["train_evidence"] == "gold+retrieved" and retrieved["retrieved_per_claim"] == 3


def _train_rows() -> list[dict]:
    topics = ["bridge", "river", "school", "tax", "forest", "virus"]
    return [{"claim": f"The {topics[i % 6]} in town {i} was closed in 2020.",
             "label": ["Refuted", "Supported", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking"][i % 4],
             "fact_checking_article": f"https://fc.org/{i}",
             "questions": [{"question": f"Was the {topics[i % 6]} in town {i} closed?",
                            "answers": [{"answer": f"Town {i} closed its {topics[i % 6]} in 2020.",
                                         "answer_type": "Extractive", "source_url": f"https://s.org/{i}"}]}]}
            for i in range(12)]


def test_retrieved_training_evidence_is_other_claims_answers_labelled_with_the_claim(tmp_path: Path) -> None:
    from averitec_tools.baselines.averitec.training.checkpoints import training_claims
    from averitec_tools.baselines.averitec.training.verdict_evidence import retrieved_examples

    path = tmp_path / "train.json"
    path.write_text(json.dumps(_train_rows()), encoding="utf-8")
    base = builtin_config("offline-minilm")
    cfg = replace(base, data=replace(base.data, train=str(path), cache_dir=str(tmp_path / "cache"),
                                     pseudo_test_claims=0), decision=replace(base.decision, distractors=4))
    train, info = training_claims(cfg)
    examples, store = retrieved_examples(cfg, claims=train, writer_claims=train, train_sha=info["sha256"])
    # Conflicting claims (3 of 12) are left out; each other claim: its top 3 of 4 distractors
    assert len(examples) == 9 * 3 and store["claims"] == 12 and store["own_answers_removed"] == 12
    labelled = {}
    for text, _, y in examples:
        claim = text.split(" [QUESTION] ")[0].removeprefix("[CLAIM] ")
        labelled.setdefault(claim, set()).add(y)
        town = claim.split("town ")[1].split(" ")[0]
        assert f"Town {town} closed" not in text  # never the claim's own answer
    rows = {r["claim"]: r["label"] for r in _train_rows()}
    assert all(ys == {LABELS.index(rows[c])} for c, ys in labelled.items()) and len(labelled) == 9
    again, _ = retrieved_examples(cfg, claims=train, writer_claims=train, train_sha=info["sha256"])
    assert again == examples  # the store is cached, the draw seeded


def test_bm25_order_slices_on_the_verdict_split_alone() -> None:
    from averitec_tools.baselines.averitec.io.data import ClaimItem
    from averitec_tools.baselines.averitec.training.decision_slice import decision_slice
    from averitec_tools.records.averitec import AVeriTeCClaim

    cfg = builtin_config("offline-minilm")
    cs = [ClaimItem(i, AVeriTeCClaim(claim=f"c{i}")) for i in range(40)]
    sl = decision_slice(cfg, claims=cs)
    both = decision_slice(replace(cfg, decision=replace(cfg.decision, reranker="slice-choice")), claims=cs)
    assert len(sl) == 6 and set(c.claim_id for c in both) <= set(c.claim_id for c in sl)  # 15 % of 40


def test_offline_minilm_end_to_end_with_retrieved_training_and_the_head(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    from averitec_tools.baselines.averitec.build import BM25_ORDER
    from averitec_tools.cli.main import main
    from tests._averitec_baseline_fixtures import claims, tiny_models, write_json

    monkeypatch.setattr(head_fit, "HEAD_SEEDS", 1)  # the choice's cost, not its rule (tested above)
    monkeypatch.setattr(head_fit, "HEAD_C_GRID", (0.03,))  # strongly regularised: lbfgs converges at once
    from averitec_tools.baselines._run import claim_prior

    monkeypatch.setattr(claim_prior, "_MAX_ITER", 100)  # the probe on 100 separable fixture claims
    monkeypatch.setattr(head_fit, "HEAD_FOLDS", 2)
    models = tiny_models(tmp_path, only=("bert",))
    train = write_json(tmp_path / "train.json", claims("train", 100))
    dev = write_json(tmp_path / "dev.json", claims("dev", 4))
    assert main(["baseline", "averitec", "build-store", "--claims", str(dev), "--out", str(tmp_path / "store"),
                 "--distractors", "3", "--exclude-own-evidence", "--distractors-from", str(train)]) == 0
    cfg = {"base": "offline-minilm", "data": {"train": str(train), "cache_dir": str(tmp_path / "cache"),
                                              "pseudo_test_claims": 0},
           "verdict": {"base": str(models["bert"]), "retrieved_per_claim": 2,
                       "train": {"max_pairs": 24, "epochs": 1, "batch_size": 8, "max_length": 48, "device": "cpu"}},
           "decision": {"distractors": 3}}
    (tmp_path / "c.yaml").write_text(yaml.safe_dump(cfg))
    capsys.readouterr()
    assert main(["baseline", "averitec", "--config", str(tmp_path / "c.yaml"), "--claims", str(dev), "--store",
                 str(tmp_path / "store"), "--out", str(tmp_path / "p.json"), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["components"]["reranker"] == BM25_ORDER
    vt = summary["verdict_training"]
    # 2 pairs for each of the 85 training claims left by the slice (15 %), the Conflicting ones excepted
    assert vt["gold_examples"] > 0 and vt["retrieved_per_claim"] == 2
    assert vt["retrieved_examples"] % 2 == 0 and 2 * 60 <= vt["retrieved_examples"] < 2 * 85
    head = summary["decision"]["head"]
    assert summary["decision"]["slice_claims"] == 15 and head["choice"]["c"] == 0.03
    assert head["model"]["features"] == list(head_stage.HEAD_FEATURES)
    preds = json.loads((tmp_path / "p.json").read_text())
    assert len(preds) == 4 and all(abs(sum(p["probabilities"].values()) - 1) < 1e-9 for p in preds)
