"""R2VC generator training (stage 9): settings, SFT/DPO data, TRL trainers on a tiny LM, CLI."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from _cli import exit_code, usage_error

from averitec_tools.baselines.r2vc.stages.generation.generator import parse_candidate
from averitec_tools.baselines.r2vc.stages.generation.prompt import render_prompt
from averitec_tools.baselines.r2vc.training.config import DPOSettings, SFTSettings
from averitec_tools.baselines.r2vc.training.data import (
    build_preference_pairs,
    chosen_response,
    rejected_response,
    sft_record,
)
from averitec_tools.baselines.r2vc.training.layout import draw_layouts
from averitec_tools.baselines.r2vc.training.rows import TrainingRow, read_training_rows
from averitec_tools.cli.baseline_r2vc_train import main as training_main
from averitec_tools.errors import UserError

ROWS = [
    TrainingRow(
        claim=f"Claim number {i} about the city.",
        evidence_text=f"The city had {1000 + i} residents in {1990 + i}.",
        label=("True", "False", "Uncertain")[i % 3],
        title=f"City {i}",
        row_id=f"r{i}",
    )
    for i in range(8)
]


def _write_jsonl(path: Path, records: list[object]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- settings


def test_sft_defaults_are_table_g1() -> None:
    s = SFTSettings()
    assert (s.learning_rate, s.lr_scheduler_type, s.warmup_ratio, s.weight_decay) == (2e-4, "cosine", 0.03, 0.1)
    assert (s.per_device_train_batch_size, s.gradient_accumulation_steps, s.max_length) == (2, 8, 8192)
    assert s.num_train_epochs == 1.0 and s.model == "nvidia/Llama-3.1-Nemotron-Nano-8B-v1"


def test_dpo_defaults_are_table_g1() -> None:
    d = DPOSettings()
    assert (d.beta, d.learning_rate, d.weight_decay, d.max_target_length, d.max_length) == (0.2, 4e-6, 0.1, 512, 8192)
    assert (d.per_device_train_batch_size, d.gradient_accumulation_steps, d.num_train_epochs) == (2, 8, 1.0)


def test_auto_settings_resolve_to_gpu_recipe_or_cpu_fallbacks(monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools.baselines.r2vc.training import config

    assert SFTSettings().resolved(cuda=False) == {
        "optim": "adamw_torch",
        "bf16": False,
        "gradient_checkpointing": False,
        "attn_implementation": "sdpa",
    }
    monkeypatch.setattr(config, "find_spec", lambda name: object())  # bitsandbytes, flash-attn present
    assert SFTSettings().resolved(cuda=True) == {
        "optim": "paged_adamw_8bit",
        "bf16": True,
        "gradient_checkpointing": True,
        "attn_implementation": "flash_attention_2",
    }
    monkeypatch.setattr(config, "find_spec", lambda name: None)
    # CUDA without the train extra: a loud error, never a silent downgrade
    with pytest.raises(UserError, match=r"optim 'paged_adamw_8bit' needs bitsandbytes.*averitec-tools\[train\]"):
        SFTSettings().resolved(cuda=True)
    # flash-attn is a separate install: "auto" falls back to SDPA (the report says which ran) ...
    assert SFTSettings(optim="adamw_torch").resolved(cuda=True)["attn_implementation"] == "sdpa"
    # ... but asking for it explicitly without it is an error naming the two-step install
    with pytest.raises(UserError, match="needs flash-attn.*--no-build-isolation"):
        SFTSettings(optim="adamw_torch", attn_implementation="flash_attention_2").resolved(cuda=True)
    chosen = SFTSettings(optim="adamw_torch", attn_implementation="sdpa").resolved(cuda=True)
    assert (chosen["optim"], chosen["attn_implementation"]) == ("adamw_torch", "sdpa")
    explicit = SFTSettings(optim="adafactor", attn_implementation="sdpa", bf16=False,
                           gradient_checkpointing=True).resolved(cuda=True)
    assert (explicit["optim"], explicit["bf16"], explicit["gradient_checkpointing"]) == ("adafactor", False, True)


def test_trainer_kwargs_are_accepted_by_trl_configs(tmp_path: Path) -> None:
    from trl import DPOConfig, SFTConfig

    sft = SFTConfig(**SFTSettings().trainer_kwargs(output_dir=str(tmp_path), cuda=False))
    assert (sft.learning_rate, sft.warmup_steps, sft.weight_decay, sft.max_length) == (2e-4, 0.03, 0.1, 8192)
    assert getattr(sft.lr_scheduler_type, "value", sft.lr_scheduler_type) == "cosine" and sft.gradient_accumulation_steps == 8
    dpo = DPOConfig(**DPOSettings().trainer_kwargs(output_dir=str(tmp_path), cuda=False), beta=0.2)
    assert (dpo.learning_rate, dpo.beta) == (4e-6, 0.2) and getattr(dpo.lr_scheduler_type, "value", dpo.lr_scheduler_type) == "linear"


def test_settings_from_yaml(tmp_path: Path) -> None:
    flat = tmp_path / "flat.yaml"
    flat.write_text("learning_rate: 1.0e-4\nmax_steps: 3\nbf16: false\n", encoding="utf-8")
    s = SFTSettings.from_yaml(flat)
    assert (s.learning_rate, s.max_steps, s.bf16, s.weight_decay) == (1e-4, 3, False, 0.1)
    both = tmp_path / "both.yaml"
    both.write_text("sft:\n  learning_rate: 0.001\ndpo:\n  beta: 0.5\n", encoding="utf-8")
    assert SFTSettings.from_yaml(both).learning_rate == 0.001
    assert (DPOSettings.from_yaml(both).beta, DPOSettings.from_yaml(both).learning_rate) == (0.5, 4e-6)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("learning_rat: 0.1\n", r"bad.yaml: unknown key 'learning_rat' \(did you mean: learning_rate\b"),
        ("learning_rate: -1\n", "learning_rate must be > 0"),
        ("bf16: maybe\n", "bf16 must be true, false or 'auto'"),
        ("warmup_ratio: 1.5\n", r"warmup_ratio must be in \[0, 1\)"),
        ("- a\n- b\n", "expected a mapping"),
        ("a: [1,\n", "invalid YAML"),
    ],
)
def test_bad_settings_files_are_user_errors(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(UserError, match=message):
        SFTSettings.from_yaml(path)


def test_dpo_settings_validation_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="beta must be > 0"):
        DPOSettings(beta=0)
    with pytest.raises(UserError, match="wrong_label_fraction"):
        DPOSettings(wrong_label_fraction=1.5)
    with pytest.raises(UserError, match="missing.yaml: no such settings file"):
        DPOSettings.from_yaml(tmp_path / "missing.yaml")


# ----------------------------------------------------------------------------- data


def test_read_rows_normalises_labels_and_fields(tmp_path: Path) -> None:
    path = _write_jsonl(
        tmp_path / "rows.jsonl",
        [
            {"claim": "a", "evidence_text": "e1", "label": "SUPPORTS", "page": "P", "unique_id": "u1"},
            {"claim": "b", "evidence": "e2", "label": "REFUTES"},
            {"claim": " c\n", "evidence_text": "e3", "label": "NOT ENOUGH INFO", "title": "T"},
            {"claim": "d", "evidence_text": "e4", "label": "nei"},
        ],
    )
    rows = read_training_rows(path)
    assert [r.label for r in rows] == ["True", "False", "Uncertain", "Uncertain"]
    assert (rows[0].title, rows[0].row_id, rows[2].claim, rows[2].title) == ("P", "u1", "c", "T")
    assert rows[1].row_id == f"{path}:2"
    assert len(read_training_rows(path, limit=2)) == 2


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ({"evidence_text": "e", "label": "SUPPORTS"}, r"rows.jsonl:2: missing field 'claim'"),
        ({"claim": "c", "evidence_text": "  ", "label": "SUPPORTS"}, r"rows.jsonl:2: field 'evidence_text' is empty"),
        ({"claim": "c", "evidence_text": "e", "label": "MAYBE"}, r"rows.jsonl:2: unknown ternary label 'MAYBE'"),
        ({"claim": "c", "evidence_text": "e", "label": 1}, r"rows.jsonl:2: field 'label' must be a string"),
        ({"claim": ["c"], "evidence_text": "e", "label": "SUPPORTS"}, r"rows.jsonl:2: field 'claim' must be a string"),
        (["not", "an", "object"], r"rows.jsonl:2: expected a JSON object"),
    ],
)
def test_bad_rows_name_file_and_line(tmp_path: Path, record: object, message: str) -> None:
    path = _write_jsonl(tmp_path / "rows.jsonl", [{"claim": "ok", "evidence_text": "e", "label": "REFUTES"}, record])
    with pytest.raises(UserError, match=message):
        read_training_rows(path)


def test_empty_data_file_is_a_user_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("", encoding="utf-8")
    with pytest.raises(UserError, match="empty.jsonl: file is empty"):
        read_training_rows(path)
    array = tmp_path / "empty.json"
    array.write_text("[]", encoding="utf-8")
    with pytest.raises(UserError, match="empty.json: no training rows"):
        read_training_rows(array)


def test_chosen_response_has_gold_label_quotes_and_cites_the_evidence() -> None:
    for row in ROWS[:3]:
        text = chosen_response(row)
        cand = parse_candidate(text, passages=[row.passage])
        assert (cand.label, cand.citations) == (row.label, (0,))
        assert f'"{row.evidence_text.rstrip(".")}"' in text
    assert chosen_response(ROWS[1]) == (
        'False. Because the evidence states "The city had 1001 residents in 1991", '
        "which contradicts the claim [1]."
    )


def test_sft_record_is_the_appendix_b_prompt_plus_the_chosen_response() -> None:
    rec = sft_record(ROWS[0])
    assert rec["prompt"][1]["content"].startswith(
        "Claim: Claim number 0 about the city.\nCandidate evidence:\n[1] City 0: The city had 1000"
    )
    assert rec["completion"] == [{"role": "assistant", "content": chosen_response(ROWS[0])}]


def test_preference_pairs_are_seeded_and_cover_both_corruptions() -> None:
    pairs = build_preference_pairs(ROWS, seed=4)
    assert pairs == build_preference_pairs(ROWS, seed=4)
    assert [p.rejection_kind for p in pairs] != [p.rejection_kind for p in build_preference_pairs(ROWS, seed=5)]
    assert {p.rejection_kind for p in pairs} == {"wrong_label", "mismatched_citation"}
    for pair in pairs:
        passages = [pair.row.passage]
        chosen = parse_candidate(pair.chosen, passages=passages)
        rejected = parse_candidate(pair.rejected, passages=passages)
        assert (chosen.label, chosen.citations) == (pair.row.label, (0,))
        if pair.rejection_kind == "wrong_label":
            assert rejected.label != pair.row.label and rejected.citations == (0,)
        else:
            # Right label, but it cites a passage the prompt does not have and quotes other evidence.
            assert rejected.label == pair.row.label and rejected.citations == ()
            assert "[2]" in pair.rejected and pair.row.evidence_text.rstrip(".") not in pair.rejected


def test_wrong_label_fraction_extremes() -> None:
    assert {p.rejection_kind for p in build_preference_pairs(ROWS, wrong_label_fraction=1.0)} == {"wrong_label"}
    assert {p.rejection_kind for p in build_preference_pairs(ROWS, wrong_label_fraction=0.0)} == {
        "mismatched_citation"
    }
    with pytest.raises(UserError):
        build_preference_pairs(ROWS, wrong_label_fraction=2.0)
    with pytest.raises(ValueError):
        rejected_response(ROWS[0], kind="other", rng=random.Random(0), other_evidence=[])


# ----------------------------------------------------------------------------- trainers (tiny LM)


@pytest.fixture()
def tiny() -> tuple[object, object]:
    from _r2vc_tiny import tiny_lm, tiny_tokenizer

    tok = tiny_tokenizer()
    return tiny_lm(tok), tok


def _fast(cls: type, **overrides: object):  # type: ignore[no-untyped-def]
    base = {
        "max_steps": 2,
        "per_device_train_batch_size": 2,
        "gradient_accumulation_steps": 1,
        "max_length": 512,
        "logging_steps": 1,
        "n_passages": 3,
    }
    return cls(**{**base, **overrides})


@pytest.mark.slow
def test_sft_loss_mask_covers_only_the_assistant_span(tiny, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from averitec_tools.baselines.r2vc.training.stages import build_trainer

    model, tok = tiny
    settings = _fast(SFTSettings, n_passages=4)
    trainer = build_trainer(stage="sft", settings=settings, examples=ROWS, output_dir=tmp_path, model=model, tokenizer=tok)
    batch = trainer.data_collator([trainer.train_dataset[i] for i in range(3)])
    layouts = draw_layouts(ROWS, n_passages=4, seed=settings.seed)  # the inference layout
    for row_index, row in enumerate(ROWS[:3]):
        ids, labels = batch["input_ids"][row_index], batch["labels"][row_index]
        layout = layouts[row_index]
        assert len(layout.passages) == 4 and layout.passages[layout.gold] == row.passage
        prompt_ids = tok(
            render_prompt(tokenizer=tok, claim=row.claim, passages=layout.passages), add_special_tokens=False
        )["input_ids"]
        n_prompt = len(prompt_ids)
        assert ids[:n_prompt].tolist() == prompt_ids
        assert (labels[:n_prompt] == -100).all()  # system + user tokens carry no loss
        answer = ids[labels != -100]
        assert labels[labels != -100].tolist() == answer.tolist()
        expected = tok(chosen_response(row, gold=layout.gold) + tok.eos_token, add_special_tokens=False)["input_ids"]
        assert answer.tolist() == expected  # exactly the assistant response and its EOS
        assert (labels[batch["attention_mask"][row_index] == 0] == -100).all()  # padding


@pytest.mark.slow
def test_sft_trains_a_few_steps_and_saves(tiny, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import torch

    from averitec_tools.baselines.r2vc.training.stages import train

    model, tok = tiny
    before = [p.detach().clone() for p in model.parameters()]
    report, trained = train(stage="sft", settings=_fast(SFTSettings), rows=ROWS, output_dir=tmp_path / "sft", model=model, tokenizer=tok)
    assert (report.stage, report.global_steps, report.n_examples, report.device) == ("sft", 2, 8, "cpu")
    assert report.final_loss is not None and math.isfinite(report.final_loss)
    assert any(not torch.equal(a, b.detach()) for a, b in zip(before, trained.parameters(), strict=True))
    saved = json.loads((tmp_path / "sft" / "r2vc_training.json").read_text())
    assert saved["settings"]["learning_rate"] == 2e-4 and saved["report"]["global_steps"] == 2
    assert not list(tmp_path.glob(".sft.*.tmp"))  # scratch directory moved into place


@pytest.mark.slow
def test_dpo_trains_a_few_steps_on_preference_pairs(tiny) -> None:  # type: ignore[no-untyped-def]
    from averitec_tools.baselines.r2vc.training.stages import train

    model, tok = tiny
    report, _ = train(stage="dpo", settings=_fast(DPOSettings), rows=ROWS, output_dir=None, model=model, tokenizer=tok)
    # 2 steps of 2 pairs: only the 4 pairs those steps use are built and tokenised (dpo.pairs_needed)
    assert (report.stage, report.global_steps, report.n_examples, report.n_dropped) == ("dpo", 2, 4, 0)
    steps = [r for r in report.log_history if "rewards/margins" in r]
    assert len(steps) == 2
    # Step 1: the policy equals the frozen reference, so the DPO loss is -log σ(0) = ln 2.
    assert math.isclose(steps[0]["loss"], math.log(2), abs_tol=1e-4)
    assert steps[0]["learning_rate"] == pytest.approx(4e-6)
    # fp32 master weights: one AdamW step at lr 4e-6 moves every sampled weight ...
    moved = report.run["weights"]
    assert moved["after_first_step"]["step"] == 1 and moved["final"]["changed_fraction"] == 1.0
    assert report.run["weights_dtype"] == "float32" and report.run["attention"] == "sdpa"
    # ... though most of those moves are below bf16 resolution (what a bf16 inference run sees)
    assert moved["final"]["changed_fraction_bf16"] < 0.5


@pytest.mark.slow
def test_dpo_on_bf16_weights_rounded_to_nearest_does_not_train_and_fails_loudly(tiny, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The defect the check exists for: bf16 weights round a 4e-6 AdamW step away (≈ 7 % move) when the
    optimizer writes its update back to nearest (``bf16_rounding: nearest``, the paper's literal recipe)."""
    import torch

    from averitec_tools.baselines.r2vc.training.stages import train
    from averitec_tools.baselines.r2vc.training.weights import WeightsDidNotMoveError

    model, tok = tiny
    settings = _fast(DPOSettings, master_weights="bf16", bf16_rounding="nearest", n_passages=1, max_steps=1)
    with pytest.raises(WeightsDidNotMoveError, match=r"dpo: only \d+\.\d% of the sampled weights changed after "
                       r"optimizer step 1 .*bf16 weights rounded to nearest lose updates this small"):
        train(stage="dpo", settings=settings, rows=ROWS[:2], output_dir=tmp_path / "dpo", model=model.to(torch.bfloat16),
                  tokenizer=tok)
    assert not (tmp_path / "dpo").exists() and not list(tmp_path.glob(".dpo.*"))  # nothing saved


