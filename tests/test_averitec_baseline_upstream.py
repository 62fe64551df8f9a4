"""The upstream route (issue 25 §6): the shipped Lightning checkpoints and stage files.

The checkpoints are written here in the upstream modules' exact layout — a Lightning
module whose one sub-module ``self.model`` is a ``BertForSequenceClassification``, so the
``state_dict`` keys are ``model.<key>`` (with the ``position_ids`` buffer older
transformers stored), beside Lightning's ``epoch``/``global_step``/``optimizer_states``/
``callbacks`` — from tiny random BERTs. Expected labels and evidence are computed from the
original torch modules directly, with the upstream aggregation written out by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")

from _averitec_baseline_fixtures import claims, tiny_models, tokenizer, write_json  # noqa: E402

from averitec_tools.cli.main import main  # noqa: E402
from averitec_tools.errors import UserError  # noqa: E402

LABELS = ["Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking"]


def lightning_ckpt(path: Path, *, num_labels: int, seed: int) -> Any:
    """A tiny BERT classifier saved as the upstream Lightning module saves it; returns the model."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    torch.manual_seed(seed)
    tok = tokenizer()
    model = BertForSequenceClassification(BertConfig(vocab_size=len(tok), hidden_size=32, num_hidden_layers=1,
                                                     num_attention_heads=2, intermediate_size=64,
                                                     max_position_embeddings=512, num_labels=num_labels,
                                                     pad_token_id=tok.pad_token_id)).eval()
    state = {f"model.{k}": v for k, v in model.state_dict().items()}
    state["model.bert.embeddings.position_ids"] = torch.arange(512).unsqueeze(0)
    torch.save({"epoch": 6, "global_step": 700, "pytorch-lightning_version": "1.5.10", "state_dict": state,
                "optimizer_states": [], "lr_schedulers": [],
                "callbacks": {"ModelCheckpoint": {"monitor": "val_f1_epoch", "best_model_score": torch.tensor(0.51)}}},
               path)
    return model


def logits(model: Any, text: str) -> Any:
    import torch

    enc = tokenizer()(text, truncation=True, max_length=512, return_tensors="pt")
    with torch.no_grad():
        return model(**enc).logits[0]


def upstream_label(pair_labels: list[int]) -> str:
    if not pair_labels or any(y in (2, 3) for y in pair_labels):
        return LABELS[2]
    if all(y == 0 for y in pair_labels):
        return LABELS[0]
    if all(y == 1 for y in pair_labels):
        return LABELS[1]
    return LABELS[3]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("upstream")
    models = tiny_models(root)
    verdict = lightning_ckpt(root / "bert_veracity.ckpt", num_labels=4, seed=1)
    reranker = lightning_ckpt(root / "bert_dual_encoder.ckpt", num_labels=2, seed=2)
    dev_claims = claims("dev", 5)
    dev = write_json(root / "dev.json", dev_claims)
    train = write_json(root / "train.json", claims("train", 8))
    import yaml

    cfg = {"base": "offline-minilm", "data": {"train": str(train), "cache_dir": str(root / "cache")},
           "questions": {"model": "retrieval-fallback"}, "justification": {"model": "extractive-fallback"},
           "reranker": {"base": str(models["bert"]), "checkpoint": str(root / "bert_dual_encoder.ckpt")},
           "verdict": {"base": str(models["bert"]), "checkpoint": str(root / "bert_veracity.ckpt")}}
    (root / "upstream.yaml").write_text(yaml.safe_dump(cfg))
    evidence = {i: [{"question": f"Q{i}{j}?", "answer": f"answer {j} of claim {i}.", "url": f"https://e.org/{i}/{j}"}
                    for j in range(3 if i != 4 else 0)] for i in range(5)}
    (root / "dev_top_3_rerank_qa.json").write_text("".join(
        json.dumps({"claim_id": i, "claim": c["claim"], "evidence": evidence[i]}) + "\n"
        for i, c in enumerate(dev_claims)))
    qau = {i: [[f"Question {k} on {i}?", f"Sentence {k} about claim {i}.", f"https://s.org/{i}/{k}"]
               for k in range(6)] for i in range(5)}
    (root / "dev_top_k_qa.json").write_text("".join(
        json.dumps({"claim_id": i, "claim": c["claim"], "bm25_qau": qau[i]}) + "\n" for i, c in enumerate(dev_claims)))
    (root / "dev_top_k_sentences.json").write_text("".join(
        json.dumps({"claim_id": i, "claim": c["claim"], "top_10": [{"sentence": s, "url": u} for _, s, u in qau[i]]})
        + "\n" for i, c in enumerate(dev_claims)))
    return {"root": root, "models": models, "verdict": verdict, "reranker": reranker, "dev": dev,
            "claims": dev_claims, "config": root / "upstream.yaml", "evidence": evidence, "qau": qau}


