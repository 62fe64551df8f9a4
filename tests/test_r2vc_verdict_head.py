"""The offline configuration's verdict head (issue 37): wiring, choice on the slice, leak guard.

Tiny inline fixtures with hand-derived values; no model is loaded (the probe is a stub).
"""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest

from averitec_tools.baselines._run.claim_head import ClaimHead
from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.io.formats import (
    ClaimPrediction,
    averitec_label,
    to_averitec2024,
)
from averitec_tools.baselines.r2vc.offline import head as head_mod
from averitec_tools.baselines.r2vc.paper_scores import paper_scores
from averitec_tools.baselines.r2vc.stages.calibration.verdict_head import HEAD_FEATURES, VerdictHead
from averitec_tools.errors import UserError

NAMES = HEAD_FEATURES["prior+pool"]


class StubPrior:
    """A probe that gives every claim the same probabilities (S, R, NEE, C)."""

    def __init__(self, p: list[float]) -> None:
        self.p = np.array([p])

    def predict_texts(self, texts: list[str]) -> np.ndarray:
        return np.repeat(self.p, len(texts), axis=0)


def _head(*, w_ent: float, intercept: list[float]) -> ClaimHead:
    """Logits = intercept + w_ent·ent_max (S row) + 1·log_prior_R (R row); no scaling."""
    coef = np.zeros((4, len(NAMES)))
    coef[0, NAMES.index("ent_max")] = w_ent
    coef[1, NAMES.index("log_prior_1")] = 1.0
    return ClaimHead(features=NAMES, mean=np.zeros(len(NAMES)), scale=np.ones(len(NAMES)), coef=coef,
                     intercept=np.array(intercept), offsets=np.zeros(4), c=1.0)


def _apply(vh: VerdictHead, pred: ClaimPrediction, probs: np.ndarray, *, gate: bool, on_abstain: str
           ) -> ClaimPrediction:
    """As the pipeline applies the head to a claim's prediction."""
    v = vh.verdict(pred.claim.claim, probs, gate=gate)
    return dataclasses.replace(pred, **v.fields(on_abstain=on_abstain))


def _pred(claim_id: int, gold: str) -> ClaimPrediction:
    claim = ClaimInput(claim_id=claim_id, claim=f"claim {claim_id}", gold_label_raw=gold)
    return ClaimPrediction(claim=claim, label="False", confidence=0.9, rationale="", cited=(), questions=(),
                           abstained=False, reason="accepted", s_ver=0.7, n_candidates=16, n_malformed=0,
                           candidate_label="False", rule_label="Conflicting Evidence/Cherrypicking")