def test_weight_probe_measures_sampled_changes_and_the_check_fails_below_the_floor() -> None:
    import torch

    from averitec_tools.baselines.r2vc.training.weights import (
        WeightProbe,
        WeightsDidNotMoveError,
        check_moved,
    )

    class Tiny(torch.nn.Sequential):
        def get_input_embeddings(self) -> torch.nn.Module:
            return self[0]

    torch.manual_seed(0)
    model = Tiny(torch.nn.Embedding(50, 8), torch.nn.Linear(8, 100))
    probe = WeightProbe(model, per_tensor=40)
    with torch.no_grad():
        model[1].weight[:10] += 1.0       # 10 of 100 rows: 10 % of the weight matrix
        model[0].weight += 1.0            # input embeddings are not counted
    m = probe.measure(model)
    # weight (800 elements, 40 sampled) and bias (100, 40 sampled) are the counted tensors
    assert m["tensors"] == 2 and m["tensors_changed"] <= 1
    assert 0.0 < m["changed_fraction"] < 0.3 and m["max_abs_change"] == pytest.approx(1.0)
    with pytest.raises(WeightsDidNotMoveError, match="below min_changed_fraction 0.5"):
        check_moved(m, stage="sft", when="at the end", min_changed_fraction=0.5, master_weights="fp32")
    check_moved(m, stage="sft", when="at the end", min_changed_fraction=0.0, master_weights="fp32")  # disabled
    with torch.no_grad():
        for param in model.parameters():
            param += 1e-3
    assert probe.measure(model)["changed_fraction"] == 1.0


