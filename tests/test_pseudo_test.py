"""The pseudo-test split (issue 27 item 5): seeded, whole normalised-text groups, held out of
every training and fitting set of both offline baselines, and listed in the docs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from averitec_tools.baselines.averitec.config import config_from_mapping
from averitec_tools.baselines.averitec.training.checkpoints import training_claims
from averitec_tools.baselines.r2vc.offline.inputs import training_plan
from averitec_tools.hashing import file_sha256
from averitec_tools.leakage import pseudo_test
from averitec_tools.leakage.pseudo_test import (
    group_sample,
    pseudo_test_mask,
    pseudo_test_records,
    pseudo_test_size,
)
from averitec_tools.records.averitec import AVeriTeCClaim

REPO = Path(__file__).resolve().parents[1]


def test_group_sample_keeps_twins_together_and_is_seeded() -> None:
    texts = ["Alpha beta.", "alpha  BETA", "gamma", "delta", "epsilon", "India’s GDP", "india's gdp"]
    for seed in range(20):
        m = group_sample(texts, n=3, seed=seed)
        assert m[0] == m[1] and m[5] == m[6] and m.sum() >= 3
        assert m.sum() <= 4  # stops as soon as 3 claims are in (a pair can overshoot by one)
        assert (m == group_sample(texts, n=3, seed=seed)).all()
    assert len({tuple(group_sample(texts, n=3, seed=s)) for s in range(20)}) > 1
    assert not pseudo_test_mask(texts, n=0).any() and pseudo_test_mask(texts, n=100).all()


def test_r2vc_plan_holds_the_pseudo_test_out_of_verifier_and_slice() -> None:
    train = [AVeriTeCClaim(claim=f"claim number {i}", label="Refuted") for i in range(40)]
    pseudo = np.zeros(40, dtype=bool)
    pseudo[[1, 5, 9, 30]] = True
    plan = training_plan(train=train, scored=["claim number 2"], n_calibration=10, seed=0, pseudo_test=pseudo)
    assert not (plan.verifier_use & pseudo).any() and not (plan.held & pseudo).any()
    assert int(plan.held.sum()) == 10  # the slice is drawn from the other claims, full size
    assert plan.leak_guard == {"train_duplicates_dropped": 1, "pseudo_test_held_out": 4}
    assert {c.claim_id for c in plan.slice_claims(train)}.isdisjoint({f"train:{i}" for i in (1, 5, 9, 30)})
    same = training_plan(train=train, scored=["claim number 2"], n_calibration=10, seed=0)
    assert "pseudo_test_held_out" not in same.leak_guard and not same.verifier_use[2]
    assert int(same.verifier_use.sum()) == 40 - 10 - int(not same.held[2])


def test_averitec_training_claims_exclude_the_pseudo_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = [{"claim": f"claim {i}", "label": "Refuted"} for i in range(30)]
    records[7]["claim"] = ""  # train.json has one empty claim; ids stay the file positions
    path = tmp_path / "train.json"
    path.write_text(json.dumps(records))
    cfg = config_from_mapping({"base": "offline-minilm", "data": {"train": str(path), "pseudo_test_claims": 6}},
                              source="t.yaml")
    # another training file than AVeriTeC's train.json holds nothing out ...
    assert "pseudo_test_held_out" not in training_claims(cfg)[1] and len(training_claims(cfg)[0]) == 29
    # ... this one stands in for it here
    monkeypatch.setattr(pseudo_test, "AVERITEC_TRAIN_SHA256", file_sha256(path))
    kept, info = training_claims(cfg, exclude=["claim 3"])
    _, scored, unscored = pseudo_test_records(records, n=6)
    held = scored + unscored
    assert len(held) == 6 and info["pseudo_test_held_out"] == 6 and "kept_ids_hash" in info
    ids = {c.claim_id for c in kept}
    assert 7 not in held and not ids & set(held) and 3 not in ids
    assert len(kept) == 29 - 6 - (3 not in held) and info["dropped_scored_claims"] == (3 not in held)
    off = config_from_mapping({"base": "offline-minilm", "data": {"train": str(path), "pseudo_test_claims": 0}},
                              source="t.yaml")
    assert "pseudo_test_held_out" not in training_claims(off)[1]


@pytest.mark.shared_data
def test_the_docs_list_the_pseudo_test_claims(shared_data: Path) -> None:
    assert pseudo_test_size(500, train_sha256=file_sha256(shared_data / "averitec" / "train.json")) == 500
    records = json.loads((shared_data / "averitec" / "train.json").read_text())
    dev = [c["claim"] for c in json.loads((shared_data / "averitec" / "dev.json").read_text())]
    _, idx, unscored = pseudo_test_records(records, avoid=dev)
    assert len(idx) + len(unscored) == 500 and len(unscored) == 3
    text = (REPO / "docs" / "r2vc.md").read_text(encoding="utf-8")
    listed = text[text.index("**Pseudo-test claims**"):].split("\n\n", 1)[0]
    scored_part, dropped_part = listed.split("Held out, not scored", 1)
    assert [int(x) for x in re.findall(r"\b\d+\b", scored_part.split(":", 1)[1])] == idx
    assert [int(x) for x in re.findall(r"\b\d+\b", dropped_part)] == unscored
