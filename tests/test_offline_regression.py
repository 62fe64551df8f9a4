"""Regression guard of the R2VC offline baseline's documented figures (issue 27 item 6).

The test runs the honest configuration, R2VC ``offline-minilm`` (exclude own evidence), on
a fixed slice (the first 50 dev claims) with the CI-sized models (tests/_offline_ci.py: the
``offline_cache`` build the offline dev test makes anyway), and checks the macro-F1 against
the figures docs/r2vc.md states, within the tolerance stated beside them. The figures are
those of these CI-sized models, not of the full-size runs in the results tables; a change
that moves them must update the docs (the test reads them from there). The AVeriTeC
baseline's guard is tests/test_offline_regression_averitec.py (it shares its models with
the AVeriTeC dev test, not this file's ``offline_cache``: apart, xdist runs the two on
different workers).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests._offline_ci import (
    GUARD_CLAIMS,
    R2VC_CI_SETTINGS,
    documented_guard,
    run_json,
)

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]


def test_r2vc_honest_slice_macro_f1(shared_data: Path, offline_cache: Path, tmp_path: Path,
                                    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AVERITEC_DATA_DIR", str(shared_data))
    settings = json.loads(json.dumps(R2VC_CI_SETTINGS))
    settings["base"] = "offline-minilm"  # the honest setting
    settings["offline"]["cache_dir"] = str(offline_cache)
    (tmp_path / "honest.yaml").write_text(json.dumps(settings))
    summary = run_json(["baseline", "r2vc", "--config", str(tmp_path / "honest.yaml"), "--limit", str(GUARD_CLAIMS),
                         "--out", str(tmp_path / "p.json")], capsys)
    assert summary["n_claims"] == GUARD_CLAIMS and summary["oracle_corpus"] is False
    doc = documented_guard("r2vc.md")
    got = {"ungated": summary["ungated"]["macro_f1"], "gated": summary["gated_paper"]["macro_f1"]}
    assert got == pytest.approx({k: doc[k] for k in got}, abs=doc["tolerance"]), got