def test_the_head_decides_label_confidence_and_gate() -> None:
    # prior R = 0.5 → log 0.5 = −0.693 on the R row; S row: 5·ent_max.
    vh = VerdictHead(head=_head(w_ent=5.0, intercept=[0.0, 0.0, -9.0, -9.0]), prior=StubPrior([0.2, 0.5, 0.2, 0.1]),
                     tau=0.7, pool=4)
    strong = np.array([[0.0, 0.2, 0.8]])  # ent_max 0.8: logits S 4.0, R −0.693 → p(S) = 1/(1+e^−4.693) = 0.9909
    out = _apply(vh, _pred(0, "Supported"), strong, gate=True, on_abstain="candidate")
    assert out.head_label == "Supported" and out.confidence == pytest.approx(0.99093, abs=1e-4)
    assert not out.abstained and out.rule_label is None and out.candidate_label == "False"
    assert averitec_label(out) == "Supported" and out.s_ver == 0.7
    # ent_max 0.1: S 0.5, R −0.693 → p(S) = 1/(1+e^−1.193) = 0.7673 ≥ 0.7: accepted
    weak = _apply(vh, _pred(1, "Refuted"), np.array([[0.0, 0.9, 0.1]]), gate=True, on_abstain="candidate")
    assert weak.head_label == "Supported" and weak.confidence == pytest.approx(0.76725, abs=1e-4)
    # nothing retrieved: S 0, R −0.693, NEE = C = −9 → p(S) = 1/(1 + 0.5 + 2e^−9) = 0.66656 < 0.7:
    # abstains, keeps the head's label ...
    empty = _apply(vh, _pred(2, "Refuted"), np.zeros((0, 3)), gate=True, on_abstain="candidate")
    assert empty.abstained and empty.head_label == "Supported" and averitec_label(empty) == "Supported"
    assert empty.confidence == pytest.approx(1 / (1.5 + 2 * np.exp(-9)), abs=1e-12) and "0.667 < tau 0.700" in empty.reason
    # ... or as Uncertain (Not Enough Evidence); with the gates off it never abstains
    unc = _apply(vh, _pred(2, "Refuted"), np.zeros((0, 3)), gate=True, on_abstain="uncertain")
    assert unc.label == "Uncertain" and averitec_label(unc) == "Not Enough Evidence"
    assert not _apply(vh, _pred(2, "Refuted"), np.zeros((0, 3)), gate=False, on_abstain="uncertain").abstained
    # a candidate decision that said Uncertain does not make the head's abstention an Uncertain one
    unsure = dataclasses.replace(_pred(3, "Refuted"), label="Uncertain", candidate_label="Uncertain")
    assert averitec_label(_apply(vh, unsure, np.zeros((0, 3)), gate=True, on_abstain="candidate")) == "Supported"

    records = [to_averitec2024(p) for p in (out, weak, empty)]
    assert [r["r2vc"]["head_label"] for r in records] == ["Supported"] * 3
    s = paper_scores(claims=[p.claim for p in (out, weak, empty)], records=records)
    assert s["ungated"]["accuracy"] == pytest.approx(1 / 3)  # the head's labels, not the candidates' (Refuted)
    assert s["gated_paper"]["per_label_f1"]["Not Enough Evidence"] == 0.0  # the abstention scored as NEE
    assert s["selective"]["coverage"] == pytest.approx(2 / 3) and s["selective"]["covered_accuracy"] == 0.5


def test_the_pipeline_decides_averitec_claims_with_the_head() -> None:
    from averitec_tools.baselines.r2vc.config import R2VCConfig
    from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
    from averitec_tools.baselines.r2vc.stages.generation.nli_fallback import NLIFallbackGenerator
    from averitec_tools.baselines.r2vc.stages.verification.verifier import Verifier
    from averitec_tools.baselines.r2vc.types import Passage, ScoredPassage

    class Retriever:
        name = "fixed"

        def search(self, queries: list[str], *, k: int) -> list[list[ScoredPassage]]:
            return [[ScoredPassage(Passage("a", "t", "http://p", "text"), 1.0)] for _ in queries]

    class NLI:
        name = "fake"

        def predict(self, pairs: list[tuple[str, str]]) -> np.ndarray:
            return np.array([[0.9, 0.05, 0.05]] * len(pairs))  # contradiction: the candidates say False

    vh = VerdictHead(head=_head(w_ent=5.0, intercept=[2.0, 0.0, -9.0, -9.0]), prior=StubPrior([0.2, 0.5, 0.2, 0.1]),
                     tau=0.0, pool=4)
    kw: dict[str, Any] = {"retriever": Retriever(), "generator": NLIFallbackGenerator(nli=NLI()),
                          "verifier": Verifier(backend=NLI()), "calibrator": None, "config": R2VCConfig()}
    averitec, fever = ClaimInput(0, "c", gold_label_raw="Refuted"), ClaimInput(1, "c", "False", kind="ternary")
    with_head = R2VCPipeline(**kw, verdict_head=vh)
    # ent_max 0.05: logits S 2.25, R −0.693 → Supported, p = 1/(1+e^−2.943) = 0.9499
    pred = with_head.predict(averitec)
    assert (pred.head_label, pred.candidate_label) == ("Supported", "False")
    assert pred.confidence == pytest.approx(0.94995, abs=1e-4)
    assert with_head.predict(fever).head_label is None  # three-label claims keep the candidate decision
    assert R2VCPipeline(**kw).predict(averitec).head_label is None


