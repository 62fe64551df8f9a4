"""R2VC pipeline end to end with fake backends on a tiny fixture: the decisions and gates worked
by hand, the calibrator, the ablations, resuming, the ternary output. The offline-minilm run on
dev is tests/test_r2vc_offline_dev.py; claims and prediction records tests/test_r2vc_io.py."""

from __future__ import annotations

import json
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
