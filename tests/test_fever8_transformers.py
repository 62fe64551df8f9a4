"""fever8 with the local transformers judge: a tiny randomly initialised causal LM.

Its replies are noise, so every judgement is unparseable: counted, recall 0.
"""

from __future__ import annotations

from pathlib import Path

from _r2vc_tiny import tiny_lm, tiny_tokenizer
from _score_fixtures import make_files

from averitec_tools.scoring.profiles import get_profile


def test_tiny_local_judge_is_unparseable_and_counted(tmp_path: Path) -> None:
    tokenizer = tiny_tokenizer()
    model_dir = tmp_path / "tiny-judge"
    tiny_lm(tokenizer).save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    files = make_files(tmp_path)
    r = get_profile("fever8").score(
        predictions=files["pred2024"], references=files["gold"], jobs=1,
        judge_backend="transformers", judge_model=str(model_dir), judge_max_tokens=8, judge_cache=str(tmp_path / "cache"),
    )
    s = r.summary
    assert s["judge"]["backend"] == "transformers" and s["judge"]["sent"] == 6
    assert s["judge"]["unparseable"] == {"questions_answers": 3, "questions_only": 3}
    assert s["ev2r"]["questions_answers"] == {"precision": 0.0, "recall": 0.0}
    assert s["averitec_score_ev2r"] == {"0.5": 0.0}
    assert r.signature.split("|")[2] == f"judge:transformers:{model_dir}"
