"""The GPU configuration's whole code path on CPU with tiny random models, end to end.

``averitec baseline r2vc train sft`` → ``train dpo`` → ``r2vc-calibrate`` (with the
config already naming the calibrator file it writes, as the documented recipe does) →
``r2vc`` run, with a causal LM generator, an NLI cross-encoder and a dense encoder, all
randomly initialised here, bm25s + FAISS hybrid retrieval. Nothing needs a GPU or the hub.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from averitec_tools.cli.main import main
from tests._r2vc_helpers import save_tiny_nli_model, tiny_claims, tiny_passages

sys.path.insert(0, str(Path(__file__).parent))


def _tiny_encoder(path: Path) -> Path:
    """A 1-layer BERT encoder (sentence-transformers adds mean pooling when loading it)."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    nli = save_tiny_nli_model(path.parent / "vocab-source")
    tok = BertTokenizerFast.from_pretrained(nli)
    torch.manual_seed(1)
    BertModel(BertConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32, max_position_embeddings=128)).save_pretrained(path)
    tok.save_pretrained(path)
    return path


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict:
    code = main(argv)
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)  # stdout is exactly one JSON object


@pytest.mark.slow
def test_sft_dpo_calibrate_run_with_tiny_models(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from _r2vc_tiny import tiny_lm, tiny_tokenizer

    from averitec_tools.baselines.r2vc.corpus.store import build_corpus

    # models
    tok = tiny_tokenizer()
    base = tmp_path / "tiny-base"
    tiny_lm(tok).save_pretrained(base)
    tok.save_pretrained(base)
    nli = save_tiny_nli_model(tmp_path / "nli")
    encoder = _tiny_encoder(tmp_path / "encoder")
    # training data (VitaminC-style rows) and the claims/corpus
    rows = [{"claim": c["claim"], "evidence_text": p.text, "label": lab}
            for c, p, lab in zip(tiny_claims()[:3], tiny_passages(), ("SUPPORTS", "REFUTES", "NOT ENOUGH INFO"),
                                 strict=False)]
    data = tmp_path / "train.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows * 2))
    train_cfg = tmp_path / "train.yaml"
    train_cfg.write_text("sft:\n  per_device_train_batch_size: 2\n  gradient_accumulation_steps: 1\n  max_length: 512\n"
                         "dpo:\n  per_device_train_batch_size: 2\n  gradient_accumulation_steps: 1\n  max_length: 512\n")
    claims = tmp_path / "claims.json"
    claims.write_text(json.dumps(tiny_claims()))
    corpus = tmp_path / "corpus"
    build_corpus(passages=tiny_passages(), out_dir=corpus)

    common = ["--config", str(train_cfg), "--data", str(data), "--max-steps", "2", "--json"]
    sft = _run(["baseline", "r2vc", "train", "sft", *common, "--model", str(base), "--out", str(tmp_path / "sft")],
               capsys)
    assert (sft["stage"], sft["global_steps"]) == ("sft", 2)
    dpo = _run(["baseline", "r2vc", "train", "dpo", *common, "--model", str(tmp_path / "sft"),
                "--out", str(tmp_path / "dpo")], capsys)
    assert (dpo["stage"], dpo["global_steps"]) == ("dpo", 2)

    cal = tmp_path / "cal.json"
    cfg = tmp_path / "gpu-like.yaml"
    cfg.write_text(
        f"retrieval:\n  sparse: bm25s\n  dense_model: {encoder}\n  dense_index: flat\n  top_m: 4\n"
        f"  encode_batch_size: 8\n  device: cpu\n"
        f"generator:\n  model: {tmp_path / 'dpo'}\n  sft_model: {tmp_path / 'sft'}\n  k: 3\n"
        f"  max_new_tokens: 6\n  device: cpu\n"
        f"verifier:\n  model: {nli}\n  device: cpu\n"
        f"calibration:\n  path: {cal}\n  fit_candidates: 3\n"
    )
    args = ["--config", str(cfg), "--claims", str(claims), "--corpus", str(corpus), "--no-progress", "--json"]
    info = _run(["baseline", "r2vc-calibrate", *args, "--out", str(cal)], capsys)
    assert cal.is_file() and info["fit_on"] == "all" and info["claims"] >= 1

    out = tmp_path / "pred.json"
    summary = _run(["baseline", "r2vc", *args, "--out", str(out)], capsys)
    comp = summary["components"]
    assert comp["generator"]["model"] == str(tmp_path / "dpo")
    assert comp["verifier"]["backend"] == f"hf:{nli}" and comp["verifier"]["pair_order"] == "evidence-claim"
    # the generator was never trained to write questions: the template writes them unless asked otherwise
    assert comp["calibrator"] == str(cal) and comp["question_writer"].startswith("template:")
    assert comp["generator"]["attention"] == "sdpa" and comp["generator"]["reasoning"]["mode"] == "none"
    assert comp["generator"]["dtype"] == "float32"
    assert comp["retrieval"] == {"retriever": "hybrid", "sparse": "bm25s", "dense": str(encoder)}
    assert summary["n_claims"] == 4 and summary["n_candidates"] == 4 * 3  # dense retrieval always finds some passage
    # a random LM mostly writes no label: those outputs are Uncertain candidates, counted
    assert summary["fallbacks"]["unparseable_output"] == summary["n_malformed"]
    preds = json.loads(out.read_text())
    assert len(preds) == 4 and all(p["pred_label"] in {"Supported", "Refuted", "Not Enough Evidence"} for p in preds)
    # the no_dpo ablation swaps in the SFT checkpoint
    ablated = tmp_path / "no-dpo.yaml"
    ablated.write_text(cfg.read_text() + "ablation:\n  no_dpo: true\n")
    args[1] = str(ablated)
    summary = _run(["baseline", "r2vc", *args, "--out", str(tmp_path / "pred-sft.json")], capsys)
    assert summary["components"]["generator"]["model"] == str(tmp_path / "sft")
