"""BatchScorer: the same results as cold ``averitec score`` runs, warm across calls; the TRL reward."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _score_fixtures import GOLD, PRED_2024, make_files, write_json
from test_profiles_averitec import RECORDED, assert_same_figures

from averitec_tools.errors import UserError
from averitec_tools.metrics.hungarian_meteor import assignment_utility
from averitec_tools.scoring import BatchScorer
from averitec_tools.scoring.evidence_strings import qa_strings
from averitec_tools.scoring.profiles import get_profile
from averitec_tools.scoring.rewards import hungarian_meteor_reward

REFERENCE = json.loads((Path(__file__).parent / "data" / "nltk391_reference.json").read_text(encoding="utf-8"))


def _same(a: Any, b: Any) -> None:
    assert a.summary == b.summary and a.signature == b.signature
    assert [c.values for c in a.per_claim] == [c.values for c in b.per_claim]


@pytest.mark.parametrize(("profile", "pred", "gold"), [
    ("averitec2024", "pred2024", "gold"), ("averitec2023", "pred2023", "gold"), ("evalai", "pred_evalai", "gold_evalai"),
])
def test_score_equals_a_cold_run_every_time(tmp_path: Path, profile: str, pred: str, gold: str) -> None:
    files = make_files(tmp_path)
    cold = get_profile(profile).score(predictions=files[pred], references=files[gold], jobs=1)
    scorer = BatchScorer(profile=profile, references=files[gold], allow_download=False)
    for _ in range(2):  # the second call meets a warm engine
        _same(scorer.score(files[pred]), cold)
    assert scorer.engine.is_prepared(scorer.gold_evidence(0)[0])  # the gold side stays prepared


def test_records_score_as_their_file(tmp_path: Path) -> None:
    files = make_files(tmp_path)
    scorer = BatchScorer(profile="averitec2024", references=files["gold"], allow_download=False, lenient=True)
    _same(scorer.score(PRED_2024), scorer.score(files["pred2024"]))
    other = json.loads(json.dumps(PRED_2024))
    other[0]["evidence"] = [{"question": "Is the moon made of rock?", "answer": "Yes, rock.", "url": ""}]
    cold = get_profile("averitec2024").score(predictions=write_json(tmp_path / "o.json", other), references=files["gold"],
                                             jobs=1, lenient=True)
    _same(scorer.score(other), cold)


def test_bad_records_name_the_records(tmp_path: Path) -> None:
    scorer = BatchScorer(profile="averitec2024", references=make_files(tmp_path)["gold"], allow_download=False)
    bad = json.loads(json.dumps(PRED_2024))
    bad[1]["pred_label"] = "refuted"
    with pytest.raises(UserError, match=r"^<records>.*claim_id 1.*'refuted'"):
        scorer.score(bad)
    with pytest.raises(UserError, match="list of records"):
        scorer.score({"claim_id": 0})  # type: ignore[arg-type]
    with pytest.raises(UserError, match="no reference claim"):
        scorer.gold_evidence(3)
    with pytest.raises(UserError, match="not found"):
        BatchScorer(references=tmp_path / "missing.json")


def test_score_pairs_are_the_profile_rule(tmp_path: Path) -> None:
    """NLTK 3.9.1's recorded matrices, assigned and normalised by the gold count (2024 rule)."""
    scorer = BatchScorer(profile="averitec2024", references=make_files(tmp_path)["gold"], allow_download=False)
    cases = REFERENCE["hungarian_cases"]
    got = scorer.score_pairs([(c["candidates"], c["references"]) for c in cases])
    want = [assignment_utility(np.array(c["meteor"]), normaliser=len(c["references"])) for c in cases]
    assert got == pytest.approx(want, abs=1e-12)
    capped = scorer.score_pairs([(["x"] * 10 + ["What is the moon made of?"], ["What is the moon made of?"])])
    assert capped == [0.0]  # the 11th prediction is not scored (first 10 only)
    assert scorer.score_pairs([(["a"], [])]) == [0.0] and scorer.score_pairs([]) == []


