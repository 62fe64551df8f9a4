"""``train_justifier`` (stage 6 training) on a tiny random BART: micro-batches give the batch's
gradient, the held-out METEOR picks the epoch, and the saved checkpoint is the kept one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _averitec_baseline_fixtures import claims, tiny_models

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from averitec_tools.baselines.averitec.config import JustificationConfig, TrainConfig  # noqa: E402
from averitec_tools.baselines.averitec.io.data import ClaimItem  # noqa: E402
from averitec_tools.baselines.averitec.training.justification import train_justifier  # noqa: E402
from averitec_tools.errors import UserError  # noqa: E402
from averitec_tools.records.averitec import AVeriTeCClaim  # noqa: E402


def _items(n: int) -> list[ClaimItem]:
    return [ClaimItem(i, AVeriTeCClaim.from_dict(c, where=f"claim {i}")) for i, c in enumerate(claims("jt", n))]


def _config(model: Path, **train: object) -> JustificationConfig:
    settings = {"select": "meteor", "epochs": 3, "batch_size": 3, "grad_accumulation": 2, "max_length": 48,
                "learning_rate": 5e-3, "device": "cpu", **train}
    return JustificationConfig(model=str(model), max_new_tokens=4, train=TrainConfig(**settings))  # type: ignore[arg-type]


def test_micro_batches_held_out_selection_and_checkpoint(tmp_path: Path) -> None:
    from transformers import BartForConditionalGeneration

    bart = tiny_models(tmp_path)["bart"]
    items = _items(9)
    info = {"path": "train.json", "n_claims": 7}
    whole = train_justifier(config=_config(bart), train=items[:7], heldout=items[7:], out_dir=tmp_path / "whole",
                            data_info=info)
    micro = train_justifier(config=_config(bart, micro_batch=1), train=items[:7], heldout=items[7:],
                            out_dir=tmp_path / "micro", data_info=info)
    # 7 examples in batches of 3 (3 steps an epoch, the optimiser steps after 2 and at the end)
    assert whole["data"] == {**info, "train_examples": 7, "heldout_examples": 2}
    assert whole["kind"] == "justification" and whole["heldout_metric"] == "meteor"
    assert len(whole["heldout_per_epoch"]) == 3 and all(isinstance(x, float) for x in whole["heldout_per_epoch"])
    best = max(range(3), key=lambda e: (whole["heldout_per_epoch"][e], -e))
    assert whole["best_epoch"] == best + 1
    # one sequence per forward pass: the same loss after every step (same gradient; Adam's
    # normalisation magnifies float noise in near-zero gradients, so weights are not compared)
    assert micro["final_loss"] == pytest.approx(whole["final_loss"], rel=1e-4)
    assert micro["heldout_per_epoch"] == pytest.approx(whole["heldout_per_epoch"], abs=1e-6)
    assert micro["fingerprint"] != whole["fingerprint"]  # the settings are part of it
    saved = json.loads((tmp_path / "whole" / "manifest.json").read_text())
    assert saved == json.loads(json.dumps(whole, default=str))
    trained = BartForConditionalGeneration.from_pretrained(tmp_path / "whole").state_dict()
    base = BartForConditionalGeneration.from_pretrained(bart).state_dict()
    assert any(not torch.equal(trained[k], v) for k, v in base.items())


def test_last_epoch_and_no_training_claims(tmp_path: Path) -> None:
    bart = tiny_models(tmp_path)["bart"]
    items = _items(4)
    last = train_justifier(config=_config(bart, select="last", epochs=2, max_pairs=3), train=items, heldout=items,
                           out_dir=tmp_path / "last", data_info={"path": "t.json"})
    assert last["heldout_per_epoch"] == [None, None] and last["best_epoch"] == 2
    assert last["data"]["train_examples"] == 3 and last["data"]["heldout_examples"] == 4  # max(5, 3 // 5) cap
    bare = [ClaimItem(0, AVeriTeCClaim.from_dict({**claims("x", 1)[0], "justification": " "}, where="x"))]
    with pytest.raises(UserError, match="t.json: no training claims with a justification"):
        train_justifier(config=_config(bart), train=bare, heldout=bare, out_dir=tmp_path / "none",
                        data_info={"path": "t.json"})
    assert not (tmp_path / "none").exists()
