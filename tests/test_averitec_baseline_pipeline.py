"""The AVeriTeC baseline end to end through the CLI: the HF paths (BLOOM questions, BERT
reranker and verdict, BART justification) with tiny randomly initialised models built from
configs, the fallbacks, variants, formats, resume, training commands and bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _averitec_baseline_fixtures import claims, tiny_models, write_json
from _cli import exit_code, usage_error

from averitec_tools.cli.main import main

pytestmark = pytest.mark.slow

SMALL_TRAIN = {"max_pairs": 24, "epochs": 2, "batch_size": 8, "max_length": 48, "heldout": 0.2, "device": "cpu"}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("averitec-baseline")
    models = tiny_models(root)
    train = write_json(root / "train.json", claims("train", 12))
    dev = write_json(root / "dev.json", claims("dev", 4))
    assert main(["baseline", "averitec", "build-store", "--claims", str(dev), "--out", str(root / "store"),
                 "--distractors", "3"]) == 0
    (root / "store" / "3.json").unlink()  # a claim without a store file
    hf = {"base": "offline-minilm", "data": {"train": str(train), "cache_dir": str(root / "cache")},
          "questions": {"model": str(models["bloom"]), "batch_size": 4, "max_new_tokens": 6, "few_shot": 2},
          "reranker": {"base": str(models["bert"]), "train": SMALL_TRAIN},
          "verdict": {"base": str(models["bert"]), "train": SMALL_TRAIN, "train_evidence": "gold"},
          "justification": {"model": str(models["bart"]), "max_new_tokens": 8, "untrained": True,
                            "train": {"max_pairs": 6, "epochs": 1, "batch_size": 3, "max_length": 64,
                                      "device": "cpu"}},
          # the stage mechanics under test; the decision slice's choices: tests/test_averitec_decision.py
          # (the issue-37 settings, retrieved verdict training and the claim head: tests/test_averitec_claim_head.py)
          "decision": {"reranker": "always", "label_bias": "none", "head": "none"}}
    fallback = {**hf, "questions": {"model": "retrieval-fallback"}, "justification": {"model": "extractive-fallback"}}
    import yaml

    (root / "hf.yaml").write_text(yaml.safe_dump(hf))
    (root / "fallback.yaml").write_text(yaml.safe_dump(fallback))
    return {"root": root, "models": models, "train": train, "dev": dev, "store": root / "store",
            "hf": root / "hf.yaml", "fallback": root / "fallback.yaml"}


def _run(env: dict[str, Any], capsys: pytest.CaptureFixture[str], *extra: str, config: str = "hf",
         out: str = "preds.json") -> tuple[int, Any, str]:
    code = main(["baseline", "averitec", "--config", str(env[config]), "--claims", str(env["dev"]),
                 "--store", str(env["store"]), "--out", str(env["root"] / out), "--json", *extra])
    cap = capsys.readouterr()
    return code, json.loads(cap.out) if code == 0 else None, cap.err


def test_hf_path_end_to_end_and_scored(env: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    code, summary, err = _run(env, capsys, "--write-gold-subset", str(env["root"] / "gold.json"))
    assert code == 0, err
    comp = summary["components"]
    assert comp["questions"].startswith(str(env["models"]["bloom"]))
    assert comp["justification"].startswith(str(env["models"]["bart"]))
    assert comp["reranker"].split("@")[1].startswith("train-") and comp["verdict"].split("@")[1].startswith("train-")
    assert summary["fallbacks"] == {"no-evidence-placeholder": 1, "no-store-file": 1}
    assert summary["missing_store_files"] == 1 and summary["n_claims"] == 4
    assert set(summary["seconds"]) == {"store", "retrieval", "questions", "reranker", "verdict", "justification"}
    preds = json.loads((env["root"] / "preds.json").read_text())
    assert [p["claim_id"] for p in preds] == [0, 1, 2, 3]
    assert all(len(p["evidence"]) <= 3 and p["components"] == comp for p in preds)
    assert preds[3]["pred_label"] == "Not Enough Evidence" and "no-store-file" in preds[3]["fallbacks"]
    assert all(abs(sum(p["probabilities"].values()) - 1) < 1e-5 for p in preds)
    assert all(p["confidence"] == p["probabilities"][p["pred_label"]] for p in preds)
    assert not list(env["root"].glob("preds.json.partial*"))
    assert main(["score", str(env["root"] / "preds.json"), str(env["root"] / "gold.json"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_claims"] == 4
    assert main(["calibration", str(env["root"] / "preds.json"), str(env["root"] / "gold.json"), "--json"]) == 0


def test_fallbacks_declared_and_2023_format(env: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    code, summary, err = _run(env, capsys, "--format", "2023", config="fallback", out="p2023.json")
    assert code == 0, err
    assert summary["components"]["questions"] == "retrieval-fallback"
    assert summary["components"]["justification"] == "extractive-fallback"
    assert summary["fallbacks"]["extractive-fallback"] == 4
    assert summary["fallbacks"]["retrieval-fallback"] > 0
    assert summary["retrieval_recall_at_k"] == 1.0  # tiny stores: every gold sentence is in the top 100
    preds = json.loads((env["root"] / "p2023.json").read_text())
    assert preds[0]["justification"].startswith(preds[0]["label"] + ". The evidence says:")
    gold = write_json(env["root"] / "gold4.json", json.loads(env["dev"].read_text()))
    assert main(["score", str(env["root"] / "p2023.json"), str(gold), "--profile", "averitec2023"]) == 0
    capsys.readouterr()


@pytest.mark.parametrize("variant", ["no-reranker", "claim-only", "gold-evidence"])
def test_variants(env: dict[str, Any], capsys: pytest.CaptureFixture[str], variant: str) -> None:
    code, summary, err = _run(env, capsys, "--variant", variant, "--limit", "2", config="fallback",
                              out=f"{variant}.json")
    assert code == 0, err
    preds = json.loads((env["root"] / f"{variant}.json").read_text())
    assert len(preds) == 2
    if variant == "gold-evidence":
        assert [e["question"] for e in preds[0]["evidence"]] == ["What happened to the moon?",
                                                                  "Who reported the moon?"]
    if variant == "claim-only":
        assert summary["fallbacks"] == {"extractive-fallback": 2, "no-evidence-placeholder": 2}
        assert summary["components"]["retrieval"] == "skipped (claim-only variant)"
    if variant == "no-reranker":
        assert summary["components"]["reranker"] == "bm25-order (no-reranker variant)"


def test_resume_continues_a_partial_run(env: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = _run(env, capsys, config="fallback", out="full.json")
    assert code == 0
    full = json.loads((env["root"] / "full.json").read_text())
    # Simulate an interruption after two claims (and a cut third line).
    from averitec_tools.baselines._run.sidecar import claims_fingerprint, sidecar_header
    from averitec_tools.baselines.averitec.config import resolve_config

    cfg = resolve_config(str(env["fallback"]))
    header = sidecar_header("averitec", config=cfg.fingerprint(), format="2024",
                            claims=claims_fingerprint([0, 1, 2, 3]), variant="full")
    partial = env["root"] / "resumed.json.partial.jsonl"
    rec = {**full[0], "label": full[0]["pred_label"], "justification": "kept from the first run", "extra": {}}
    rec.pop("pred_label")
    partial.write_text(json.dumps(header) + "\n" + json.dumps({"key": "0", "record": rec}) + "\n"
                       + '{"key": "1", "record": {"claim_id": 1, "cla')
    code, _, err = _run(env, capsys, config="fallback", out="resumed.json")
    assert code == 2 and "--resume" in err and "--overwrite" in err  # never discarded silently
    code, summary, err = _run(env, capsys, "--resume", config="fallback", out="resumed.json")
    assert code == 0, err
    assert summary["n_resumed"] == 1
    resumed = json.loads((env["root"] / "resumed.json").read_text())
    assert resumed[0]["justification"] == "kept from the first run"
    assert [r["pred_label"] for r in resumed[1:]] == [r["pred_label"] for r in full[1:]]
    assert not partial.exists()


def test_train_commands_write_manifests(env: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    for stage in ("reranker", "verdict", "justification"):
        out = env["root"] / f"ckpt-{stage}"
        code = main(["baseline", "averitec", "train", stage, "--config", str(env["hf"]), "--out", str(out),
                     "--exclude-claims", str(env["dev"]), "--json"])
        assert code == 0, capsys.readouterr().err
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["kind"] == stage and manifest["data"]["sha256"] and manifest["versions"]["torch"]
        assert manifest["data"]["claims"] == 12 and manifest["settings"]["seed"] == 0
        assert json.loads(capsys.readouterr().out)["out"] == str(out)


def test_training_never_uses_scored_claims(env: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["baseline", "averitec", "train", "verdict", "--config", str(env["hf"]), "--out",
                 str(env["root"] / "v2"), "--exclude-claims", str(env["train"]), "--json"])
    assert code == 2 and "no training examples" in capsys.readouterr().err


def test_bad_input(env: dict[str, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    def err_of(*argv: str) -> str:
        assert main(["baseline", "averitec", *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "Traceback" not in err
        return err

    base = ["--claims", str(env["dev"]), "--out", str(tmp_path / "p.json")]
    assert "no-such-org/no-such-model" in err_of("--config", str(_yaml(tmp_path, {
        "base": "offline-minilm", "questions": {"model": "no-such-org/no-such-model"}})), "--store",
        str(env["store"]), *base)
    assert "unknown key 'rerankr' (did you mean: reranker" in err_of("--config", str(_yaml(tmp_path, {"rerankr": {}})), *base)
    assert "does not exist" in err_of("--config", str(env["fallback"]), "--store", str(tmp_path / "none"), *base)
    assert "--store DIR is required" in err_of("--config", str(env["fallback"]), *base)
    bad = tmp_path / "bad-store"
    bad.mkdir()
    (bad / "0.json").write_text("{oops\n")
    assert "0.json:1:" in err_of("--config", str(env["fallback"]), "--store", str(bad), *base)
    # paper refuses the un-fine-tuned BART unless the config names that ablation
    assert "justification.checkpoint is not set" in err_of("--config", "paper", "--store", str(env["store"]), *base)
    extractive = str(_yaml(tmp_path, {"base": "paper", "justification": {"model": "extractive-fallback"}}))
    assert "'bigscience/bloom-7b1' is not in the local" in err_of("--config", extractive, "--store", str(env["store"]),
                                                                  *base)
    assert "verdict.checkpoint is not set" in err_of("--config", extractive, "--variant", "gold-evidence", *base)
    untrained = str(_yaml(tmp_path, {"base": "paper", "justification": {"untrained": True}}))
    assert "'facebook/bart-large' is not in the local" in err_of("--config", untrained, "--variant", "gold-evidence",
                                                                 *base)
    assert not (tmp_path / "p.json").exists()


def _yaml(tmp_path: Path, data: dict) -> Path:
    import yaml

    p = tmp_path / f"c{len(list(tmp_path.glob('c*.yaml')))}.yaml"
    p.write_text(yaml.safe_dump(data))
    return p


def _own_cache_config(env: dict[str, Any], name: str, cache: str, **overrides: Any) -> Path:
    import yaml

    cfg = yaml.safe_load(env["hf"].read_text())
    cfg["data"] = {**cfg["data"], "cache_dir": str(env["root"] / f"cache-{cache}")}
    for section, values in overrides.items():
        cfg[section] = {**cfg.get(section, {}), **values}
    path = env["root"] / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_stage_cache_reused_by_variants_and_verdict_reruns(env: dict[str, Any],
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    from averitec_tools.baselines.averitec.build import build_pipeline
    from averitec_tools.baselines.averitec.config import resolve_config
    from averitec_tools.baselines.averitec.io.data import read_claims
    from averitec_tools.baselines.averitec.variants import get_variant

    cfg_path = _own_cache_config(env, "stages", "stages")
    env["stages"] = cfg_path
    code, first, err = _run(env, capsys, config="stages", out="c-full.json")
    assert code == 0, err
    assert first["stage_cache"]["questions"] == {"cached": 0, "computed": 3} and first["cached_stages"] == []
    # no-reranker: same retrieval and questions, read back; the LM is never loaded
    claims = read_claims(env["dev"])
    pipe = build_pipeline(config=resolve_config(str(cfg_path)), variant=get_variant("no-reranker"),
                          store=str(env["store"]), claims=claims)
    summary = pipe.run(claims, out=str(env["root"] / "c-norr.json"), output_format="2024").to_dict()
    assert summary["stage_cache"]["questions"] == {"cached": 3, "computed": 0}
    assert summary["cached_stages"] == ["retrieval", "questions"] and pipe.question_writer._model is None
    # another verdict model: everything up to the reranker is cached, the verdict is not
    env["stages2"] = _own_cache_config(env, "stages2", "stages", verdict={"train": {"seed": 1}})
    code, rerun, err = _run(env, capsys, config="stages2", out="c-full2.json")
    assert code == 0, err
    assert rerun["cached_stages"] == ["retrieval", "questions", "reranker"]
    assert rerun["stage_cache"]["verdict"]["computed"] == 4 and rerun["components"]["verdict"] != first["components"][
        "verdict"]
    code = main(["baseline", "averitec", "--config", str(cfg_path), "--claims", str(env["dev"]), "--store",
                 str(env["store"]), "--out", str(env["root"] / "c-full3.json")])
    text = capsys.readouterr().out
    assert code == 0 and "cached: retrieval, questions, reranker, verdict, justification" in text
    assert "peak process memory" in text and "departures from the upstream code: " in text
    preds = [json.loads((env["root"] / f).read_text()) for f in ("c-full.json", "c-full3.json")]
    assert preds[0] == preds[1]  # cached results reproduce the computed ones exactly


def test_summary_efficiency_and_departures(env: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    code, summary, err = _run(env, capsys, "--no-stage-cache", out="eff.json")
    assert code == 0, err
    assert set(summary["seconds_per_claim"]) == {"store", "retrieval", "questions", "reranker", "verdict",
                                                 "justification"}
    assert summary["seconds_per_claim_total"] >= max(summary["seconds_per_claim"].values())
    assert summary["memory"]["peak_rss_mb"] > 100 and summary["memory"]["peak_gpu_mb"] is None  # CPU run
    assert summary["stage_cache"]["questions"] == {"cached": 0, "computed": 3}  # nothing read, nothing kept
    assert "questions.max_new_tokens=6 (upstream: None)" in summary["departures"]
    assert "justification.untrained=True (upstream: False)" in summary["departures"]
    assert any("held-out training claims" in d for d in summary["departures"])
    assert summary["components"]["justification"].endswith("(untrained ablation)")


def test_bloom_loads_straight_onto_the_device(monkeypatch: pytest.MonkeyPatch, env: dict[str, Any]) -> None:
    from transformers import AutoModelForCausalLM

    from averitec_tools.baselines.averitec import models

    seen: dict[str, Any] = {}

    def fake(location: str, **kwargs: Any) -> Any:
        seen.update(kwargs)
        raise OSError("stop here")

    monkeypatch.setattr(AutoModelForCausalLM, "from_pretrained", fake)
    with pytest.raises(Exception, match="stop here"):
        models.load_causal_lm(model=str(env["models"]["bloom"]), device="cuda")
    assert seen["device_map"] == "cuda" and str(seen["dtype"]) == "torch.bfloat16"


def test_reproduce_trains_runs_scores_and_tabulates(env: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    import yaml

    m = env["models"]
    cfg = {"base": "paper", "data": {"train": str(env["train"]), "cache_dir": str(env["root"] / "cache-repro")},
           "questions": {"model": str(m["bloom"]), "max_new_tokens": 6, "few_shot": 2, "batch_size": 4},
           "reranker": {"base": str(m["bert"]), "train": SMALL_TRAIN},
           "verdict": {"base": str(m["bert"]), "train": SMALL_TRAIN},
           "justification": {"model": str(m["bart"]), "max_new_tokens": 8,
                             "train": {"max_pairs": 6, "epochs": 2, "batch_size": 3, "max_length": 64,
                                       "heldout": 0.2, "device": "cpu"}}}
    (env["root"] / "repro.yaml").write_text(yaml.safe_dump(cfg))
    out = env["root"] / "repro"
    argv = ["baseline", "averitec", "reproduce", "--config", str(env["root"] / "repro.yaml"), "--claims",
            str(env["dev"]), "--store", str(env["store"]), "--out", str(out), "--variants", "full,no-reranker",
            "--json"]
    assert main(argv) == 0, capsys.readouterr().err
    report = json.loads(capsys.readouterr().out)
    assert {k: v["trained"] for k, v in report["trained"].items()} == {"reranker": True, "verdict": True,
                                                                         "justification": True}
    assert report["trained"]["justification"]["heldout_metric"] == "meteor"
    assert all(isinstance(x, float) for x in report["trained"]["justification"]["heldout_per_epoch"])
    rows = [ln for ln in (out / "table.md").read_text().splitlines() if ln.startswith("| paper |")]
    assert [r.split(" | ")[1] for r in rows] == ["full", "no-reranker"]
    full = report["variants"]["full"]
    assert full["run"]["components"]["justification"].startswith(str(out / "checkpoints" / "justification-"))
    assert full["score"]["n_claims"] == 4 and (out / "full.pred.json").is_file() and (out / "config.yaml").is_file()
    assert report["variants"]["no-reranker"]["run"]["cached_stages"] == ["retrieval", "questions"]
    # a second reproduction reuses the checkpoints and every cached stage
    assert main(argv) == 0
    again = json.loads(capsys.readouterr().out)
    assert not any(v["trained"] for v in again["trained"].values())
    assert again["variants"]["full"]["run"]["cached_stages"] == ["retrieval", "questions", "reranker", "verdict",
                                                                 "justification"]


def test_reproduce_bad_input(env: dict[str, Any], capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    base = ["baseline", "averitec", "reproduce", "--config", str(env["fallback"]), "--claims", str(env["dev"]),
            "--out", str(tmp_path / "r")]
    for extra, message in ((["--variants", "fulll"], "unknown variant 'fulll'"), ([], "--store DIR is required")):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1
    assert exit_code(main, [*base, "--limit", "0"]) == 2  # range-checked when parsed: argparse's usage error
    assert usage_error(capsys.readouterr().err).endswith("argument --limit: expected a whole number of at least 1, got '0'")
    assert not (tmp_path / "r").exists()
