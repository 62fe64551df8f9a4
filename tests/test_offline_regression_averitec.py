"""Regression guard of the AVeriTeC offline baseline's documented figure (issue 27 item 6).

The test runs the honest configuration — ``offline-minilm`` on a ``build-store
--exclude-own-evidence`` store of all of dev — on a fixed slice (the first 50 dev claims)
with CI-sized training (tests/_offline_ci.py; the models come from the ``averitec_ci_cache``
fixture, trained once for this test and the AVeriTeC dev test), scores it with ``averitec
score`` and checks the labels' macro-F1 against the figure docs/averitec_baseline.md states,
within the tolerance stated beside it. The figure is that of these CI-sized models, not of
the full-size runs in the results tables; a change that moves it must update the docs (the
test reads it from there). The R2VC guard is tests/test_offline_regression.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests._offline_ci import (
    AVERITEC_CI_DECISION,
    GUARD_CLAIMS,
    averitec_ci_config,
    documented_guard,
    run_json,
)

pytestmark = [pytest.mark.slow, pytest.mark.shared_data]


def test_averitec_honest_slice_macro_f1(shared_data: Path, averitec_ci_cache: Path, tmp_path: Path,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    dev = shared_data / "averitec" / "dev.json"
    store = tmp_path / "store_excl"
    info = run_json(["baseline", "averitec", "build-store", "--claims", str(dev), "--out", str(store),
                     "--exclude-own-evidence"], capsys)
    assert info["exclude_own_evidence"] is True and info["own_documents"] == 0
    (tmp_path / "ci.yaml").write_text(yaml.safe_dump(averitec_ci_config(cache_dir=averitec_ci_cache)))
    summary = run_json(["baseline", "averitec", "--config", str(tmp_path / "ci.yaml"), "--claims", str(dev),
                        "--limit", str(GUARD_CLAIMS), "--store", str(store), "--out", str(tmp_path / "p.json"),
                        "--write-gold-subset", str(tmp_path / "gold.json"), "--no-progress"], capsys)
    assert summary["leak_guard"]["own_answers_removed"] > 0
    assert summary["decision"]["slice_claims"] == AVERITEC_CI_DECISION["slice_claims"]
    scored = run_json(["score", str(tmp_path / "p.json"), str(tmp_path / "gold.json")], capsys)
    assert scored["n_claims"] == GUARD_CLAIMS
    doc = documented_guard("averitec_baseline.md")
    assert scored["veracity"]["macro_f1"] == pytest.approx(doc["labels"], abs=doc["tolerance"])
