"""The leak guard of both offline baselines (issue 27, part 1): one normaliser decides duplicates,
a scored claim's twin never trains or fits anything, its own answers (by normalised text and
by its own fact-checking article) never reach its evidence, and shuffling the scored claims'
labels leaves every training/fitting input — hashed — unchanged (no model is trained here)."""

from __future__ import annotations

import json
import random
from dataclasses import replace
from pathlib import Path

import pytest

from averitec_tools.baselines.r2vc.corpus.averitec_answers import answer_passages
from averitec_tools.baselines.r2vc.offline.inputs import (
    ExcludeOwnRetriever,
    offline_plan,
    own_evidence,
)
from averitec_tools.baselines.r2vc.types import Passage, ScoredPassage
from averitec_tools.leakage.duplicates import normalise_claim, page_key
from averitec_tools.records.averitec import AVeriTeCClaim

LABELS = ["Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking"]


def _claim(i: int, text: str, label: str, *, article: str | None = None, url: str | None = None) -> dict:
    return {"claim": text, "label": label, "fact_checking_article": article, "justification": f"because {i} holds",
            "questions": [{"question": f"q{i}?", "answers": [
                {"answer": f"Answer {i} holds.", "answer_type": "Extractive",
                 "source_url": url or f"https://src.org/{i}"},
                {"answer": "Yes", "answer_type": "Boolean", "boolean_explanation": f"Claim {i} holds.",
                 "source_url": f"https://other.org/{i}"}]}]}


TWIN_TRAIN = "India’s GDP grew by 8% in 2023."
TWIN_DEV = "india's GDP grew by 8 % in 2023"


def _train_rows() -> list[dict]:
    rows = [_claim(i, f"Training claim number {i} about topic {i}.", LABELS[i % 2]) for i in range(12)]
    rows[3] = _claim(3, TWIN_TRAIN, "Refuted")
    # answer 5 comes from dev claim 1's own fact-checking article
    rows[5] = _claim(5, "Unrelated training claim five.", "Supported", url="https://www.factcheck.org/fc/dev-1/")
    return rows


def _dev_rows() -> list[dict]:
    return [_claim(100, TWIN_DEV, "Refuted"),
            _claim(101, "Dev claim with its own article.", "Supported",
                   article="https://web.archive.org/web/2021/https://factcheck.org/fc/dev-1"),
            _claim(102, "A third dev claim.", "Not Enough Evidence")]


def _records(rows: list[dict], where: str) -> list[AVeriTeCClaim]:
    return [AVeriTeCClaim.from_dict(r, where=f"{where}[{i}]", claim_id=i) for i, r in enumerate(rows)]


def _shuffled_labels(rows: list[dict], seed: int) -> list[dict]:
    labels = [r["label"] for r in rows]
    random.Random(seed).shuffle(labels)
    out = [dict(r, label=lab) for r, lab in zip(rows, labels, strict=True)]
    if [r["label"] for r in out] == [r["label"] for r in rows]:  # make sure something moved
        out = [dict(r, label=LABELS[(LABELS.index(r["label"]) + 1) % 4]) for r in rows]
    return out


# ------------------------------------------------------------------ the normaliser


def test_normaliser_folds_unicode_case_punctuation_and_whitespace() -> None:
    assert normalise_claim("India’s") == normalise_claim("India's") == "india s"
    assert normalise_claim(TWIN_TRAIN) == normalise_claim(TWIN_DEV)
    assert normalise_claim("ＡＢＣ\u00a0 def") == "abc def"  # NFKC: full-width letters, no-break space
    assert normalise_claim("Indian GDP") != normalise_claim("India GDP")


def test_page_key_unwraps_archive_and_folds_host_and_slash() -> None:
    assert page_key("https://web.archive.org/web/2021/https://factcheck.org/fc/dev-1") == \
        page_key("http://www.FactCheck.org/fc/dev-1/") == "factcheck.org/fc/dev-1"
    assert page_key("https://factcheck.org/fc/dev-2") != page_key("https://factcheck.org/fc/dev-1")


# ------------------------------------------------------------------ R2VC (offline-minilm)


def test_planted_punctuation_twin_is_dropped_from_every_training_and_fitting_set() -> None:
    train, dev = _records(_train_rows(), "train"), _records(_dev_rows(), "dev")
    for n_cal in (0, 12):  # the twin on the verifier side, then on the calibration-slice side
        plan = offline_plan(train=train, dev=dev, scored=[], n_calibration=n_cal, seed=0)
        assert plan.dropped == [3] and plan.leak_guard == {"train_duplicates_dropped": 1}
        assert not plan.verifier_use[3]
        assert TWIN_TRAIN not in [c.claim for c in plan.slice_claims(train)]
    assert len(offline_plan(train=train, dev=dev, scored=[], n_calibration=12, seed=0).slice_claims(train)) == 11


def test_run_claims_are_scored_claims_too() -> None:
    train = _records(_train_rows(), "train")
    plan = offline_plan(train=train, dev=[], scored=["training claim NUMBER 7 about topic 7"], n_calibration=0, seed=0)
    assert plan.dropped == [7]