def test_dpo_drops_pairs_longer_than_max_target_length(tiny) -> None:  # type: ignore[no-untyped-def]
    from averitec_tools.baselines.r2vc.training.dpo import filter_long_pairs

    _, tok = tiny
    pairs = build_preference_pairs(ROWS, seed=0)
    lengths = [
        max(len(tok(p.chosen, add_special_tokens=False)["input_ids"]), len(tok(p.rejected, add_special_tokens=False)["input_ids"]))
        for p in pairs
    ]
    limit = sorted(lengths)[3]
    kept, dropped = filter_long_pairs(pairs, tokenizer=tok, max_target_length=limit)
    assert dropped == sum(n > limit for n in lengths) and len(kept) + dropped == len(pairs)
    assert filter_long_pairs(pairs, tokenizer=tok, max_target_length=512) == (pairs, 0)


# ----------------------------------------------------------------------------- CLI


@pytest.fixture()
def saved_tiny(tmp_path: Path) -> Path:
    from _r2vc_tiny import tiny_lm, tiny_tokenizer

    tok = tiny_tokenizer()
    directory = tmp_path / "tiny-base"
    tiny_lm(tok).save_pretrained(directory)
    tok.save_pretrained(directory)
    return directory


@pytest.fixture()
def data_file(tmp_path: Path) -> Path:
    records = [
        {"claim": r.claim, "evidence_text": r.evidence_text, "label": {"True": "SUPPORTS", "False": "REFUTES"}.get(r.label, "NOT ENOUGH INFO"), "page": r.title}
        for r in ROWS
    ]
    return _write_jsonl(tmp_path / "train.jsonl", records)