def test_the_choice_keeps_the_probes_accuracy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The highest macro-F1 among settings at least as accurate as the probe; none: the most accurate."""
    y = np.array([1, 1, 1, 1, 0, 0, 2, 3])
    probe = np.log(np.tile([0.1, 0.7, 0.1, 0.1], (8, 1)))  # always Refuted: accuracy 0.5
    preds = {("none", 1.0): [1, 1, 1, 1, 0, 1, 1, 1],       # acc 5/8, macro-F1 (0.8 + 0.667)/4 = 0.367
             ("macro-f1", 1.0): [1, 1, 0, 0, 0, 0, 2, 3],   # acc 6/8, macro-F1 (0.667 + 0.667 + 1 + 1)/4
             ("macro-f1", 0.1): [0, 0, 0, 0, 0, 0, 2, 3]}   # acc 4/8 < the probe's: not eligible
    monkeypatch.setattr(head_mod, "out_of_fold", lambda X, y, *, names, groups, c, objective, seed, **_: (
        np.array(preds[(objective, c)]), np.linspace(1.0, 0.3, 8)))
    monkeypatch.setattr(head_mod, "fit_head", lambda *a, **k: _head(w_ent=0.0, intercept=[0.0] * 4))
    X = np.zeros((8, len(NAMES)))
    fit = head_mod.choose_head(X, y, names=NAMES, groups=np.arange(8), probe=probe, c_grid=(1.0,),
                               objectives=("none", "macro-f1"), seeds=1, target_coverage=0.5)
    assert fit.info["chosen"] == {"c": 1.0, "objective": "macro-f1"} and fit.info["cross_validation"]["probe"][
        "accuracy"] == 0.5
    assert fit.tau == pytest.approx(0.7)  # the 4th highest of 1.0, 0.9, ..., 0.3: coverage 4/8
    assert fit.info["slice"]["covered_accuracy"] == 0.5  # claims 0-3 predicted R, R, S, S for gold R
    low = head_mod.choose_head(X, y, names=NAMES, groups=np.arange(8), probe=np.log(np.eye(4)[y] * 0.97 + 0.01),
                               c_grid=(0.1,), objectives=("macro-f1",), seeds=1, target_coverage=0.5)
    assert low.info["rule"].startswith("no setting kept")


def test_the_head_never_fits_on_a_scored_claim(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """Leak guard: a slice holding a scored claim's normalised twin is refused, and the prior the
    head fits on is the probe's out-of-fold rows of the slice claims, read by training index."""
    train = [SimpleNamespace(claim=t, label=lab, fact_checking_article=None)
             for t, lab in [("Cats purr.", "Supported"), ("Dogs fly.", "Refuted"), ("Fish sing.", "Refuted")]]
    claims = [ClaimInput(claim_id=f"train:{i}", claim=train[i].claim) for i in (0, 2)]
    pools = [np.array([[0.1, 0.1, 0.8]]), np.array([[0.8, 0.1, 0.1]])]
    off = SimpleNamespace(verdict_head="prior+pool", head_c_grid=(1.0,), head_objectives=("none",), head_cv_seeds=1,
                          target_coverage=0.5)

    class Prior:
        asked: list[list[int]] = []

        def training_proba(self, index: list[int]) -> np.ndarray:
            self.asked.append(list(index))
            return np.full((len(index), 4), 0.25)

    seen: dict[str, Any] = {}

    def spy(X: np.ndarray, y: np.ndarray, **kw: Any) -> head_mod.HeadFit:
        seen.update(X=X, y=y)
        return head_mod.HeadFit(head=_head(w_ent=0.0, intercept=[0.0] * 4), tau=0.0, info={})

    monkeypatch.setattr(head_mod, "choose_head", spy)
    prior = Prior()
    with pytest.raises(UserError, match="slice claim 1 .*'Fish sing.'.* scored claim's normalised twin"):
        head_mod.fit_slice_head(claims=claims, pools=pools, train=train, scored=["fish  SING"], prior=prior, pool=2,
                                off=off, cache_file=tmp_path / "h.json")
    assert prior.asked == [] and not seen
    head_mod.fit_slice_head(claims=claims, pools=pools, train=train, scored=["Dogs fly."], prior=prior, pool=2,
                            off=off, cache_file=tmp_path / "h.json")
    assert prior.asked == [[0, 2]] and seen["y"].tolist() == [0, 1]  # Supported, Refuted: the slice's labels
    assert seen["X"][:, NAMES.index("ent_max")].tolist() == [0.8, 0.1]