def _fake_retriever(doc_ids: list[str]) -> object:
    class R:
        name = "fake"

        def search(self, queries, *, k):
            return [[ScoredPassage(Passage(d, "", "", d), 1.0) for d in doc_ids][:k] for _ in queries]

    return R()


def test_exclude_own_evidence_removes_twin_answers_and_own_article_answers() -> None:
    train, dev = _records(_train_rows(), "train"), _records(_dev_rows(), "dev")
    tp, dp = answer_passages(train, split="train"), answer_passages(dev, split="dev")
    own = own_evidence([(train, tp), (dev, dp)])
    all_ids = [p.doc_id for _, p in tp + dp]
    ex = ExcludeOwnRetriever(base=_fake_retriever(all_ids), own=own)
    twin_hits = {h.passage.doc_id for h in ex.search([TWIN_DEV], k=len(all_ids))[0]}
    # the punctuation twin's answers (train claim 3) and its own (dev 0) are gone, nothing else
    assert twin_hits == set(all_ids) - {"averitec-train-3-q0-a0", "averitec-train-3-q0-a1",
                                        "averitec-dev-0-q0-a0", "averitec-dev-0-q0-a1"}
    art_hits = {h.passage.doc_id for h in ex.search([dev[1].claim], k=len(all_ids))[0]}
    assert "averitec-train-5-q0-a0" not in art_hits  # from dev 1's fact-checking article
    assert "averitec-train-5-q0-a1" in art_hits  # same training claim, another source: kept
    # dev 0: its 2 + its twin's 2; dev 1 and dev 2: their 2 each
    assert own.counts([c.claim for c in dev]) == {"own_answers_removed": 8, "own_article_answers_removed": 1,
                                                  "sibling_answers_removed": 0}


def test_sibling_claims_of_one_fact_checking_article_never_see_each_others_answers() -> None:
    rows = _train_rows()
    for i in (7, 8):  # two training claims checked in one article; 9 in another
        rows[i]["fact_checking_article"] = "https://factcheck.org/fc/train-7-8"
    rows[9]["fact_checking_article"] = "https://factcheck.org/fc/train-9"
    train = _records(rows, "train")
    tp = answer_passages(train, split="train")
    own = own_evidence([(train, tp)])
    ex = ExcludeOwnRetriever(base=_fake_retriever([p.doc_id for _, p in tp]), own=own)
    hits = {h.passage.doc_id for h in ex.search([train[7].claim], k=len(tp))[0]}
    assert not {d for d in hits if d.startswith(("averitec-train-7-", "averitec-train-8-"))}
    assert {"averitec-train-9-q0-a0", "averitec-train-9-q0-a1"} <= hits
    assert own.counts([train[7].claim]) == {"own_answers_removed": 2, "own_article_answers_removed": 0,
                                            "sibling_answers_removed": 2}


def _r2vc_digests(train_rows: list[dict], dev_rows: list[dict]) -> dict[str, str]:
    train, dev = _records(train_rows, "train"), _records(dev_rows, "dev")
    plan = offline_plan(train=train, dev=dev, scored=[c.claim for c in dev], n_calibration=4, seed=13)
    return plan.digests(train=train, passages=answer_passages(train, split="train"), epochs=2, seed=13,
                        pair_labels="decisive", max_per_class=None)


def test_r2vc_fit_inputs_do_not_move_when_dev_labels_are_shuffled() -> None:
    base = _r2vc_digests(_train_rows(), _dev_rows())
    for seed in range(3):
        assert _r2vc_digests(_train_rows(), _shuffled_labels(_dev_rows(), seed)) == base
    # ... but they do see a change of the dev *texts* (a new twin) — the digests are not constant
    moved = _dev_rows() + [_claim(103, "training claim number 8 about topic 8", "Refuted")]
    assert _r2vc_digests(_train_rows(), moved) != base


# ------------------------------------------------------------------ AVeriTeC baseline


@pytest.fixture()
def averitec_cfg(tmp_path: Path):
    from averitec_tools.baselines.averitec.config import builtin_config

    path = tmp_path / "train.json"
    path.write_text(json.dumps(_train_rows()), encoding="utf-8")
    cfg = builtin_config("offline-minilm")
    return replace(cfg, data=replace(cfg.data, train=str(path), cache_dir=str(tmp_path / "cache")))


def _items(rows: list[dict]):
    from averitec_tools.baselines.averitec.io.data import ClaimItem

    return [ClaimItem(i, r) for i, r in enumerate(_records(rows, "dev"))]


def test_averitec_duplicate_filter_uses_the_normaliser(averitec_cfg) -> None:
    from averitec_tools.baselines.averitec.training.checkpoints import training_claims

    kept, info = training_claims(averitec_cfg, exclude=[TWIN_DEV])
    assert info["dropped_scored_claims"] == 1 and TWIN_TRAIN not in [c.claim for c in kept]


