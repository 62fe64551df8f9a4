"""R2VC decision rules (issue 27 item 4): the verifier's pick, per-regime thresholds, the Conflicting rule.

Hand-derived values on fake NLI tables; the pipeline tests run the rules end to end
through `R2VCPipeline.run` and the run summary's gated/ungated figures.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.io.formats import ClaimPrediction, averitec_label
from averitec_tools.baselines.r2vc.offline.data import offline_store_settings
from averitec_tools.baselines.r2vc.offline.rules import fit_conflict_rule, fit_regime_thresholds
from averitec_tools.baselines.r2vc.offline.thresholds import fit_nli_thresholds
from averitec_tools.baselines.r2vc.paper_scores import paper_scores
from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
from averitec_tools.baselines.r2vc.stages.calibration.claim_rules import (
    CONFLICTING,
    ClaimRules,
    ConflictRule,
)
from averitec_tools.baselines.r2vc.stages.calibration.decision import decide
from averitec_tools.baselines.r2vc.stages.generation.nli_fallback import NLIFallbackGenerator
from averitec_tools.baselines.r2vc.stages.verification.regimes import RegimeThresholds
from averitec_tools.baselines.r2vc.stages.verification.verifier import verifier_from_config
from averitec_tools.baselines.r2vc.types import Passage
from tests._r2vc_helpers import ListRetriever, TableNLI

S, R, N = "Supported", "Refuted", "Not Enough Evidence"


def _vc(label: str, s_ver: float) -> SimpleNamespace:
    return SimpleNamespace(candidate=SimpleNamespace(label=label, rationale=label), scores=SimpleNamespace(s_ver=s_ver))


def test_select_by_s_ver_keeps_the_verifiers_pick_and_pi_for_the_gate() -> None:
    # π (label prior learned by the calibrator) prefers the False candidate; the verifier the True one.
    verified = [_vc("False", 0.40), _vc("True", 0.90), _vc("False", 0.40)]
    pi = [0.80, 0.55, 0.80]
    by_pi = decide(verified=verified, confidences=pi, tau_cal=0.6, tau_ver=0.3)
    by_ver = decide(verified=verified, confidences=pi, tau_cal=0.6, tau_ver=0.3, select_by="s_ver")
    assert (by_pi.label, by_pi.index, by_pi.abstained) == ("False", 0, False)
    # i* = the max-s_ver candidate; its own π (0.55 < τ_cal) gates it
    assert (by_ver.label, by_ver.index, by_ver.confidence, by_ver.reason) == ("Uncertain", 1, 0.55, "low_confidence")
    kept = decide(verified=verified, confidences=pi, tau_cal=0.6, tau_ver=0.3, select_by="s_ver",
                  on_abstain="candidate")
    assert (kept.label, kept.abstained) == ("True", True)
    with pytest.raises(ValueError, match="select_by"):
        decide(verified=verified, confidences=pi, select_by="vote")


def test_s_ver_ties_go_to_the_larger_pi_then_the_first() -> None:
    verified = [_vc("True", 0.5), _vc("False", 0.5), _vc("True", 0.5)]
    assert decide(verified=verified, confidences=[0.2, 0.9, 0.9], select_by="s_ver").index == 1


def test_conflict_rule_needs_both_extremes() -> None:
    rule = ConflictRule(t_ent=0.7, t_contr=0.6)
    both = np.array([[0.05, 0.15, 0.80], [0.65, 0.30, 0.05]])
    assert rule.applies(both)
    assert not rule.applies(both[:1]) and not rule.applies(both[1:])
    assert not rule.applies(np.zeros((0, 3)))


def test_fit_conflict_rule_by_hand_and_off_when_it_cannot_help() -> None:
    def pool(e: float, c: float) -> np.ndarray:
        return np.array([[0.0, 1.0 - e, e], [c, 1.0 - c, 0.0]])

    probs = [pool(0.9, 0.8), pool(0.9, 0.1), pool(0.1, 0.9), pool(0.3, 0.3)]
    gold = [CONFLICTING, S, R, N]
    labels = [S, S, R, N]
    fit = fit_conflict_rule(probs=probs, labels=labels, gold=gold)
    # Claim 0 alone fires when t_ent ∈ (0.1, 0.9], t_contr ∈ (0.1, 0.8] and not both ≤ 0.3 (claim 3):
    # the first grid point (t_ent outer, t_contr inner) is (0.15, 0.35). Without the rule S F1 = 2/3, R 1, N 1, C 0.
    assert fit.rule == ConflictRule(t_ent=0.15, t_contr=0.35)
    assert fit.macro_f1 == pytest.approx(1.0) and fit.macro_f1_without == pytest.approx((2 / 3 + 2) / 4)
    assert fit.n_fired == 1 and fit.n_claims == 4
    # No Conflicting claim on the slice: firing can only hurt, so the rule stays off.
    off = fit_conflict_rule(probs=probs, labels=labels, gold=[S, S, R, N])
    assert off.rule is None and off.n_fired == 0 and off.macro_f1 == off.macro_f1_without


def test_regimes_split_at_decisiveness_quantiles_and_fit_each() -> None:
    # Weak pools (decisiveness 0.4): the Supported claim reaches ent 0.35 at most → T_ent ≤ 0.35 there.
    # Strong pools: a Not Enough Evidence claim shows ent 0.58 (decisiveness 0.6) → T_ent > 0.58 there.
    weak_s = np.array([[0.05, 0.60, 0.35]])
    weak_r = np.array([[0.35, 0.60, 0.05]])
    strong_s = np.array([[0.02, 0.05, 0.93]])
    strong_n = np.array([[0.02, 0.40, 0.58]])
    probs = [weak_s, weak_r] * 3 + [strong_s, strong_n] * 3
    subsets = [[(0,)]] * len(probs)
    gold = [S, R] * 3 + [S, N] * 3
    glob = fit_nli_thresholds(probs=probs, subsets=subsets, gold=gold)
    fit = fit_regime_thresholds(probs=probs, subsets=subsets, gold=gold, n_regimes=2, global_fit=glob, min_claims=2,
                                fit=fit_nli_thresholds)
    rt = fit.thresholds
    assert rt.edges == (pytest.approx(0.5),)  # median of six 0.4s, three 0.6s and three 0.95s
    assert [rt.regime(p) for p in (weak_s, weak_r, strong_n, strong_s)] == [0, 0, 1, 1]
    assert [r["n_claims"] for r in fit.per_regime] == [6, 6]
    # first grid points reaching each regime's best: weak (0.1, 0.1, 0.0); strong T_ent 0.6 (0.58 < 0.6 ≤ 0.93)
    assert rt.thresholds == ((0.1, 0.1, 0.0), (0.6, 0.1, 0.0))
    # a regime below min_claims keeps the global thresholds
    few = fit_regime_thresholds(probs=probs, subsets=subsets, gold=gold, n_regimes=2, global_fit=glob, min_claims=7,
                                fit=fit_nli_thresholds)
    assert few.thresholds.thresholds == ((glob.t_ent, glob.t_contr, glob.delta),) * 2
    assert all(r["global"] for r in few.per_regime)
    with pytest.raises(ValueError, match="one threshold triple"):
        RegimeThresholds(edges=(0.5,), thresholds=((0.5, 0.5, 0.0),))


def _pred(label: str, *, abstained: bool, rule: str | None) -> ClaimPrediction:
    return ClaimPrediction(claim=ClaimInput(0, "c"), label=label, confidence=0.5, rationale="", cited=(),
                           questions=(), abstained=abstained, reason="", s_ver=0.1, n_candidates=1,
                           n_malformed=0, candidate_label="True", rule_label=rule)


def test_the_rule_label_replaces_the_candidate_unless_abstained_as_uncertain() -> None:
    assert averitec_label(_pred("True", abstained=False, rule=CONFLICTING)) == CONFLICTING
    assert averitec_label(_pred("True", abstained=True, rule=CONFLICTING)) == CONFLICTING  # on_abstain: candidate
    assert averitec_label(_pred("Uncertain", abstained=True, rule=CONFLICTING)) == N  # the paper's abstention
    assert averitec_label(_pred("Uncertain", abstained=False, rule=None)) == N


def test_paper_scores_count_the_rule_in_both_views() -> None:
    claims = [ClaimInput(0, "a", "Uncertain", CONFLICTING), ClaimInput(1, "b", "True", S)]
    recs = [{"pred_label": CONFLICTING, "confidence": 0.9,
             "r2vc": {"abstained": False, "candidate_label": "True", "rule_label": CONFLICTING}},
            {"pred_label": CONFLICTING, "confidence": 0.2,
             "r2vc": {"abstained": True, "candidate_label": "True", "rule_label": CONFLICTING}}]
    s = paper_scores(claims=claims, records=recs)
    assert s["ungated"]["accuracy"] == 0.5 and s["ungated"]["per_label_f1"][CONFLICTING] == pytest.approx(2 / 3)
    assert s["gated_paper"]["accuracy"] == 0.5 and s["gated_paper"]["per_label_f1"][CONFLICTING] == 1.0


PASSAGES = [Passage("a", "A", "https://a.org", "alpha strongly says yes"),
            Passage("b", "B", "https://b.org", "alpha strongly says no"),
            Passage("c", "C", "https://c.org", "alpha weakly hints yes")]
TABLE = {PASSAGES[0].text: (0.05, 0.10, 0.85), PASSAGES[1].text: (0.80, 0.15, 0.05),
         PASSAGES[2].text: (0.10, 0.50, 0.40)}


def _pipe(passages: list[Passage], rules: ClaimRules | None = None) -> R2VCPipeline:
    cfg = R2VCConfig().effective()
    nli = TableNLI(TABLE)
    verifier = verifier_from_config(backend=nli, config=cfg.verifier)
    return R2VCPipeline(retriever=ListRetriever(passages), generator=NLIFallbackGenerator(nli=verifier.nli),
                        verifier=verifier, calibrator=None, config=cfg, rules=rules)


def test_pipeline_applies_the_conflict_rule_to_averitec_claims_only(tmp_path: Path) -> None:
    pipe = _pipe(PASSAGES[:2], ClaimRules.from_fitted({"conflict_rule": {"rule": {"t_ent": 0.8, "t_contr": 0.75}}}))
    averitec = ClaimInput(0, "alpha", "Uncertain", CONFLICTING)
    fever = ClaimInput("f1", "alpha", "Uncertain", "NOT ENOUGH INFO", kind="ternary")
    assert pipe.predict(averitec).rule_label == CONFLICTING
    assert pipe.predict(fever).rule_label is None
    out = tmp_path / "p.json"
    summary = pipe.run([averitec], out=out, output_format="averitec2024", progress=False).to_dict()
    rec = json.loads(out.read_text())[0]
    assert rec["r2vc"]["rule_label"] == CONFLICTING
    assert summary["ungated"]["per_label_f1"][CONFLICTING] == 1.0
    assert summary["claim_rules"] == {"conflict_rule": {"t_ent": 0.8, "t_contr": 0.75}, "n_conflicting": 1}
    # ent 0.85 < 0.9: the rule does not fire
    pipe = _pipe(PASSAGES[:2], ClaimRules(conflict_rule=ConflictRule(t_ent=0.9, t_contr=0.75)))
    assert pipe.predict(averitec).rule_label is None


def test_pipeline_uses_the_regimes_thresholds() -> None:
    claim = ClaimInput(0, "alpha weakly", "True", S)
    pipe = _pipe([PASSAGES[2]])  # decisiveness 0.5, ent 0.40 < paper T_ent 0.60
    assert pipe.predict(claim).candidate_label == "Uncertain"
    pipe = _pipe([PASSAGES[2]], ClaimRules(regime_thresholds=RegimeThresholds(
        edges=(0.7,), thresholds=((0.35, 0.35, 0.0), (0.9, 0.9, 0.1)))))
    pred = pipe.predict(claim)
    assert pred.candidate_label == "True"
    # the verifier judged with the regime's thresholds too: its y_NLI agrees (s_cons 1)
    ev = pipe.evidence_for(claim)
    _, verifier = pipe._stages_for(claim.claim, ev)
    assert verifier.config.t_ent == 0.35 and pipe.verifier.config.t_ent == 0.60


def test_decision_only_settings_do_not_move_the_candidate_store_key() -> None:
    from dataclasses import replace

    from averitec_tools.baselines.r2vc.config import builtin_config

    cfg = builtin_config("offline-minilm")
    other = replace(cfg, offline=replace(cfg.offline, conflict_rule=not cfg.offline.conflict_rule,
                                         threshold_regimes=cfg.offline.threshold_regimes + 1,
                                         target_coverage=cfg.offline.target_coverage / 2,
                                         gate_folds=cfg.offline.gate_folds + 1,
                                         fit_thresholds=not cfg.offline.fit_thresholds))
    assert offline_store_settings(cfg, {})[0] == offline_store_settings(other, {})[0]
    assert offline_store_settings(cfg, {})[0] != offline_store_settings(replace(cfg, offline=replace(
        cfg.offline, epochs=cfg.offline.epochs + 1)), {})[0]


@pytest.mark.parametrize(("key", "value", "message"), [("threshold_regimes", 0, "at least 1"),
                                                       ("target_coverage", 1.5, r"lie in \[0, 1\]")])
def test_out_of_range_decision_settings_are_one_line_errors(key: str, value: float, message: str) -> None:
    from averitec_tools.baselines.r2vc.config import config_from_mapping
    from averitec_tools.errors import UserError

    with pytest.raises(UserError, match=f"cfg.yaml: offline.{key} must .*{message}"):
        config_from_mapping({"base": "offline-minilm", "offline": {key: value}}, source="cfg.yaml")
