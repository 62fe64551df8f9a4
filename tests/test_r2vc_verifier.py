"""R2VC verifier (§3.4): every component checked by hand with a fake NLI backend."""

from __future__ import annotations

import numpy as np
import pytest

from averitec_tools.baselines.r2vc.config import VerifierConfig
from averitec_tools.baselines.r2vc.stages.generation.nli_fallback import NLIFallbackGenerator
from averitec_tools.baselines.r2vc.stages.verification.signals import (
    citation_similarity,
    label_consistency,
    nli_label,
)
from averitec_tools.baselines.r2vc.stages.verification.verifier import Verifier, score_components
from averitec_tools.baselines.r2vc.types import Candidate, Generator, Passage
from averitec_tools.errors import ResourceError
from averitec_tools.nli import (
    CachedNLI,
    HFNLIBackend,
    label_order_from_id2label,
)
from tests._r2vc_helpers import KeywordNLI, TableNLI, save_tiny_nli_model

CLAIM = "Obama was born in 1961 in Hawaii"
P0 = Passage("p0", "Obama", "u0", "Barack Obama was born in Honolulu, Hawaii in 1961.")
P1 = Passage("p1", "Obama", "u1", "Obama served two terms.")
P2 = Passage("p2", "Kenya", "u2", "Obama was born in Kenya in 1962.")
TABLE = {
    P0.text: (0.05, 0.15, 0.80),
    P1.text: (0.10, 0.70, 0.20),
    P2.text: (0.65, 0.25, 0.10),
}


def cand(label: str, citations: tuple[int, ...], passages=(P0, P1, P2)) -> Candidate:
    return Candidate(label, "because", citations, tuple(passages), -0.3, 0)


def test_components_by_hand_true_candidate() -> None:
    v = Verifier(backend=TableNLI(TABLE))
    [r] = v.verify(claim=CLAIM, candidates=[cand("True", (0,))])
    s = r.scores
    assert s.s_ent == pytest.approx(0.80)
    assert s.s_contr == pytest.approx(0.65)
    assert s.s_cov == pytest.approx((0.80 + 0.20 + 0.10) / 3)  # fewer than 6 passages: all
    # claim content tokens {obama, born, 1961, hawaii} all in P0; its number 1961 too
    assert s.s_cit == pytest.approx(1.0)
    assert s.y_nli == "True"  # 0.80 ≥ 0.60 and 0.80 ≥ 0.65 + 0.10
    assert s.s_cons == 1.0
    assert s.s_align == 1.0
    expected = 0.6 * 0.8 + 0.2 * (1.1 / 3) - 0.3 * 0 + 0.1 * 1 + 0.1 * 1 - 0.1 * 0
    assert s.s_ver == pytest.approx(expected)
    assert r.passage_probs.shape == (3, 3)
    assert r.distribution == pytest.approx((0.80, 0.15, 0.05))


def test_false_candidate_disagrees_with_nli_literal() -> None:
    [r] = Verifier(backend=TableNLI(TABLE), config=VerifierConfig(score="literal")).verify(claim=CLAIM, candidates=[cand("False", (2,))])
    assert r.scores.s_cons == 0.0
    assert r.scores.s_ver == pytest.approx(0.6 * 0.8 + 0.2 * (1.1 / 3) + 0.1 * 1.0)


def test_false_candidate_label_aware_by_hand() -> None:
    [r] = Verifier(backend=TableNLI(TABLE)).verify(claim=CLAIM, candidates=[cand("False", (2,))])
    s = r.scores
    # support = max contradiction .65, coverage over contradiction (.05 + .10 + .65) / 3,
    # opposing = max entailment .80 → excess .15; y_NLI True → s_cons 0; P2 is the most
    # contradicting passage → s_align 1; s_cit = 1 (P0 still in the subset)
    assert (s.s_ent, s.s_contr, s.s_cons, s.s_align) == (pytest.approx(0.8), pytest.approx(0.65), 0.0, 1.0)
    assert s.s_cov == pytest.approx(0.8 / 3)
    assert s.s_ver == pytest.approx(0.6 * 0.65 + 0.2 * (0.8 / 3) - 0.3 * 0.15 + 0 + 0.1 * 1 - 0)


def test_clean_refutation_passes_tau_ver_only_when_label_aware() -> None:
    table = {P2.text: (0.92, 0.05, 0.03), P1.text: (0.10, 0.85, 0.05)}
    c = cand("False", (0,), passages=(P2, P1))
    [aware] = Verifier(backend=TableNLI(table)).verify(claim=CLAIM, candidates=[c])
    [literal] = Verifier(backend=TableNLI(table), config=VerifierConfig(score="literal")).verify(claim=CLAIM, candidates=[c])
    assert aware.scores.y_nli == "False" and aware.scores.s_cons == 1.0
    assert aware.scores.s_ver >= 0.55 > literal.scores.s_ver
    # the literal bound for y_NLI = False: s_ver ≤ 0.8·s_ent + 0.17
    assert literal.scores.s_ver <= 0.8 * literal.scores.s_ent + 0.17 + 1e-12