def test_converted_checkpoint_computes_what_the_lightning_module_computed(env: dict[str, Any], tmp_path: Path) -> None:
    from averitec_tools.baselines.averitec.models import load_classifier
    from averitec_tools.baselines.averitec.training.upstream_checkpoints import convert_checkpoint

    manifest = convert_checkpoint(ckpt=env["root"] / "bert_veracity.ckpt", kind="verdict",
                                  base=str(env["models"]["bert"]), out_dir=tmp_path / "v")
    assert manifest["labels"] == LABELS and manifest["source"]["epoch"] == 6
    assert manifest["source"]["global_step"] == 700 and manifest["ignored_entries"] == []
    model, tok, _ = load_classifier(model=str(tmp_path / "v"), device="cpu")
    assert model.config.id2label == dict(enumerate(LABELS))
    for text in ("[CLAIM] c [QUESTION] q? a", "another input altogether"):
        import torch

        enc = tok(text, return_tensors="pt")
        with torch.no_grad():
            got = model(**enc).logits[0]
        assert torch.allclose(got, logits(env["verdict"], text), atol=1e-5)


def test_a_checkpoint_that_does_not_fit_is_refused_naming_the_keys(env: dict[str, Any], tmp_path: Path) -> None:
    from averitec_tools.baselines.averitec.training.upstream_checkpoints import convert_checkpoint

    with pytest.raises(UserError, match=r"do not fit .* 4-way verdict head: 2 of another shape \(e\.g\. classifier"):
        convert_checkpoint(ckpt=env["root"] / "bert_dual_encoder.ckpt", kind="verdict",
                           base=str(env["models"]["bert"]), out_dir=tmp_path / "x")
    assert not (tmp_path / "x").exists()
    with pytest.raises(UserError, match=r"no such checkpoint file .*huggingface-cli download chenxwh/AVeriTeC "
                                        r"pretrained_models/bert_veracity\.ckpt"):
        convert_checkpoint(ckpt=tmp_path / "bert_veracity.ckpt", kind="verdict", base="x", out_dir=tmp_path / "x")
    (tmp_path / "junk.ckpt").write_bytes(b"not a checkpoint")
    with pytest.raises(UserError, match="not a PyTorch checkpoint"):
        convert_checkpoint(ckpt=tmp_path / "junk.ckpt", kind="verdict", base="x", out_dir=tmp_path / "x")