def test_the_head_settings_are_checked_and_fingerprinted() -> None:
    from averitec_tools.baselines.r2vc.config import config_from_mapping, resolve_config

    cfg = config_from_mapping({"base": "offline-minilm", "offline": {"head_c_grid": [0.5], "head_cv_seeds": 1}},
                              source="c.yaml")
    assert cfg.offline.head_c_grid == (0.5,) and cfg.offline.verdict_head == "prior+pool"
    assert cfg.fingerprint() != resolve_config("offline-minilm").fingerprint()  # the grid is in the fingerprint
    for bad, match in [({"verdict_head": "knn"}, "verdict_head"), ({"head_objectives": ["accuracy"]}, "accuracy"),
                       ({"head_c_grid": [0.0]}, "positive"), ({"head_cv_seeds": 0}, "at least 1")]:
        with pytest.raises(UserError, match=match):
            config_from_mapping({"base": "offline-minilm", "offline": bad}, source="c.yaml")
    assert resolve_config("offline-minilm-rules").offline.verdict_head == "off"


def test_extra_fitting_claims_are_fitted_on_never_scored(monkeypatch: pytest.MonkeyPatch) -> None:
    """``offline.head_extra_claims``: rows after ``n_slice`` enter every fold's fit, while the
    choice, the probe's accuracy to keep, the gate and the offsets read the slice rows alone."""
    y = np.array([1, 1, 0, 0, 2, 2, 2, 2])  # 4 slice rows, then 4 extra rows
    probe = np.log(np.tile([0.1, 0.7, 0.1, 0.1], (8, 1)))  # Refuted: slice accuracy 0.5, extra rows 0
    seen: dict[str, Any] = {}

    def oof(X: np.ndarray, y: np.ndarray, *, offset_rows: np.ndarray, **_: Any) -> tuple[np.ndarray, np.ndarray]:
        seen["oof_rows"] = offset_rows.tolist()
        return np.array([1, 1, 0, 1, 0, 0, 0, 0]), np.array([0.9, 0.8, 0.7, 0.6, 1.0, 1.0, 1.0, 1.0])

    def fit(*a: Any, offset_rows: np.ndarray, **_: Any) -> ClaimHead:
        seen["fit_rows"] = offset_rows.tolist()
        return _head(w_ent=0.0, intercept=[0.0] * 4)

    monkeypatch.setattr(head_mod, "out_of_fold", oof)
    monkeypatch.setattr(head_mod, "fit_head", fit)
    got = head_mod.choose_head(np.zeros((8, len(NAMES))), y, names=NAMES, groups=np.arange(8), probe=probe,
                               c_grid=(1.0,), objectives=("none",), seeds=1, target_coverage=0.5, n_slice=4)
    cv = got.info["cross_validation"]
    assert cv["probe"]["accuracy"] == 0.5 and cv["grid"][0]["accuracy"] == 0.75  # 3 of the 4 slice rows
    assert cv["fitted_on_extra_claims"] == 4 and got.info["fit_claims"] == 8 and got.info["slice"]["claims"] == 4
    assert got.tau == pytest.approx(0.8)  # the slice rows' 2nd highest confidence, not the extra rows' 1.0
    assert seen["oof_rows"] == seen["fit_rows"] == [True] * 4 + [False] * 4


