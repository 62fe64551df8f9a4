"""The baselines' persisted keys are the ones they always were (values of commit 5682a0c, before
they went through :mod:`averitec_tools.hashing`): stage-cache keys, checkpoint
and decision fingerprints, configuration fingerprints (sidecar headers), the claims of a
resumable run, a paper recipe's stamp, a local model's stamp. A change here strands every
kept cache, checkpoint and partial run."""

from __future__ import annotations

import os
from pathlib import Path

from averitec_tools.baselines._run.sidecar import claims_fingerprint
from averitec_tools.baselines.averitec.config import builtin_config
from averitec_tools.baselines.averitec.io.stage_cache import file_key, local_model_stamp, stage_key
from averitec_tools.baselines.averitec.training.classifier import fingerprint
from averitec_tools.baselines.r2vc.experiments.recipes import Recipe
from averitec_tools.hashing import file_sha256


def test_keys_are_unchanged(tmp_path: Path) -> None:
    assert stage_key("verdict", {"b": "é", "a": [1, 2.5]}, "p") == \
        "3a4d3531353d689760aaffc4e1c71723f69ae1ba0bc87e6da6a5089a2ecfd455"
    assert fingerprint("decision", {"b": 1, "a": None}, [3, "x"]) == "815fcb091ce23622"
    # offline-minilm's settings changed on purpose in issue 37 (retrieved verdict training, the claim
    # head, BM25 order): a kept partial run of the old settings must not resume under the new ones.
    # paper keeps its fingerprint: the settings added then are left out at their defaults.
    assert (builtin_config("offline-minilm").fingerprint(), builtin_config("paper").fingerprint()) == \
        ("f8e7608b2cb40ca5", "5716c1948c6dc4e2")
    assert claims_fingerprint([0, "1", 2]) == "6a06eca718ecd6b0"
    assert Recipe(name="n", dataset="FEVER", train_rows="t.jsonl", eval_claims="e.jsonl").fingerprint() == \
        "3ea60b5f71f663d5"
    (tmp_path / "a.bin").write_bytes(b"xy")
    os.utime(tmp_path / "a.bin", ns=(10**18, 10**18))
    assert local_model_stamp(str(tmp_path)) == "43902a30ba051493"
    assert file_key(tmp_path / "a.bin") == file_sha256(tmp_path / "a.bin") and file_key(tmp_path / "no") == "missing"