def test_rerank_file_keeps_the_shipped_evidence_and_the_upstream_verdict(env: dict[str, Any], tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pred.json"
    assert main(["baseline", "averitec", "from-stage", "--stage-file", str(env["root"] / "dev_top_3_rerank_qa.json"),
                 "--claims", str(env["dev"]), "--config", str(env["config"]), "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["stage"] == "rerank" and summary["ran"] == ["verdict", "justification"]
    preds = json.loads(out.read_text())
    for i, p in enumerate(preds):
        ev = env["evidence"][i]
        if not ev:  # no evidence: NEE with the placeholder pair, as the pipeline does
            assert p["pred_label"] == LABELS[2] and p["fallbacks"] == ["no-evidence-placeholder"]
            continue
        assert p["evidence"] == ev
        pair_labels = [int(logits(env["verdict"], f"[CLAIM] {env['claims'][i]['claim']} [QUESTION] "
                                                  f"{e['question']} {e['answer']}").argmax()) for e in ev]
        assert p["pred_label"] == upstream_label(pair_labels), i
    # rerun: every verdict served from the stage cache
    out.unlink()
    assert main(["baseline", "averitec", "from-stage", "--stage-file", str(env["root"] / "dev_top_3_rerank_qa.json"),
                 "--claims", str(env["dev"]), "--config", str(env["config"]), "--out", str(out), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["stage_cache"]["verdict"] == {"cached": 5, "computed": 0}
    assert json.loads(out.read_text()) == preds


def test_qa_file_is_reranked_by_the_shipped_reranker(env: dict[str, Any], tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    import torch

    out = tmp_path / "pred.json"
    assert main(["baseline", "averitec", "from-stage", "--stage-file", str(env["root"] / "dev_top_k_qa.json"),
                 "--claims", str(env["dev"]), "--config", str(env["config"]), "--out", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ran"] == ["reranker", "verdict", "justification"]
    preds = json.loads(out.read_text())
    for i, p in enumerate(preds):
        claim = env["claims"][i]["claim"]
        # upstream reranker input: claim </s> question </s> answer; keep the top 3 by P(relevant)
        scores = [float(torch.softmax(logits(env["reranker"], f"{claim} </s> {q} </s> {a}"), -1)[1])
                  for q, a, _ in env["qau"][i]]
        top = sorted(range(6), key=lambda k: -scores[k])[:3]
        assert [e["question"] for e in p["evidence"]] == [env["qau"][i][k][0] for k in top], i


def test_sentence_file_runs_questions_then_the_rest(env: dict[str, Any], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pred.json"
    assert main(["baseline", "averitec", "from-stage", "--stage-file", str(env["root"] / "dev_top_k_sentences.json"),
                 "--claims", str(env["dev"]), "--config", str(env["config"]), "--out", str(out), "--json",
                 "--limit", "2"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["ran"][0] == "questions" and summary["n_claims"] == 2
    preds = json.loads(out.read_text())
    sentences = {s for _, s, _ in env["qau"][0]}
    assert len(preds[0]["evidence"]) == 3 and {e["answer"] for e in preds[0]["evidence"]} <= sentences


def test_stage_file_errors_are_one_line_and_write_nothing(env: dict[str, Any], tmp_path: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps({"claim_id": 0, "claim": "Something else.", "evidence": []}) + "\n")
    out = tmp_path / "pred.json"
    base = ["baseline", "averitec", "from-stage", "--claims", str(env["dev"]), "--config", str(env["config"]),
            "--out", str(out)]
    assert main([*base, "--stage-file", str(bad), "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "claim_id 0: its claim differs" in err
    assert main([*base, "--stage-file", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no record for claim_id 1" in err and "(4 of 5 claims missing)" in err
    bad.write_text('{"claim_id": 0, "claim": "x", "label": "y"}\n')
    assert main([*base, "--stage-file", str(bad)]) == 2
    assert f"{bad}:1: not an upstream stage record" in capsys.readouterr().err
    assert not out.exists()


def test_convert_checkpoint_cli(env: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "rr"
    assert main(["baseline", "averitec", "convert-checkpoint", str(env["root"] / "bert_dual_encoder.ckpt"),
                 "--kind", "reranker", "--base", str(env["models"]["bert"]), "--out", str(out), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    assert got["labels"] == ["irrelevant", "relevant"] and (out / "manifest.json").is_file()
    assert main(["baseline", "averitec", "convert-checkpoint", str(tmp_path / "absent.ckpt"), "--kind", "verdict",
                 "--out", str(tmp_path / "v")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "absent.ckpt: no such checkpoint file" in err


def test_bounded_question_generation_stops_at_the_question(env: dict[str, Any]) -> None:
    """``paper-bounded`` passes a stop at "?" and a 256-token cap to generate; ``paper``
    keeps upstream's max_length 5000; a tiny BLOOM never runs past the cap."""
    from dataclasses import replace

    from averitec_tools.baselines.averitec.config import builtin_config
    from averitec_tools.baselines.averitec.io.data import read_claims
    from averitec_tools.baselines.averitec.stages.questions import (
        QUESTION_END_MAX_NEW_TOKENS,
        CausalLMQuestionWriter,
    )

    train = read_claims(env["dev"])
    seen: list[dict[str, Any]] = []
    for name in ("paper-bounded", "paper"):
        cfg = builtin_config(name).questions
        writer = CausalLMQuestionWriter(config=replace(cfg, model=str(env["models"]["bloom"]), device="cpu",
                                                       few_shot=2, **({"max_length": 300} if name == "paper" else {})),
                                        train=train)
        lm, _ = writer._load()
        original = lm.generate

        def spy(original: Any = original, **kw: Any) -> Any:
            out = original(**kw)
            seen.append({**{k: kw.get(k) for k in ("max_new_tokens", "max_length", "stop_strings")},
                         "new": int(out.shape[1] - kw["input_ids"].shape[1])})
            return out

        lm.generate = spy
        assert len(writer.write(["The moon was seen on Monday."])) == 1
    bounded, upstream = seen
    assert bounded["stop_strings"] == ["?"] and bounded["max_new_tokens"] == QUESTION_END_MAX_NEW_TOKENS == 256
    assert 1 <= bounded["new"] <= 256
    assert upstream["stop_strings"] is None and upstream["max_length"] == 300 and upstream["max_new_tokens"] is None
    assert builtin_config("paper-bounded").departures() == ["questions.stop='question-end' (upstream: 'none')",
                                                            "questions.batch_size=16 (upstream: 1)"]
    assert builtin_config("paper").departures() == []