def test_true_candidate_identical_in_both_modes() -> None:
    c = cand("True", (0,))
    a = Verifier(backend=TableNLI(TABLE)).verify(claim=CLAIM, candidates=[c])[0].scores
    b = Verifier(backend=TableNLI(TABLE), config=VerifierConfig(score="literal")).verify(claim=CLAIM, candidates=[c])[0].scores
    assert a == b


def test_excess_contradiction_and_uncertain_consistency() -> None:
    table = {P0.text: (0.9, 0.05, 0.05), P1.text: (0.2, 0.5, 0.3)}
    c = cand("Uncertain", (), passages=(P0, P1))
    [r] = Verifier(backend=TableNLI(table), config=VerifierConfig(score="literal")).verify(claim="zzz", candidates=[c])
    s = r.scores
    assert (s.s_ent, s.s_contr, s.y_nli) == (pytest.approx(0.3), pytest.approx(0.9), "False")
    assert s.s_cons == 0.5 and s.s_align == 0.0 and s.s_cit == 0.0
    assert s.s_ver == pytest.approx(0.6 * 0.3 + 0.2 * 0.175 - 0.3 * 0.6 + 0.1 * 0.5 + 0 - 0.1)
    # label-aware Uncertain: support 1 − .9, coverage over neutral (.05 + .5) / 2, opposing .9
    [r] = Verifier(backend=TableNLI(table)).verify(claim="zzz", candidates=[c])
    assert r.scores.s_ver == pytest.approx(0.6 * 0.1 + 0.2 * 0.275 - 0.3 * 0.8 + 0.1 * 0.5 + 0 - 0.1)


def test_unknown_score_mode_refused() -> None:
    with pytest.raises(ValueError, match="score"):
        Verifier(backend=TableNLI(TABLE), config=VerifierConfig(score="fancy"))


def test_coverage_uses_top6_and_alignment_against_them() -> None:
    ents = [0.9, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.05]
    passages = tuple(Passage(f"d{i}", "t", "u", f"text {i}") for i in range(8))
    probs = np.array([[0.0, 1 - e, e] for e in ents])
    c = Candidate("True", "r", (1, 7), passages, None, 0)
    s = score_components(claim="c", candidate=c, passage_probs=probs)
    assert s.s_cov == pytest.approx((0.9 + 0.6 + 0.5 + 0.4 + 0.3 + 0.2) / 6)
    assert s.s_align == 0.0  # passages 1 and 7 are not among the 6 most entailing
    c2 = Candidate("True", "r", (0, 1), passages, None, 0)
    assert score_components(claim="c", candidate=c2, passage_probs=probs).s_align == 0.5


def test_candidate_without_passages() -> None:
    s = score_components(claim="c", candidate=Candidate("True", "", (), (), None, 0),
                         passage_probs=np.zeros((0, 3)))
    assert (s.s_ent, s.s_cov, s.y_nli, s.s_cons) == (0.0, 0.0, "Uncertain", 0.5)
    assert s.s_ver == pytest.approx(0.1 * 0.5 - 0.1)


@pytest.mark.parametrize(
    ("ent", "contr", "label"),
    [(0.6, 0.5, "True"), (0.6, 0.51, "Uncertain"), (0.59, 0.0, "Uncertain"),
     (0.1, 0.6, "False"), (0.55, 0.6, "Uncertain"), (0.0, 0.0, "Uncertain")],
)
def test_nli_label_thresholds(ent: float, contr: float, label: str) -> None:
    assert nli_label(s_ent=ent, s_contr=contr) == label


def test_label_consistency_table() -> None:
    assert label_consistency(generated="False", nli="False") == 1.0
    assert label_consistency(generated="Uncertain", nli="True") == 0.5
    assert label_consistency(generated="False", nli="True") == 0.0


def test_citation_similarity_numbers_and_overlap() -> None:
    assert citation_similarity(claim="GDP grew 3.5% in 2019", passage="In 2019 GDP grew 3.5 percent") == 1.0
    # numbers differ: overlap 2/4 of {gdp, grew, 3.5, 2019}... numeric 1/2
    assert citation_similarity(claim="GDP grew 3.5% in 2019", passage="GDP grew 2% in 2019") == pytest.approx(
        0.5 * (3 / 4) + 0.5 * (1 / 2)
    )
    assert citation_similarity(claim="the of", passage="the of") == 0.0