@pytest.mark.slow
def test_cli_sft_then_dpo_then_generate(saved_tiny: Path, data_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from averitec_tools.baselines.r2vc.stages.generation.generator import HFGenerator
    from averitec_tools.baselines.r2vc.types import Passage

    config = tmp_path / "cfg.yaml"
    config.write_text(
        "sft:\n  per_device_train_batch_size: 2\n  gradient_accumulation_steps: 1\n  max_length: 512\n"
        "dpo:\n  per_device_train_batch_size: 2\n  gradient_accumulation_steps: 1\n  max_length: 512\n",
        encoding="utf-8",
    )
    sft_out, dpo_out = tmp_path / "sft", tmp_path / "dpo"
    common = ["--config", str(config), "--data", str(data_file), "--max-steps", "2", "--json"]
    assert training_main(["sft", *common, "--model", str(saved_tiny), "--out", str(sft_out), "--limit", "6"]) == 0
    report = json.loads(capsys.readouterr().out)  # stdout is exactly one JSON object
    assert (report["stage"], report["global_steps"], report["n_examples"]) == ("sft", 2, 6)
    assert (sft_out / "config.json").exists() and (sft_out / "r2vc_training.json").exists()

    assert training_main(["dpo", *common, "--model", str(sft_out), "--out", str(dpo_out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["stage"], report["global_steps"], report["n_examples"]) == ("dpo", 2, 4)

    gen = HFGenerator(str(dpo_out), device="cpu", max_new_tokens=4)
    result = gen.generate("claim", [Passage(doc_id="d", title="t", url="", text="x")], k=2, seed=0)
    assert len(result.candidates) == 2 and result.n_malformed <= 2  # unparseable outputs: Uncertain candidates


def test_cli_errors_exit_2_with_one_line(saved_tiny: Path, data_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    existing = tmp_path / "exists"
    existing.mkdir()
    assert training_main(["sft", "--data", str(data_file), "--out", str(existing), "--model", str(saved_tiny)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "output directory already exists (pass --overwrite" in err

    bad = _write_jsonl(tmp_path / "bad.jsonl", [{"claim": "c", "evidence_text": "e", "label": "maybe"}])
    assert training_main(["dpo", "--data", str(bad), "--out", str(tmp_path / "o1"), "--model", str(saved_tiny)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "bad.jsonl:1: unknown ternary label 'maybe'" in err

    cfg = tmp_path / "c.yaml"
    cfg.write_text("betta: 0.3\n", encoding="utf-8")
    assert training_main(["dpo", "--config", str(cfg), "--data", str(data_file), "--out", str(tmp_path / "o2")]) == 2
    assert "unknown key 'betta' (did you mean: beta" in capsys.readouterr().err

    assert exit_code(training_main, ["sft", "--data", str(data_file), "--out", str(tmp_path / "o3"), "--max-steps", "0"]) == 2
    assert usage_error(capsys.readouterr().err).endswith("argument --max-steps: expected a whole number of at least 1, got '0'")

    missing_model = tmp_path / "no-model"
    assert training_main(["sft", "--data", str(data_file), "--out", str(tmp_path / "o4"), "--model", str(missing_model)]) == 2
    assert "cannot load causal LM" in capsys.readouterr().err
    assert not (tmp_path / "o4").exists() and not list(tmp_path.glob(".o4.*"))  # nothing half-written


@pytest.mark.parametrize("argv", [["sft"], ["rl", "--data", "d", "--out", "o"], ["sft", "--data", "d"]])
def test_cli_argument_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        training_main(argv)
    assert info.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_split_safe_rows_drop_non_train_and_excluded_claims(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from averitec_tools.baselines.r2vc.training.run import split_safe_rows

    records = [{"claim": f"c{i}", "evidence_text": "e", "label": "SUPPORTS", "split": s}
               for i, s in enumerate(["train", "dev", "test", "train"])]
    data = _write_jsonl(tmp_path / "all.jsonl", records)
    rows = read_training_rows(data)
    kept, dropped = split_safe_rows(rows, data=str(data), all_splits=False, exclude=[])
    assert [r.claim for r in kept] == ["c0", "c3"] and dropped == {"dropped_split": 2, "dropped_excluded": 0}
    assert capsys.readouterr().err == ""
    slice_file = _write_jsonl(tmp_path / "slice.jsonl", [{"claim": "c3"}])
    kept, dropped = split_safe_rows(rows, data=str(data), all_splits=True, exclude=[str(slice_file)])
    assert [r.claim for r in kept] == ["c0", "c1", "c2"] and dropped == {"dropped_split": 0, "dropped_excluded": 1}
    assert "contaminates VitaminC evaluation" in capsys.readouterr().err


# ----------------------------------------------------------------------------- inference layout, reasoning


def test_training_prompts_put_the_gold_passage_anywhere_among_unrelated_distractors() -> None:
    rows = [TrainingRow(claim=f"claim {i}", evidence_text=f"evidence {i}.", label=("True", "False")[i % 2],
                        title=f"Page {i // 2}", row_id=f"r{i}", group=f"case{i // 2}") for i in range(40)]
    layouts = draw_layouts(rows, n_passages=5, seed=3)
    assert layouts == draw_layouts(rows, n_passages=5, seed=3)
    assert {layout.gold for layout in layouts} == set(range(5))  # not always [1]
    for row, layout in zip(rows, layouts, strict=True):
        assert len(layout.passages) == 5 and layout.passages[layout.gold] == row.passage
        others = [p for i, p in enumerate(layout.passages) if i != layout.gold]
        # never a sibling of the same case or page (it could decide the claim), never a repeat
        assert all(p.title != row.title for p in others) and len({p.text for p in others}) == 4
    # DPO: chosen cites the gold position; a mismatched citation quotes and cites a distractor
    pairs = build_preference_pairs(rows, seed=1, wrong_label_fraction=0.0, n_passages=5, layout_seed=3)
    cited = set()
    for pair in pairs:
        assert pair.layout is not None
        chosen = parse_candidate(pair.chosen, passages=pair.layout.passages)
        rejected = parse_candidate(pair.rejected, passages=pair.layout.passages)
        assert chosen.citations == (pair.layout.gold,) and rejected.label == pair.row.label
        assert len(rejected.citations) == 1 and rejected.citations[0] in pair.layout.distractors
        assert pair.layout.passages[rejected.citations[0]].text.rstrip(".") in pair.rejected
        cited.add(rejected.citations[0])
    assert len(cited) >= 4  # the wrong citation is not always [2]
    # with one passage: the paper's single snippet, and the old out-of-prompt citation
    single = build_preference_pairs(rows[:4], seed=0, wrong_label_fraction=0.0)
    assert all(p.layout is not None and len(p.layout.passages) == 1 and "[2]" in p.rejected for p in single)


def test_sft_records_carry_the_reasoning_switch_and_the_layout() -> None:
    from averitec_tools.baselines.r2vc.stages.generation.prompt import SYSTEM_PROMPT
    from averitec_tools.baselines.r2vc.training.data import build_sft_dataset

    ds = build_sft_dataset(ROWS, n_passages=3, seed=0, system="detailed thinking off")
    first = ds[0]
    assert first["prompt"][0] == {"role": "system", "content": "detailed thinking off"}
    assert first["prompt"][1]["content"].startswith(SYSTEM_PROMPT + "\nClaim: ")
    assert first["prompt"][1]["content"].count("\n[") == 3


def test_reasoning_mode_resolution_and_budget(tmp_path: Path) -> None:
    from averitec_tools.baselines.r2vc.stages.generation.reasoning import (
        check_budget,
        resolve_reasoning,
    )

    nano = "nvidia/Llama-3.1-Nemotron-Nano-8B-v1"
    assert resolve_reasoning(model=nano).system == "detailed thinking off"
    assert resolve_reasoning(model=nano, requested="on").system == "detailed thinking on"
    assert resolve_reasoning(model=nano, requested="none").system is None
    with pytest.raises(UserError, match="no known reasoning switch"):
        resolve_reasoning(model="meta-llama/Llama-3.1-8B-Instruct", requested="on")
    # a trained model directory records its mode; inference follows it
    trained = tmp_path / "dpo"
    trained.mkdir()
    (trained / "r2vc_training.json").write_text(json.dumps({"prompt": {"reasoning": {
        "mode": "off", "system": "detailed thinking off", "family": "llama-nemotron-nano"}}}))
    assert resolve_reasoning(model=str(trained)).mode == "off"
    with pytest.raises(UserError, match="trained with reasoning 'off', asked for 'on'"):
        resolve_reasoning(model=str(trained), requested="on")
    with pytest.raises(UserError, match="max_new_tokens 160 leaves no room"):
        check_budget(resolve_reasoning(model=nano, requested="on"), max_new_tokens=160)
    check_budget(resolve_reasoning(model=nano, requested="on"), max_new_tokens=2048)


def test_settings_refuse_unknown_precision_and_reasoning() -> None:
    with pytest.raises(UserError, match="master_weights must be 'fp32' or 'bf16'"):
        SFTSettings(master_weights="fp16")
    with pytest.raises(UserError, match="reasoning must be one of auto, off, on, none"):
        DPOSettings(reasoning="maybe")
    with pytest.raises(UserError, match="n_passages must be >= 1"):
        SFTSettings(n_passages=0)
