"""Regression guard of the two offline baselines' documented figures (issue 27 item 6).

Each test runs the honest configuration — R2VC ``offline-minilm`` (exclude own evidence)
and the AVeriTeC ``offline-minilm`` on an ``--exclude-own-evidence`` store — on a fixed
slice (the first 50 dev claims) with CI-sized training (tests/_offline_ci.py: what CI
builds anyway for the offline dev tests, a minute or two of CPU), and checks the labels'
macro-F1 against the figure the docs page states, within the tolerance stated beside it.
The figures are those of these CI-sized models, not of the full-size runs in the results
tables; a change that moves them must update the docs (the test reads them from there).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from averitec_tools.cli.main import main
from tests._offline_ci import (
    AVERITEC_CI_DECISION,
    AVERITEC_CI_TRAIN,
    AVERITEC_CI_VERDICT,
    GUARD_CLAIMS,
    R2VC_CI_SETTINGS,
    documented_guard,
)

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]


def _run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    code = main([*args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_r2vc_honest_slice_macro_f1(shared_data: Path, offline_cache: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AVERITEC_DATA_DIR", str(shared_data))
    settings = json.loads(json.dumps(R2VC_CI_SETTINGS))
    settings["base"] = "offline-minilm"  # the honest setting
    settings["offline"]["cache_dir"] = str(offline_cache)
    (tmp_path / "honest.yaml").write_text(json.dumps(settings))
    summary = _run_json(["baseline", "r2vc", "--config", str(tmp_path / "honest.yaml"), "--limit", str(GUARD_CLAIMS),
                         "--out", str(tmp_path / "p.json")], capsys)
    assert summary["n_claims"] == GUARD_CLAIMS and summary["oracle_corpus"] is False
    doc = documented_guard("r2vc.md")
    got = {"ungated": summary["ungated"]["macro_f1"], "gated": summary["gated_paper"]["macro_f1"]}
    assert got == pytest.approx({k: doc[k] for k in got}, abs=doc["tolerance"]), got


def test_averitec_honest_slice_macro_f1(shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dev = shared_data / "averitec" / "dev.json"
    store = tmp_path / "store_excl"
    info = _run_json(["baseline", "averitec", "build-store", "--claims", str(dev), "--out", str(store),
                      "--exclude-own-evidence"], capsys)
    assert info["exclude_own_evidence"] is True and info["own_documents"] == 0
    cfg = {"base": "offline-minilm", "data": {"cache_dir": str(tmp_path / "cache")},
           "reranker": {"train": AVERITEC_CI_TRAIN}, "verdict": AVERITEC_CI_VERDICT,
           "decision": AVERITEC_CI_DECISION}
    (tmp_path / "ci.yaml").write_text(yaml.safe_dump(cfg))
    summary = _run_json(["baseline", "averitec", "--config", str(tmp_path / "ci.yaml"), "--claims", str(dev),
                         "--limit", str(GUARD_CLAIMS), "--store", str(store), "--out", str(tmp_path / "p.json"),
                         "--write-gold-subset", str(tmp_path / "gold.json"), "--no-progress"], capsys)
    assert summary["leak_guard"]["own_answers_removed"] > 0
    assert summary["decision"]["slice_claims"] == AVERITEC_CI_DECISION["slice_claims"]
    scored = _run_json(["score", str(tmp_path / "p.json"), str(tmp_path / "gold.json")], capsys)
    assert scored["n_claims"] == GUARD_CLAIMS
    doc = documented_guard("averitec_baseline.md")
    assert scored["veracity"]["macro_f1"] == pytest.approx(doc["labels"], abs=doc["tolerance"])
