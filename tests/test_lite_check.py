"""``averitec lite-check``: full vs lite ranking of submissions, against hand-made systems.

Four systems on the bundled 50-claim demo set differ only in their labels (system k gets
the first 10·k claims' gold label, the others a wrong one), ranked by label accuracy, so
every mean is countable by hand; τ-b is checked against scipy's, an independent
implementation.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from averitec_tools.errors import UserError
from averitec_tools.metrics.signature import parse_signature
from averitec_tools.scoring.lite_check import lite_check, ranking_agreement
from averitec_tools.scoring.meta_eval.lite import lite_subset

ROOT = Path(__file__).resolve().parents[1]
GOLD = ROOT / "examples" / "demo_gold.json"
WRONG = {"Refuted": "Supported", "Supported": "Refuted", "Not Enough Evidence": "Refuted",
         "Conflicting Evidence/Cherrypicking": "Refuted"}


def _systems(tmp_path: Path) -> tuple[list[Path], list[str]]:
    gold = json.loads(GOLD.read_text())
    preds = json.loads((ROOT / "examples" / "demo_predictions.json").read_text())
    paths = []
    for k in range(1, 5):
        rows = [{**p, "pred_label": g["label"] if i < 10 * k else WRONG[g["label"]]}
                for i, (p, g) in enumerate(zip(preds, gold, strict=True))]
        paths.append(tmp_path / f"sys{k}.json")
        paths[-1].write_text(json.dumps(rows))
    return paths, [g["label"] for g in gold]


def test_means_and_tau_by_hand(tmp_path: Path) -> None:
    from scipy.stats import kendalltau

    paths, labels = _systems(tmp_path)
    out = lite_check(references=GOLD, submissions=paths, size=10, metric="label_accuracy", resamples=200)
    chosen = lite_subset(claims=list(enumerate(labels)), size=10)
    assert out["claim_ids"] == chosen and out["size"] == 10 and out["of"] == 50
    full = [s["full"] for s in out["systems"]]
    lite = [s["lite"] for s in out["systems"]]
    assert full == pytest.approx([0.2, 0.4, 0.6, 0.8], abs=1e-12)  # 10k right of 50
    assert lite == pytest.approx([sum(i < 10 * k for i in chosen) / 10 for k in range(1, 5)], abs=1e-12)
    ref = kendalltau(full, lite).statistic  # tau-b
    assert out["kendall_tau"] == pytest.approx(ref, abs=1e-12)
    assert out["ci"]["low"] <= out["kendall_tau"] <= out["ci"]["high"]
    sig = parse_signature(out["signature"])
    assert (sig.head, sig["metric"], sig["size"], sig["score.profile"]) == ("lite-check", "label_accuracy", "10", "averitec2024")


def test_ranking_agreement_ties_and_reversal() -> None:
    values = np.array([[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0]])
    # full means 0.5, 0.5, 0; lite (claims 0, 1): 0.5, 0.5, 0 -> tie kept, tau-b 1
    assert ranking_agreement(values=values, lite=np.array([True, True, False, False]), resamples=0)["kendall_tau"] == 1.0
    # lite (claim 0 only): 1, 0, 0 -> tau-b = (1 + 0 + 0) / sqrt(2 * 2) = 0.5
    assert ranking_agreement(values=values, lite=np.array([True, False, False, False]),
                             resamples=0)["kendall_tau"] == pytest.approx(0.5)


def test_bad_input(tmp_path: Path) -> None:
    paths, _ = _systems(tmp_path)
    with pytest.raises(UserError, match="at least 3 submissions, got 2"):
        lite_check(references=GOLD, submissions=paths[:2])
    with pytest.raises(UserError, match="has no numeric 'averitec_score@0.33'"):
        lite_check(references=GOLD, submissions=paths[:3], metric="averitec_score@0.33", size=10)
    with pytest.raises(UserError, match="lite subset size must be at least 1, got 0"):
        lite_check(references=GOLD, submissions=paths[:3], size=0)
    with pytest.raises(UserError, match="lite subset size must be between 1 and 50, got 60"):
        lite_check(references=GOLD, submissions=paths[:3], size=60, metric="label_accuracy")


def test_cli_json_text_and_one_line_errors(tmp_path: Path) -> None:
    paths, _ = _systems(tmp_path)
    base = [sys.executable, "-m", "averitec_tools.cli.main", "lite-check", str(GOLD), "--size", "10",
            "--resamples", "50", *[a for p in paths for a in ("--submission", str(p))]]
    proc = subprocess.run([*base, "--json"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["metric"] == "averitec_score@0.25" and len(report["systems"]) == 4
    text = subprocess.run(base, capture_output=True, text=True, timeout=300)
    assert text.returncode == 0 and "Kendall tau-b" in text.stdout and "sys4.json" in text.stdout
    short = subprocess.run([*base[:7], "--submission", str(paths[0])], capture_output=True, text=True, timeout=300)
    lines = [ln for ln in short.stderr.splitlines() if ln.strip()]
    same = subprocess.run([*base[:7], *["--submission", str(paths[0])] * 3, "--json"], capture_output=True, text=True,
                          timeout=300)
    assert same.returncode == 0 and json.loads(same.stdout)["kendall_tau"] is None  # strict JSON, no NaN
    assert short.returncode == 2 and len(lines) == 1 and "at least 3 submissions" in lines[0], short.stderr
