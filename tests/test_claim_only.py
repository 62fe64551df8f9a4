"""``averitec baseline claim-only`` (issue 37): the probe as a baseline, on tiny inline files.

The MiniLM embedding is replaced by a bag of two words (tests/test_claim_prior.py covers the
probe itself); the cache lies under the test process's own cache root (conftest).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from averitec_tools.baselines._run import claim_prior
from averitec_tools.baselines._run.claim_prior import fit_prior, out_of_fold_proba
from averitec_tools.cli.main import main
from averitec_tools.labels import AVERITEC_LABELS

TRAIN = [{"claim": f"The senator voted for bill {i}.", "label": "Supported"} for i in range(4)] + \
        [{"claim": f"Aliens built pyramid number {i}.", "label": "Refuted"} for i in range(4)]
CLAIMS = [{"claim": "aliens built pyramid number 2", "label": "Refuted"},  # twin of a training claim
          {"claim": "The senator voted for bill 9.", "label": "Supported"}]


@pytest.fixture(autouse=True)
def _two_word_embedding(monkeypatch: pytest.MonkeyPatch) -> None:
    def embed(texts: list[str]) -> np.ndarray:
        return np.array([[float("senator" in t.lower()), float("aliens" in t.lower())] for t in texts])

    monkeypatch.setattr(claim_prior, "embed_claims", embed)


def _write(path: Path, rows: list[dict[str, str]]) -> Path:
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_claim_only_writes_a_2024_file_and_drops_the_scored_twins(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    train, claims = _write(tmp_path / "train.json", TRAIN), _write(tmp_path / "claims.json", CLAIMS)
    out = tmp_path / "pred.json"
    assert main(["baseline", "claim-only", "--claims", str(claims), "--train", str(train), "--out", str(out),
                 "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    rows = json.loads(out.read_text())
    assert [r["claim_id"] for r in rows] == [0, 1] and all(r["evidence"] == [] for r in rows)
    assert all(r["pred_label"] in AVERITEC_LABELS and abs(sum(r["probabilities"].values()) - 1) < 1e-9 for r in rows)
    assert all(r["confidence"] == max(r["probabilities"].values()) for r in rows)
    # 8 training claims, the twin of claim 0 left out; not AVeriTeC's train.json: nothing held out
    assert summary["probe"]["claims"] == 7 and summary["probe"]["train_duplicates_dropped"] == 1
    assert "pseudo_test_held_out" not in summary["probe"]
    assert summary["n_claims"] == 2 and sum(summary["labels"].values()) == 2
    # the two words separate the labels: both claims right
    assert [r["pred_label"] for r in rows] == ["Refuted", "Supported"] and summary["accuracy"] == 1.0


def test_claim_only_refuses_its_training_file_as_output(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    train, claims = _write(tmp_path / "train.json", TRAIN), _write(tmp_path / "claims.json", CLAIMS)
    assert main(["baseline", "claim-only", "--claims", str(claims), "--train", str(train), "--out", str(train)]) == 2
    assert "--out" in capsys.readouterr().err and json.loads(train.read_text()) == TRAIN


def test_a_training_set_with_one_label_predicts_that_label() -> None:
    X = np.eye(3)
    prior = fit_prior(vectors=X, labels=np.array([1, 1, 1]), groups=np.arange(3), c_grid=(1.0,), folds=2)
    assert prior.proba(np.ones((1, 3))).round(12).tolist() == [[0.0, 1.0, 0.0, 0.0]]
    # a fold with nothing left to fit on (one group) stays uniform
    oof = out_of_fold_proba(vectors=X, labels=np.array([0, 1, 1]), groups=np.zeros(3, dtype=int), c=1.0, folds=2)
    assert oof.tolist() == [[0.25] * 4] * 3
