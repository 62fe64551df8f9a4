"""R2VC pipeline end to end: fake backends on a tiny fixture, then offline-minilm on dev."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from averitec_tools.baselines._run.sidecar import sidecar_path
from averitec_tools.baselines.r2vc.calibration_fit import fit_calibrator
from averitec_tools.baselines.r2vc.config import R2VCConfig, config_from_mapping
from averitec_tools.baselines.r2vc.io.claims import read_claims
from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
from averitec_tools.baselines.r2vc.stages.calibration.calibrator import Calibrator
from averitec_tools.baselines.r2vc.stages.generation.nli_fallback import NLIFallbackGenerator
from averitec_tools.baselines.r2vc.stages.questions import fallback_question
from averitec_tools.baselines.r2vc.stages.verification.verifier import verifier_from_config
from averitec_tools.errors import UserError
from tests._offline_ci import R2VC_CI_SETTINGS
from tests._r2vc_helpers import KeywordNLI, ListRetriever, tiny_claims, tiny_passages


def make_pipe(cfg: R2VCConfig | None = None, calibrator=None) -> R2VCPipeline:
    cfg = (cfg or R2VCConfig()).effective()
    nli = KeywordNLI()
    verifier = verifier_from_config(backend=nli, config=cfg.verifier)
    gen = NLIFallbackGenerator(nli=verifier.nli, subset_size=cfg.generator.subset_size)
    return R2VCPipeline(retriever=ListRetriever(tiny_passages()), generator=gen, verifier=verifier,
                        calibrator=calibrator, config=cfg)


@pytest.fixture()
def claims_file(tmp_path: Path) -> Path:
    p = tmp_path / "claims.json"
    p.write_text(json.dumps(tiny_claims()))
    return p


LITERAL = {"verifier": {"score": "literal"}}


def test_end_to_end_fake_backends_by_hand(tmp_path: Path, claims_file: Path) -> None:
    claims = read_claims(str(claims_file))
    out = tmp_path / "pred.json"
    summary = make_pipe(config_from_mapping(LITERAL, source="t")).run(
        claims, out=out, output_format="averitec2024", progress=False)
    preds = json.loads(out.read_text())
    assert [p["claim_id"] for p in preds] == [0, 1, 2, 3]
    # claim 0: E = {z1 (ent .9), z2 (neutral)} → True; s_ver = .6*.9 + .2*.5 + .1 + .1 − 0 = .84
    p0 = preds[0]
    assert p0["pred_label"] == "Supported" and p0["confidence"] == pytest.approx(0.84)
    assert p0["r2vc"]["s_ver"] == pytest.approx(0.84)
    # the NLI-only candidate cites the passages that carry its label: z1 alone reaches T_ent
    assert [e["url"] for e in p0["evidence"]] == ["https://z.org/1"]
    assert all(e["question"] == fallback_question(tiny_claims()[0]["claim"]) for e in p0["evidence"])
    assert [e["answer"] for e in p0["evidence"]] == [tiny_passages()[0].text]
    assert [c["doc_id"] for c in p0["citations"]] == [e["doc_id"] for e in p0["citations"]]
    # claim 1: NLI says False, but s_ver = .6*.1 + .2*.06 − .3*.8 + .1 + .1 = .032 < τ_ver → abstain
    p1 = preds[1]
    assert p1["pred_label"] == "Not Enough Evidence" and p1["r2vc"]["reason"].endswith("low_verifier")
    assert p1["r2vc"]["s_ver"] == pytest.approx(0.032)
    assert p1["r2vc"]["candidate_label"] == "False"  # what the gates overrode
    # claim 2: neutral evidence only → Uncertain
    assert preds[2]["pred_label"] == "Not Enough Evidence"
    # claim 3: nothing retrieved → abstain, no evidence, confidence 0
    assert preds[3]["pred_label"] == "Not Enough Evidence" and preds[3]["evidence"] == []
    assert preds[3]["r2vc"]["reason"] == "no_candidates" and preds[3]["confidence"] == 0.0
    assert preds[3]["r2vc"]["candidate_label"] is None
    s = summary.to_dict()
    assert s["n_claims"] == 4 and s["n_abstained"] == 3 and s["n_candidates"] == 3 * 16
    assert s["labels"] == {"Not Enough Evidence": 3, "Supported": 1}
    assert set(s["seconds_per_claim"]) == {"retrieve", "generate", "verify", "calibrate", "questions"}
    assert not sidecar_path(out).exists()
    # nothing substituted silently: components named, fallbacks counted
    comp = s["components"]
    assert comp["verifier"] == {"backend": "keyword", "score": "literal", "pair_order": "evidence-claim"}
    assert comp["calibrator"].startswith("ablation:no_calibration")
    assert comp["generator"].startswith("nli-fallback:")
    assert comp["question_writer"].startswith("template:")
    assert comp["retrieval"]["retriever"] == "list"
    assert s["fallbacks"] == {"no_candidates": 1, "uncited_top_evidence": 0, "unparseable_output": 0,
                              "template_question": 0, "questions_not_written": 0}
    # emitted decisions against gold: 1 accepted (right), 3 abstained (1 right: claim 2 is NEE)
    d = s["decision"]
    assert (d["n"], d["coverage"], d["selective_risk"], d["accuracy"]) == (4, 0.25, 0.0, 0.5)


def test_correct_false_verdict_with_contradicting_evidence_accepted(tmp_path: Path, claims_file: Path) -> None:
    """Label-aware s_ver (the default): a clean refutation passes τ_ver; literal s_ver cannot."""
    claims = read_claims(str(claims_file))
    out = tmp_path / "pred.json"
    summary = make_pipe().run(claims, out=out, output_format="averitec2024", progress=False).to_dict()
    p1 = json.loads(out.read_text())[1]
    # support = max contradiction .9, coverage (.9 + .1) / 2, no excess, s_cons 1, s_align 1, s_cit 1
    assert p1["pred_label"] == "Refuted" and not p1["r2vc"]["abstained"]
    assert p1["r2vc"]["s_ver"] == pytest.approx(0.6 * 0.9 + 0.2 * 0.5 + 0.1 + 0.1)
    assert claims[1].gold_label == "False"
    assert summary["components"]["verifier"]["score"] == "label-aware"
    # Supported, Refuted, NEE (an accepted Uncertain: right), NEE (empty retrieval; gold Refuted)
    assert summary["decision"]["accuracy"] == 0.75 and summary["decision"]["coverage"] == 0.75


def test_lower_verifier_threshold_lets_false_through(tmp_path: Path, claims_file: Path) -> None:
    cfg = config_from_mapping({"calibration": {"tau_ver": 0.0, "tau_cal": 0.0}} | LITERAL, source="t")
    out = tmp_path / "p.json"
    make_pipe(cfg).run(read_claims(str(claims_file)), out=out, output_format="averitec2024", progress=False)
    assert [p["pred_label"] for p in json.loads(out.read_text())][:2] == ["Supported", "Refuted"]


def test_calibrator_used_for_confidence(tmp_path: Path, claims_file: Path) -> None:
    cal = Calibrator(coef=(0.0,) * 7, intercept=float(np.log(0.3 / 0.7)))  # π = 0.3 everywhere
    out = tmp_path / "p.json"
    make_pipe(calibrator=cal).run(read_claims(str(claims_file)), out=out, output_format="averitec2024",
                                  progress=False)
    p0 = json.loads(out.read_text())[0]
    assert p0["confidence"] == pytest.approx(0.3) and p0["r2vc"]["reason"] == "low_confidence"


def test_fit_calibrator_on_labelled_claims(claims_file: Path) -> None:
    claims = read_claims(str(claims_file))
    cal = fit_calibrator(make_pipe(), claims=claims)
    # claim 3 has no retrieval → skipped; claims 0 (True=gold) correct, 1 (False) correct, 2 (Uncertain=NEE) correct
    assert cal.fit_info["claims"] == 3 and cal.fit_info["n"] == 3 * 12 and cal.fit_info["positive_rate"] == 1.0
    assert cal.fit_info["fit_on"] == "all" and cal.fit_info["gate_frontier"]
    small = fit_calibrator(make_pipe(config_from_mapping({"calibration": {"fit_size": 1}}, source="t")),
                           claims=claims)
    assert small.fit_info["claims"] == 1  # fit_size caps the fit claims
    unlabelled = [c.__class__(claim_id=c.claim_id, claim=c.claim) for c in claims]
    with pytest.raises(UserError, match="no gold label"):
        fit_calibrator(make_pipe(), claims=unlabelled)


#: π = 0.3 for every candidate: a run that uses it reports confidence 0.3 and abstains (τ_cal 0.6).
PI_03 = Calibrator(coef=(0.0,) * 7, intercept=float(np.log(0.3 / 0.7)))


@pytest.mark.parametrize(
    ("ablation", "calibrator", "check"),
    [
        ({"single_candidate": True}, None, lambda s, p: s["n_candidates"] == 3),
        ({"no_verifier_selection": True, "single_candidate": True}, None,
         lambda s, p: p[0]["pred_label"] == "Supported"),
        # Given a calibrator, the ablation must drop it: π = s_ver (0.84), not the calibrator's 0.3.
        ({"no_calibration": True}, PI_03, lambda s, p: p[0]["confidence"] == pytest.approx(0.84)
         and p[0]["pred_label"] == "Supported" and s["components"]["calibrator"].startswith("ablation:no_calibration")),
    ],
    ids=["single_candidate", "no_verifier_selection", "no_calibration"],
)
def test_ablations_run(tmp_path: Path, claims_file: Path, ablation, calibrator, check) -> None:
    cfg = config_from_mapping({"ablation": ablation}, source="t")
    out = tmp_path / "p.json"
    s = make_pipe(cfg, calibrator=calibrator).run(read_claims(str(claims_file)), out=out,
                                                  output_format="averitec2024", progress=False)
    assert check(s.to_dict(), json.loads(out.read_text()))


def test_interrupted_run_resumes_and_matches_clean_run(tmp_path: Path, claims_file: Path) -> None:
    claims = read_claims(str(claims_file))
    clean = tmp_path / "clean.json"
    make_pipe().run(claims, out=clean, output_format="averitec2024", progress=False)

    out = tmp_path / "pred.json"

    def stop_after_two(n: int) -> None:
        if n == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        make_pipe().run(claims, out=out, output_format="averitec2024", progress=False, on_claim=stop_after_two)
    assert not out.exists()  # never a half-written output
    side = sidecar_path(out)
    assert len(side.read_text().splitlines()) == 3  # header + two claims
    with side.open("a") as fh:
        fh.write('{"key": "2", "record": {"claim_id"')  # torn write of the third claim
    s = make_pipe().run(claims, out=out, output_format="averitec2024", resume=True, progress=False)
    assert s.n_resumed == 2
    assert json.loads(out.read_text()) == json.loads(clean.read_text())
    assert not side.exists()


def test_resume_refuses_other_config(tmp_path: Path, claims_file: Path) -> None:
    claims = read_claims(str(claims_file))
    out = tmp_path / "pred.json"

    def stop(n: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        make_pipe().run(claims, out=out, output_format="averitec2024", progress=False, on_claim=stop)
    other = config_from_mapping({"calibration": {"tau_cal": 0.9}}, source="t")
    with pytest.raises(UserError, match="different configuration"):
        make_pipe(other).run(claims, out=out, output_format="averitec2024", resume=True, progress=False)
    sidecar_path(out).write_text("garbage\nmore garbage\n")
    with pytest.raises(UserError, match="corrupt partial-run file"):
        make_pipe().run(claims, out=out, output_format="averitec2024", resume=True, progress=False)


def test_ternary_format_for_fever_claims(tmp_path: Path) -> None:
    p = tmp_path / "fever.jsonl"
    p.write_text(json.dumps({"id": 7, "claim": "Zorbland won the zorb cup", "label": "SUPPORTS"}) + "\n"
                 + json.dumps({"id": 8, "claim": "xyzzy"}) + "\n")
    claims = read_claims(str(p))
    assert claims[0].kind == "ternary" and claims[0].gold_label == "True"
    out = tmp_path / "pred.jsonl"
    make_pipe().run(claims, out=out, output_format="ternary", progress=False)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == [7, 8]
    assert rows[0]["predicted_label"] == "SUPPORTS" and rows[1]["predicted_label"] == "NOT ENOUGH INFO"
    assert rows[0]["predicted_evidence"] == [["Zorbland", 0]]  # z1 alone carries the label


def test_fever_evidence_carries_the_page_title_not_the_doc_id() -> None:
    from averitec_tools.baselines.r2vc.io.claims import ClaimInput
    from averitec_tools.baselines.r2vc.io.formats import ClaimPrediction, to_ternary
    from averitec_tools.baselines.r2vc.types import Passage

    cited = (Passage("wiki-000123#4", "Savages (2012 film)", "", "x"), Passage("row-9", "Oliver Stone", "", "y"),
             Passage("Nikolaj_Coster-Waldau_7", "", "", "z"))
    pred = ClaimPrediction(claim=ClaimInput(claim_id=1, claim="c", kind="ternary"), label="True", confidence=0.9,
                           rationale="r", cited=cited, questions=("q",) * 3, abstained=False, reason="accepted",
                           s_ver=0.9, n_candidates=1, n_malformed=0)
    assert to_ternary(pred)["predicted_evidence"] == [
        ["Savages_-LRB-2012_film-RRB-", 4], ["Oliver_Stone", 0], ["Nikolaj_Coster-Waldau", 7]]


def test_read_claims_errors(tmp_path: Path) -> None:
    p = tmp_path / "c.json"
    p.write_text(json.dumps([{"claim": "ok"}, {"label": "Refuted"}]))
    with pytest.raises(UserError, match=r"c.json\[1\]: missing or empty 'claim'"):
        read_claims(str(p))
    p.write_text(json.dumps([{"claim": "ok", "label": "Maybe"}]))
    with pytest.raises(UserError, match="unknown averitec label 'Maybe'"):
        read_claims(str(p))
    p.write_text(json.dumps([{"id": 1, "claim": "a"}, {"id": 1, "claim": "b"}]))
    with pytest.raises(UserError, match="duplicate claim id 1"):
        read_claims(str(p))
    p.write_text("[]")
    with pytest.raises(UserError, match="no claims"):
        read_claims(str(p))


# ---------------------------------------------------------------- offline-minilm on dev

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


def test_lm_question_writer_uses_model_output_or_falls_back() -> None:
    import torch

    from averitec_tools.baselines.r2vc.stages.questions import LMQuestionWriter

    replies = iter(["Who won the zorb cup in 2020?\nextra", "not a question"])

    class Enc(dict):
        def to(self, device):
            return self

    class Tok:
        pad_token_id = 0

        def apply_chat_template(self, messages, tokenize, add_generation_prompt):
            assert messages[-1]["role"] == "user" and "Evidence:" in messages[-1]["content"]
            return "PROMPT " + messages[-1]["content"]

        def __call__(self, text, return_tensors, return_token_type_ids=True, add_special_tokens=True):
            # the chat template wrote the begin-of-text token: a second one must not be added
            assert add_special_tokens is False
            return Enc(input_ids=torch.ones((1, 3), dtype=torch.long))

        def decode(self, ids, skip_special_tokens):
            assert ids.tolist() == [7, 7]  # only the generated continuation is decoded
            return next(replies)

    class Model:
        device = "cpu"

        def generate(self, **kwargs):
            assert kwargs["do_sample"] is False
            return torch.tensor([[1, 1, 1, 7, 7]])

    writer = LMQuestionWriter(model=Model(), tokenizer=Tok())
    qs = writer.write(claim="Zorbland won the zorb cup.", passages=tiny_passages()[:2])
    assert qs == ["Who won the zorb cup in 2020?", fallback_question("Zorbland won the zorb cup.")]
    assert writer.n_fallback == 1  # counted: the run summary reports it as template_question


def test_a_prediction_takes_its_verdict_fields_from_the_decision() -> None:
    import dataclasses

    from averitec_tools.baselines.r2vc.io.formats import VERDICT_FIELDS, ClaimPrediction
    from averitec_tools.baselines.r2vc.stages.calibration.decision import Decision

    decision = {f.name for f in dataclasses.fields(Decision)}
    prediction = {f.name for f in dataclasses.fields(ClaimPrediction)}
    assert set(VERDICT_FIELDS) == (decision & prediction)  # every field both have is the decision's