def test_head_offsets_fit_on_the_rows_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools.baselines._run import claim_head

    p = np.array([[0.45, 0.55, 0.0, 0.0]] * 2 + [[0.3, 0.7, 0.0, 0.0]] * 2)  # out of fold: Refuted everywhere
    monkeypatch.setattr(claim_head, "out_of_fold_head_proba", lambda *a, **k: p)
    X, y = np.array([[0.0], [1.0], [2.0], [3.0]]), np.array([0, 0, 1, 1])
    every = claim_head.fit_head(X, y, names=("x",), groups=np.arange(4), objective="macro-f1")
    first = claim_head.fit_head(X, y, names=("x",), groups=np.arange(4), objective="macro-f1",
                                offset_rows=np.array([False, False, True, True]))
    # every row: S's offset in (log 0.55/0.45, log 0.7/0.3) = (0.20, 0.85) separates S from R; the grid's smallest
    assert every.offsets.tolist() == [0.25, 0.0, 0.0, 0.0]
    assert first.offsets.tolist() == [0.0, 0.0, 0.0, 0.0]  # rows 2, 3 (both Refuted): the arg-max is already best


def test_extra_head_claims_are_verifier_claims_only() -> None:
    from averitec_tools.baselines.r2vc.config import config_from_mapping, resolve_config
    from averitec_tools.baselines.r2vc.offline.inputs import training_plan
    from averitec_tools.records.averitec import AVeriTeCClaim

    train = [AVeriTeCClaim(claim=t, label="Refuted") for t in [*"abcdef", " "]] + [AVeriTeCClaim(claim="g")]
    plan = training_plan(train=train, scored=["B"], n_calibration=2, seed=0,
                         pseudo_test=np.array([0, 0, 0, 0, 0, 1, 0, 0], dtype=bool))
    got = {c.claim for c in plan.head_claims(train, n=10, seed=0)}
    held = {train[i].claim for i in np.flatnonzero(plan.held)}
    assert got and got == set("acde") - held  # no twin of a scored claim (b), no pseudo-test (f), no empty text, no unlabelled (g)
    assert [c.claim for c in plan.head_claims(train, n=1, seed=0)] == [c.claim for c in plan.head_claims(
        train, n=2, seed=0)][:1]  # a larger n extends the same seeded order
    base = resolve_config("offline-minilm")
    more = config_from_mapping({"base": "offline-minilm", "offline": {"head_extra_claims": 7}}, source="c.yaml")
    assert more.offline.head_extra_claims == 7 and more.fingerprint() != base.fingerprint()
    with pytest.raises(UserError, match="head_extra_claims must be at least 0"):
        config_from_mapping({"base": "offline-minilm", "offline": {"head_extra_claims": -1}}, source="c.yaml")


def test_extra_pools_missing_from_the_store_are_decoded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The preset retrieves and scores only the extra claims the slice's store lacks."""
    from averitec_tools.baselines.r2vc.offline import fit as fit_mod
    from averitec_tools.baselines.r2vc.offline import preset

    decoded: list[str] = []

    class Decoder:
        def decode(self, claim: ClaimInput) -> None:
            decoded.append(str(claim.claim_id))

    monkeypatch.setattr(fit_mod, "nli_pipeline", lambda *a, **k: Decoder())
    store = SimpleNamespace(get=lambda c: None if c.claim_id == "train:2" else object())
    claims = [ClaimInput(claim_id=f"train:{i}", claim=f"c{i}") for i in (1, 2, 3)]
    env: Any = SimpleNamespace(retriever=None)
    verifier: Any = SimpleNamespace(nli=None)
    cfg: Any = None
    preset._decode_missing(cfg, env, verifier, store, claims, progress=False)
    assert decoded == ["train:2"]
    preset._decode_missing(cfg, env, verifier, SimpleNamespace(get=lambda c: object()), claims, progress=False)
    assert decoded == ["train:2"]  # all stored: nothing decoded, no pipeline built