def test_cache_batches_pairs_once_across_candidates() -> None:
    backend = TableNLI(TABLE)
    v = Verifier(backend=backend)
    cands = [cand("True", (0,)), cand("False", (2,), passages=(P2, P0)), cand("True", (0,), passages=(P1,))]
    v.verify(claim=CLAIM, candidates=cands)
    v.verify(claim=CLAIM, candidates=cands)
    assert backend.calls == [3]  # three distinct passages, one batched call, then cache hits
    assert v.nli.misses == 3


def test_cached_nli_rejects_wrong_shape() -> None:
    class Bad:
        name = "bad"

        def predict(self, pairs):
            return np.zeros((len(pairs), 2))

    with pytest.raises(ValueError, match="shape"):
        CachedNLI(Bad()).probs("c", ["x"])


def test_label_order_read_from_config() -> None:
    assert label_order_from_id2label({0: "CONTRADICTION", 1: "ENTAILMENT", 2: "NEUTRAL"}, model_id="m") == [0, 2, 1]
    with pytest.raises(ResourceError, match="label order"):
        label_order_from_id2label({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, model_id="m")


def test_hf_backend_reorders_columns_from_id2label(tmp_path) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    path = save_tiny_nli_model(tmp_path / "nli")  # id2label: 0 entailment, 1 neutral, 2 contradiction
    pairs = [("zorbland won", "it is confirmed"), ("quuxia", "is false"), ("a", "b")]
    tok = AutoTokenizer.from_pretrained(path)
    model = AutoModelForSequenceClassification.from_pretrained(path).eval()
    for order, (first, second) in {"evidence-claim": (1, 0), "claim-evidence": (0, 1)}.items():
        backend = HFNLIBackend(model_id=str(path), device="cpu", batch_size=2, pair_order=order)
        got = backend.predict(pairs)
        with torch.inference_mode():
            enc = tok([x[first] for x in pairs], [x[second] for x in pairs], padding=True, return_tensors="pt")
            ref = torch.softmax(model(**enc).logits, -1).numpy()
        np.testing.assert_allclose(got, ref[:, [2, 1, 0]], atol=1e-5)
        np.testing.assert_allclose(got.sum(1), 1.0, atol=1e-6)
    assert HFNLIBackend(model_id=str(path), device="cpu").pair_order == "evidence-claim"  # default
    with pytest.raises(ValueError, match="pair_order"):
        HFNLIBackend(model_id=str(path), device="cpu", pair_order="hypothesis-first")


def test_hf_backend_generic_labels_refused(tmp_path) -> None:
    path = save_tiny_nli_model(tmp_path / "nli", id2label={0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    with pytest.raises(ResourceError, match="id2label"):
        HFNLIBackend(model_id=str(path), device="cpu")


def test_hf_backend_missing_model_offline_fails_without_network(monkeypatch) -> None:
    # Offline, a missing model is a ResourceError before any lookup or connection is tried
    # (how long that takes: benchmarks/bench_offline_failure.py).
    import socket

    attempts: list[str] = []

    def refuse(what: str):  # type: ignore[no-untyped-def]
        def call(*args, **kwargs):  # type: ignore[no-untyped-def]
            attempts.append(f"{what}{args[-1:]!r}")
            raise OSError("network disabled in this test")
        return call

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket.socket, "connect", refuse("connect"))
    with pytest.raises(ResourceError, match="cannot load model 'no-such-org/no-such-nli'"):
        HFNLIBackend(model_id="no-such-org/no-such-nli", device="cpu")
    assert attempts == []


def test_nli_fallback_generator_protocol_and_labels() -> None:
    gen = NLIFallbackGenerator(nli=KeywordNLI(), subset_size=2)
    assert isinstance(gen, Generator)
    ev = [Passage("a", "A", "u", "confirmed yes"), Passage("b", "B", "u", "nothing"),
          Passage("c", "C", "u", "this is false")]
    res = gen.generate("claim", ev, k=6, seed=1)
    assert len(res.candidates) == 6 and res.n_malformed == 0
    for c in res.candidates:
        texts = {p.text for p in c.passages}
        assert len(texts) == 2
        has_ent, has_con = "confirmed yes" in texts, "this is false" in texts
        # both present: 0.9 vs 0.9 → no margin → Uncertain
        expected = "Uncertain" if has_ent == has_con else ("True" if has_ent else "False")
        assert c.label == expected
        assert c.mean_logprob == pytest.approx(np.log(0.9 if expected != "Uncertain" else 0.1))
        cited = c.cited_passages[0].text
        if expected == "True":
            assert cited == "confirmed yes"
        elif expected == "False":
            assert cited == "this is false"
    again = gen.generate("claim", ev, k=6, seed=1)
    assert again == res  # seeded and reproducible
    assert gen.generate("claim", [], k=4, seed=0).candidates == ()