def test_gold_evidence_is_the_profile_strings(tmp_path: Path) -> None:
    from averitec_tools.records.averitec import AVeriTeCClaim

    scorer = BatchScorer(references=make_files(tmp_path)["gold"], allow_download=False)
    for i, claim in enumerate(GOLD):
        assert scorer.gold_evidence(i) == qa_strings(AVeriTeCClaim.from_dict(claim, where="", claim_id=i).questions)


@pytest.mark.shared_data
def test_dev_baseline_and_a_new_submission_match_the_official_numbers(shared_data: Path, tmp_path: Path) -> None:
    base = shared_data / "averitec"
    scorer = BatchScorer(profile="averitec2024", references=base / "dev.json", allow_download=False)
    assert_same_figures(scorer.score(base / "baseline_dev_predictions.json").summary, RECORDED["averitec2024"])
    fresh = json.loads((base / "baseline_dev_predictions.json").read_text(encoding="utf-8"))[:500]
    for p in fresh:  # every predicted string new to the warm engine
        for e in p["evidence"]:
            e["answer"] += " (checked)"
    cold = get_profile("averitec2024").score(predictions=write_json(tmp_path / "fresh.json", fresh),
                                             references=base / "dev.json", jobs=1)
    _same(scorer.score(fresh), cold)


def test_reward_reads_claim_ids_or_gold_strings(tmp_path: Path) -> None:
    scorer = BatchScorer(references=make_files(tmp_path)["gold"], allow_download=False)
    reward = hungarian_meteor_reward(scorer)
    completions = ["What is the moon made of? Rock and dust.\nIs the moon cheese? No. It is rock.", "Zzz"]
    by_id = reward(prompts=["p", "q"], completions=completions, claim_id=[0, 0])
    by_strings = reward(prompts=["p", "q"], completions=completions, claim_id=[scorer.gold_evidence(0)] * 2)
    assert by_id == by_strings and by_id[0] > 0.9 and by_id[1] == 0.0
    chat = reward(completions=[[{"role": "assistant", "content": completions[0]}]], claim_id=[0])
    assert chat == by_id[:1] and reward.__name__ == "hungarian_meteor"
    with pytest.raises(UserError, match="'claim_id' column"):
        reward(completions=completions)


def test_trl_grpo_trains_on_the_reward(tmp_path: Path) -> None:
    """One GRPO step of a tiny randomly initialised model, rewarded by Hungarian METEOR."""
    pytest.importorskip("trl")
    from _r2vc_tiny import tiny_lm, tiny_tokenizer
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    scorer = BatchScorer(references=make_files(tmp_path)["gold"], allow_download=False)
    reward = hungarian_meteor_reward(scorer)
    calls: list[list[float]] = []

    def logged(**kwargs: Any) -> list[float]:
        calls.append(reward(**kwargs))
        return calls[-1]

    logged.__name__ = reward.__name__
    tokenizer = tiny_tokenizer()
    tokenizer.pad_token = tokenizer.pad_token or "[PAD]"
    dataset = Dataset.from_dict({"prompt": [f"Evidence for: {c['claim']}" for c in GOLD[:2]], "claim_id": [0, 1]})
    args = GRPOConfig(output_dir=str(tmp_path / "out"), max_steps=1, per_device_train_batch_size=2, num_generations=2,
                      max_completion_length=6, report_to=[], logging_steps=1, use_cpu=True, save_strategy="no",
                      dataloader_num_workers=0, seed=0)
    trainer = GRPOTrainer(model=tiny_lm(tokenizer), reward_funcs=[logged], args=args, train_dataset=dataset,
                          processing_class=tokenizer)
    trainer.train()
    assert calls and all(0.0 <= r <= 1.0 for batch in calls for r in batch)
    assert any(k.startswith("rewards/hungarian_meteor") for entry in trainer.state.log_history for k in entry)
