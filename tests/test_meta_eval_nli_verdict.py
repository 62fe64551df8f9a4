"""``nli-verdict``: its arithmetic with a fake NLI backend (hand-derived values) and its bad input.

No test loads the full-size verifier (CI has no cache): the backend is a stub whose rows
depend only on the evidence string."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from averitec_tools.errors import ResourceError, UserError
from averitec_tools.metrics import nli_verdict
from averitec_tools.metrics.evidence_scorer import parse_evidence_scorer
from averitec_tools.metrics.nli_verdict import NLIVerdict
from averitec_tools.metrics.signature import parse_signature

ROWS = {"yes": [0.1, 0.2, 0.7], "no": [0.8, 0.1, 0.1]}  # (contr, neutral, ent); anything else: neutral


class FakeNLI:
    """Rows by evidence string; records every batch of (claim, evidence) pairs."""

    def __init__(self) -> None:
        self.calls: list[list[tuple[str, str]]] = []

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        self.calls.append(list(pairs))
        return np.array([next((r for k, r in ROWS.items() if k in ev), [0.1, 0.8, 0.1]) for _, ev in pairs])


CLAIMS = ["C", "D", "E"]
LABELS = ["Supported", "Refuted", "Not Enough Evidence"]
PRED = [["q yes", "q other"], ["no"], []]
REF = [["r yes"], ["yes"], ["other"]]


def _scores(mode: str) -> tuple[list[float], FakeNLI]:
    fake = FakeNLI()
    out = NLIVerdict(mode=mode).score_claims(claims=CLAIMS, labels=LABELS, predicted=PRED, references=REF,
                                             backend=fake)
    return out, fake


def test_side_verdict_by_hand() -> None:
    # max contr 0.1, max ent 0.7, neutral 1 - 0.7 = 0.3; sum 1.1
    assert nli_verdict.side_verdict(np.array([ROWS["yes"], [0.1, 0.8, 0.1]])) == pytest.approx([1 / 11, 3 / 11, 7 / 11])
    assert nli_verdict.side_verdict(np.array([ROWS["no"]])) == pytest.approx([8 / 11, 2 / 11, 1 / 11])
    assert nli_verdict.side_verdict(np.zeros((0, 3))).tolist() == [0.0, 1.0, 0.0]


def test_agree_mode_by_hand() -> None:
    out, fake = _scores("agree")
    # C: same distribution both sides -> 1; D: TV((8,2,1)/11, (1,3,7)/11) = 7/11 -> 4/11;
    # E: TV((0,1,0), (1,9,1)/11) = 2/11 -> 9/11
    assert out == pytest.approx([1.0, 4 / 11, 9 / 11])
    assert sum(len(c) for c in fake.calls) == 6  # each distinct (claim, string) once per side
    assert all(claim in CLAIMS for batch in fake.calls for claim, _ in batch)  # pairs are (claim, evidence)


def test_gold_and_label_modes_by_hand() -> None:
    assert _scores("gold")[0] == pytest.approx([7 / 11, 8 / 11, 1.0])
    # y_NLI: C True/True, D False/True, E Uncertain (no evidence)/Uncertain
    assert _scores("label")[0] == [1.0, 0.0, 1.0]


def test_coverage_mix(monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools.metrics import minilm_qa_f1

    monkeypatch.setattr(minilm_qa_f1.MiniLMQAF1, "score_strings", lambda self, **_: [0.2, 0.4, 0.0])
    out = NLIVerdict(mode="agree", coverage=0.5).score_claims(claims=CLAIMS, labels=None, predicted=PRED, references=REF,
                                                backend=FakeNLI())
    assert out == pytest.approx([0.6, 0.5 * 4 / 11 + 0.2, 0.5 * 9 / 11])


@pytest.mark.parametrize(("spec", "message"), [
    ("nli-verdict(mode=vote)", "mode must be one of gold, agree, label"),
    ("nli-verdict(coverage=1.5)", "coverage must lie in [0, 1]"),
    ("nli-verdikt", "did you mean: nli-verdict"),
])
def test_bad_specs(spec: str, message: str) -> None:
    with pytest.raises(UserError, match=message.replace("[", r"\[")):
        parse_evidence_scorer(spec)


def test_bad_label_and_missing_models(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(UserError, match="gold label 'True' is not an AVeriTeC label"):
        NLIVerdict().score_claims(claims=["C"], labels=["True"], predicted=[[]], references=[[]],
                                             backend=FakeNLI())
    with pytest.raises(ResourceError, match="is not a model directory"):
        parse_evidence_scorer(f"nli-verdict(model={tmp_path})").signature()
    monkeypatch.setenv("AVERITEC_CACHE_DIR", str(tmp_path))
    with pytest.raises(ResourceError, match="no R2VC offline verifier") as err:
        NLIVerdict().score_claims(claims=["C"], labels=["Refuted"], predicted=[["a"]], references=[["b"]])
    assert "averitec baseline r2vc --config offline-minilm" in (err.value.hint or "")
    with pytest.raises(UserError, match="needs each claim's text"):
        NLIVerdict().score_strings(predicted=[["a"]], references=[["b"]])


def test_signature_names_model_weights_and_training(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "model.safetensors").write_bytes(b"w")
    (tmp_path / "training.json").write_text('{"train_claims": 7, "pairs": 21, "pair_labels": "decisive"}')
    sig = NLIVerdict(model=str(tmp_path)).signature()  # the default mode: gold
    # sha256(b"w") = 50e721e4...
    assert sig.startswith(f"metric:nli-verdict(model={tmp_path})|mode:gold|coverage:0|"
                          "model:r2vc-offline-verifier(all-MiniLM-L6-v2)|weights:sha256.50e721e49c013f00|"
                          "trained:averitec-train-7-claims-21-pairs-decisive|max_length:128|pair_order:evidence-claim|version:")
    assert parse_signature(sig)["trained"] == "averitec-train-7-claims-21-pairs-decisive"



def _meta_eval(env: dict[str, str], spec: str, data: Path) -> dict:
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "averitec_tools.cli.main", "meta-eval", "--no-reproduce",
                           "--data", str(data / "meta_eval/fc-evidence-evaluation"), "--resamples", "20", "--scorer", spec, "--json"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 or "Traceback" not in proc.stderr, proc.stderr
    return {"rc": proc.returncode, "stderr": proc.stderr, **(json.loads(proc.stdout) if proc.returncode == 0 else {})}


def test_hub_model_is_downloaded_named_and_scores_like_its_local_copy(tmp_path: Path, shared_data: Path) -> None:
    """``averitec meta-eval --scorer 'nli-verdict(model=org/tiny-nli)'`` as a user runs it: the model
    is fetched by huggingface_hub from a local hub (``HF_ENDPOINT``), named ``id@commit`` in the
    signature with the served weights' sha256 (hashlib here), and scores exactly as the same
    files loaded from a directory; an unknown repository is one line, exit 2."""
    import hashlib
    import os

    from _hub_server import COMMIT, FakeHub, HubServer
    from _r2vc_helpers import save_tiny_nli_model

    local = save_tiny_nli_model(tmp_path / "nli")
    hub = FakeHub()
    for f in sorted(local.iterdir()):
        hub.add("model", "org/tiny-nli", f.name, f.read_bytes(), lfs=f.suffix == ".safetensors")
    hub.add("model", "org/tiny-nli", "onnx/model.onnx", b"not wanted")
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env.update(HF_HOME=str(tmp_path / "hf"), HF_HUB_DISABLE_TELEMETRY="1", AVERITEC_CACHE_DIR=str(tmp_path / "c"))
    with HubServer(hub) as url:
        env["HF_ENDPOINT"] = url
        got = _meta_eval(env, "nli-verdict(model=org/tiny-nli,max_length=64)", shared_data)
        missing = _meta_eval(env, "nli-verdict(model=org/missing)", shared_data)
    want = _meta_eval(env, f"nli-verdict(model={local},max_length=64)", shared_data)
    sha = hashlib.sha256((local / "model.safetensors").read_bytes()).hexdigest()
    (sig,) = {i["details"]["signature"] for i in got["scorer_info"]}
    assert f"|model:org/tiny-nli@{COMMIT[:12]}|weights:sha256.{sha[:16]}|trained:unknown|" in sig
    assert parse_signature(sig).render() == sig
    assert not any("onnx" in path for _, path, _ in hub.log)  # only what a PyTorch load needs
    assert len(got["scorers"]) == 6  # one row per human dimension
    assert [r["spearman"] for r in got["scorers"]] == [r["spearman"] for r in want["scorers"]]
    assert "|model:local:nli|" in want["scorer_info"][0]["details"]["signature"]
    lines = [ln for ln in missing["stderr"].splitlines() if ln.strip()]
    assert missing["rc"] == 2 and len(lines) == 1, missing["stderr"]
    assert "cannot download model 'org/missing' from http://127.0.0.1" in lines[0]


def test_hub_model_offline_and_not_cached_is_one_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    with pytest.raises(ResourceError, match="'org/never-fetched' is not in the local Hugging Face cache and the hub"):
        parse_evidence_scorer("nli-verdict(model=org/never-fetched)").signature()