def test_averitec_fit_inputs_do_not_move_when_dev_labels_are_shuffled(averitec_cfg) -> None:
    from averitec_tools.baselines.averitec.training.leak_guard import fit_inputs

    base = fit_inputs(averitec_cfg, scored=_items(_dev_rows()))
    assert base["train_duplicates_dropped"] == 1
    assert "decision_slice" in base  # the claims the reranker choice and the label bias are fitted on
    for seed in range(3):
        assert fit_inputs(averitec_cfg, scored=_items(_shuffled_labels(_dev_rows(), seed))) == base
    assert fit_inputs(averitec_cfg, scored=_items(_dev_rows()[1:]))["verdict"] != base["verdict"]


def test_averitec_decision_slice_is_training_claims_held_out_by_both_models(averitec_cfg) -> None:
    from averitec_tools.baselines.averitec.training.checkpoints import _split, training_claims
    from averitec_tools.baselines.averitec.training.decision_slice import decision_slice

    claims, _ = training_claims(averitec_cfg, exclude=[r["claim"] for r in _dev_rows()])
    sl = decision_slice(averitec_cfg, claims=claims)
    # decision.reranker: bm25-order (offline-minilm since issue 37) trains no reranker
    stages = ("verdict",) if averitec_cfg.decision.reranker == "bm25-order" else ("reranker", "verdict")
    trained = {c.claim_id for stage in stages for c in _split(claims, getattr(averitec_cfg, stage).train)[0]}
    assert sl and not {c.claim_id for c in sl} & trained  # neither model trained on a slice claim
    assert TWIN_TRAIN not in [c.claim for c in sl]  # the dev twin is gone before the split
    # shuffled dev labels: the same slice, the same labels (training labels only)
    for seed in range(3):
        shuffled = _shuffled_labels(_dev_rows(), seed)
        again, _ = training_claims(averitec_cfg, exclude=[r["claim"] for r in shuffled])
        assert [(c.claim_id, c.record.label) for c in decision_slice(averitec_cfg, claims=again)] == \
            [(c.claim_id, c.record.label) for c in sl]


def test_averitec_store_excludes_twins_and_own_article(tmp_path: Path) -> None:
    from averitec_tools.baselines.averitec.corpus.store import (
        KnowledgeStore,
        build_store,
        read_leak_guard,
    )

    rows = _dev_rows() + [_claim(200, TWIN_TRAIN, "Refuted"),
                          _claim(201, "Some claim.", "Supported", url="https://factcheck.org/fc/dev-1")]
    stats = build_store(claims=_records(rows, "dev"), out=tmp_path / "s", distractors=50, seed=0,
                        exclude_own_evidence=True)
    urls0 = {d.url for d in KnowledgeStore(tmp_path / "s").documents(0)}
    assert "https://src.org/200" not in urls0 and "https://src.org/100" not in urls0  # twin's and own
    assert "https://src.org/102" in urls0  # another claim's answers stay (as distractors)
    urls1 = {d.url for d in KnowledgeStore(tmp_path / "s").documents(1)}
    assert "https://factcheck.org/fc/dev-1" not in urls1 and "https://other.org/201" in urls1
    # own: 2 answers each, claims 0 and 3 are twins (4 each); claim 1's article: 1 answer of claim 4
    assert (stats.own_answers_removed, stats.own_article_answers_removed) == (4 + 2 + 2 + 4 + 2, 1)
    assert read_leak_guard(tmp_path / "s") == {"exclude_own_evidence": True, "own_answers_removed": 14,
                                               "own_article_answers_removed": 1, "sibling_answers_removed": 0,
                                               "scored_annotations_in_store": stats.distractor_documents}


def test_averitec_store_from_a_training_pool_holds_no_scored_annotation(tmp_path: Path) -> None:
    from averitec_tools.baselines.averitec.corpus.store import (
        KnowledgeStore,
        build_store,
        read_leak_guard,
    )

    train_rows = _train_rows()
    train_rows[7]["fact_checking_article"] = "https://factcheck.org/fc/dev-1"  # a sibling of dev 1
    dev = _records(_dev_rows(), "dev")
    stats = build_store(claims=dev, out=tmp_path / "s", distractors=50, exclude_own_evidence=True,
                        pool_claims=_records(train_rows, "train"))
    urls = {i: {d.url for d in KnowledgeStore(tmp_path / "s").documents(i)} for i in range(3)}
    dev_urls = {f"https://{h}/{i}" for h in ("src.org", "other.org") for i in (100, 101, 102)}
    assert not dev_urls & set().union(*urls.values())  # no dev answer
    assert "https://src.org/3" not in urls[0]  # the twin's
    assert "https://www.factcheck.org/fc/dev-1/" not in urls[1] and "https://src.org/7" not in urls[1]
    assert "https://src.org/7" in urls[2]  # the sibling of dev 1 is only dev 1's
    # the twin's 2 answers (dev 0), training claim 5's answer from dev 1's article, claim 7's 2 (sibling of dev 1)
    assert (stats.own_answers_removed, stats.own_article_answers_removed, stats.sibling_answers_removed) == (2, 1, 2)
    assert read_leak_guard(tmp_path / "s")["scored_annotations_in_store"] == 0
