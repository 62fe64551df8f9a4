"""The offline-minilm configuration on the shared data: a 20-claim dev subset, with the
packaged all-MiniLM-L6-v2 fine-tuned on train.json (the CI-sized training of
tests/_offline_ci.py, shared with the regression guard: capped harder than the built-in so CI
stays short), scored by ``averitec score`` against the same 20 gold claims."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from averitec_tools.cli.main import main
from tests._offline_ci import averitec_ci_config

pytestmark = pytest.mark.slow

#: sha256 of the upstream AVeriTeC data/train.json, as ../shared/README.md records it (the
#: test also hashes the shared file itself, so a different train.json fails here, not later).
TRAIN_SHA256 = "ae5eda7c42ddf1695ef185a7ba1bc716928f5adf57103e4f78aae5f9afe00f9c"


def test_offline_minilm_on_20_dev_claims(shared_data: Path, averitec_ci_cache: Path, tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    dev = shared_data / "averitec" / "dev.json"
    # the issue-27 decisions on a slice cut to 10 claims: retrieving every training claim's evidence
    # and fitting the probe on all of train.json would cost CI minutes (the issue-37 path:
    # tests/test_averitec_claim_head.py, on fixture claims); the classifiers are the regression
    # guard's (tests/_offline_ci.py), trained once per session
    cfg = averitec_ci_config(cache_dir=averitec_ci_cache, slice_claims=10)
    (tmp_path / "ci.yaml").write_text(yaml.safe_dump(cfg))
    subset = tmp_path / "dev20.json"
    subset.write_text(json.dumps(json.loads(dev.read_text())[:20]))
    assert main(["baseline", "averitec", "build-store", "--claims", str(subset), "--out", str(tmp_path / "store"),
                 "--json"]) == 0
    capsys.readouterr()
    code = main(["baseline", "averitec", "--config", str(tmp_path / "ci.yaml"), "--claims", str(dev), "--limit", "20",
                 "--store", str(tmp_path / "store"), "--out", str(tmp_path / "p.json"),
                 "--write-gold-subset", str(tmp_path / "gold.json"), "--json"])
    cap = capsys.readouterr()
    assert code == 0, cap.err
    summary = json.loads(cap.out)
    assert summary["components"]["questions"] == "retrieval-fallback"
    assert summary["components"]["justification"] == "extractive-fallback"
    minilm = "(from sentence-transformers/all-MiniLM-L6-v2@"
    assert minilm in summary["components"]["verdict"]
    # the reranker is used only where it beat the BM25 order on the decision slice
    assert (minilm in summary["components"]["reranker"]) is summary["decision"]["reranker_used"]
    if not summary["decision"]["reranker_used"]:
        assert summary["components"]["reranker"].startswith("bm25-order (decision slice")
    assert summary["fallbacks"]["retrieval-fallback"] > 20
    assert 0.0 < summary["retrieval_recall_at_k"] <= 1.0
    (manifest_path,) = averitec_ci_cache.glob("verdict-*/manifest.json")
    manifest = json.loads(manifest_path.read_text())
    train_digest = hashlib.sha256((shared_data / "averitec" / "train.json").read_bytes()).hexdigest()
    assert manifest["data"]["sha256"] == train_digest == TRAIN_SHA256 and manifest["data"]["dropped_scored_claims"] == 0
    assert manifest["data"]["class_counts"].get("Conflicting Evidence/Cherrypicking", 0) == 0
    assert main(["score", str(tmp_path / "p.json"), str(tmp_path / "gold.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_claims"] == 20
