"""R2VC offline-minilm on the first 20 dev claims through the CLI, on the CI-sized models of the
``offline_cache`` session fixture (built once per session and shared with the R2VC regression
guard, tests/test_offline_regression.py: ``SHARED_FIXTURE_GROUPS`` keeps both on one worker)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from averitec_tools.baselines.r2vc.config import config_from_mapping
from averitec_tools.baselines.r2vc.io.claims import read_claims
from tests._offline_ci import R2VC_CI_SETTINGS


@pytest.mark.slow
@pytest.mark.shared_data
def test_offline_minilm_cli_on_20_dev_claims(shared_data: Path, offline_cache: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    import numpy as np

    from averitec_tools.baselines.r2vc.corpus.averitec_answers import answer_passages
    from averitec_tools.baselines.r2vc.offline.corpus import offline_data
    from averitec_tools.baselines.r2vc.offline.data import load_dev, split_train, verifier_epochs
    from averitec_tools.baselines.r2vc.offline.preset import build_offline, describe
    from averitec_tools.baselines.r2vc.request import BuildRequest
    from averitec_tools.cli.main import main
    from averitec_tools.leakage.pseudo_test import pseudo_test_mask

    monkeypatch.setenv("AVERITEC_DATA_DIR", str(shared_data))
    settings = json.loads(json.dumps(R2VC_CI_SETTINGS))
    settings["offline"]["cache_dir"] = str(offline_cache)
    cfg_file = tmp_path / "offline-small.yaml"
    cfg_file.write_text(json.dumps(settings))  # JSON is valid YAML
    out = tmp_path / "dev20.json"
    code = main(["baseline", "r2vc", "--config", str(cfg_file), "--limit", "20", "--out", str(out), "--json"])
    stdout, err = capsys.readouterr()
    assert code == 0, err
    summary = json.loads(stdout)
    assert summary["n_claims"] == 20 and summary["n_candidates"] == 20 * 16
    assert summary["offline"]["oracle_corpus"] is True and "oracle-corpus" in summary["offline"]["note"]
    comp = summary["components"]
    assert comp["generator"].startswith("ablation:nli_only") and comp["calibrator"].startswith("slc:")
    assert comp["verifier"]["score"] == "label-aware" and comp["verifier"]["pair_order"] == "evidence-claim"
    assert comp["corpus"]["oracle_corpus"] and comp["corpus"]["train_answers"] > 0
    assert set(summary["fallbacks"]) == {"no_candidates", "uncited_top_evidence", "unparseable_output",
                                         "template_question", "questions_not_written"}
    assert summary["decision"]["n"] == 20 and 0 <= summary["decision"]["coverage"] <= 1
    assert summary["oracle_corpus"] is True and "corpus:ORACLE" in summary["signature"]
    all_train = load_dev(shared_data / "averitec" / "train.json")
    pseudo = pseudo_test_mask([c.claim for c in all_train])[:150]  # drawn from all of train.json
    dev_answers = answer_passages(load_dev(shared_data / "averitec" / "dev.json"), split="dev")
    pseudo_answers = sum(bool(pseudo[ci]) for ci, _ in answer_passages(all_train[:150], split="train"))
    # the oracle corpus: every dev answer and every training answer (the pseudo-test's too) is in it
    assert summary["leak_guard"] == {"train_duplicates_dropped": 0, "own_answers_removed": 0,  # no twin in the first 150
                                     "own_article_answers_removed": 0, "sibling_answers_removed": 0,
                                     "pseudo_test_held_out": int(pseudo.sum()),
                                     "dev_annotations_in_corpus": len(dev_answers),
                                     "pseudo_test_annotations_in_corpus": pseudo_answers}
    assert "corpus:ORACLE" in summary["signature"] and comp["corpus"]["dev_annotations"] is True
    assert 0 < pseudo.sum() < 60
    assert summary["ungated"]["accuracy"] == pytest.approx(summary["decision"]["accuracy"])  # on_abstain: candidate
    assert set(summary["gated_paper"]["per_label_f1"]) == {"Supported", "Refuted", "Not Enough Evidence",
                                                           "Conflicting Evidence/Cherrypicking"}
    preds = json.loads(out.read_text())
    assert [p["claim_id"] for p in preds] == list(range(20))
    assert all(0.0 <= p["confidence"] <= 1.0 for p in preds)
    # Conflicting only where the fitted claim-level rule fired (its label is recorded)
    assert all(p["pred_label"] in {"Supported", "Refuted", "Not Enough Evidence"}
               or p["pred_label"] == p["r2vc"]["rule_label"] == "Conflicting Evidence/Cherrypicking" for p in preds)
    # the summary's accuracy is `averitec score`'s on the same file (4-way labels)
    gold = tmp_path / "gold20.json"
    gold.write_text(json.dumps(json.loads((shared_data / "averitec" / "dev.json").read_text())[:20]))
    assert main(["score", str(out), str(gold), "--profile", "averitec2024", "--json"]) == 0
    scored = json.loads(capsys.readouterr()[0])
    assert summary["decision"]["accuracy"] == pytest.approx(scored["veracity"]["accuracy"], abs=1e-12)

    # Rebuilding reuses the cached verifier and calibrator: training either again fails here.
    from averitec_tools.baselines.r2vc.offline import verifier as offline_module
    from averitec_tools.baselines.r2vc.stages.calibration import fitting as calibrator_module

    def no_retraining(*args: object, **kwargs: object) -> None:
        raise AssertionError("the cached model was not reused")

    monkeypatch.setattr(offline_module, "train_verifier", no_retraining)
    monkeypatch.setattr(calibrator_module, "fit_from_examples", no_retraining)
    cfg = config_from_mapping(settings, source="test").effective()
    claims = read_claims(str(shared_data / "averitec" / "dev.json"))[:20]
    pipe = build_offline(cfg, BuildRequest(claims=claims, progress=False))
    # The oracle corpus holds the gold answers: retrieval finds a claim's own answers.
    found = sum(any(p.doc_id.startswith(f"averitec-dev-{c.claim_id}-") for p in pipe.retrieve(c.claim))
                for c in claims)
    assert found >= 18
    # Nothing is learned from dev: the verifier's pairs are training claims outside the
    # calibration slice, and the calibrator's slice is training claims too.
    # The pseudo-test claims are on neither side: the slice is drawn from the others.
    train = all_train[:150]
    rest = np.flatnonzero(~pseudo)
    held = np.zeros(150, dtype=bool)
    held[rest] = split_train([train[i].claim for i in rest], n_calibration=24, seed=cfg.offline.seed)
    (pairs,) = verifier_epochs(train=train, passages=answer_passages(train, split="train"), use=~held & ~pseudo,
                               epochs=1, seed=cfg.offline.seed, max_per_class=24)
    train_texts = {c.claim for c, h, t in zip(train, held, pseudo, strict=True) if not h and not t}
    assert pairs and all(c in train_texts for c, _, _ in pairs)
    assert not {c for c, _, _ in pairs} & {c.claim for c, t in zip(train, pseudo, strict=True) if t}
    assert sorted(Counter(y for _, _, y in pairs).values()) == [24, 24, 24]  # class-balanced
    assert int(held.sum()) >= 24 and not train_texts & {c.claim for c, h in zip(train, held, strict=True) if h}
    assert not (held & pseudo).any()
    meta = json.loads((Path(pipe.components["verifier"]["model"]) / "training.json").read_text())
    assert meta["pairs"] == len(pairs) and meta["pair_order"] == "evidence-claim"
    assert meta["pair_labels"] == "decisive" and meta["cpu_seconds"] > 0
    # thresholds and gates were fitted on the held-out training claims and are reported
    fitted = summary["fitted"]
    assert "training claims held out" in fitted["slice"] and fitted["gates"]["n_claims"] >= 20
    rule = fitted["conflict_rule"]  # offline.conflict_rule: fitted on the slice, off where it cannot help
    assert rule["n_claims"] >= 20 and rule["macro_f1"] >= rule["macro_f1_without"]
    assert (rule["rule"] is None) == (rule["n_fired"] == 0)
    assert summary["decision"]["label_space"] == "averitec"
    # exclude_own_evidence over the same cached corpus and indexes: no claim retrieves its own gold
    # answers. (Building that pipeline would fit one more calibrator on the slice, a fifth of this
    # test's time; a build with exclusion, its slice fit through the excluding retriever included,
    # is the R2VC regression guard's, tests/test_offline_regression.py, on the same worker.)
    settings["offline"]["exclude_own_evidence"] = True
    excl_cfg = config_from_mapping(settings, source="test").effective()
    excl = offline_data(excl_cfg, progress=False)
    dev = load_dev(shared_data / "averitec" / "dev.json")
    own = {i: {p.doc_id for ci, p in answer_passages(dev) if dev[ci].claim == dev[i].claim} for i in range(20)}
    for c, hits in zip(claims, excl.retriever.search([c.claim for c in claims], k=cfg.retrieval.top_m), strict=True):
        assert len(hits) == cfg.retrieval.top_m and not {h.passage.doc_id for h in hits} & own[c.claim_id]
    assert describe(excl_cfg)["oracle_corpus"] is False
