"""The profile contract the leaderboard relies on: declared OPTIONS, gold_strings(), an
explicit warm state lent to one profile, and summaries that name no input path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _score_fixtures import GOLD, make_files

from averitec_tools.errors import UserError
from averitec_tools.metrics.meteor import MeteorEngine
from averitec_tools.scoring.profiles import PROFILES, get_profile
from averitec_tools.scoring.profiles.base import ProfileOption
from averitec_tools.scoring.warm import WarmScoring


@pytest.mark.parametrize("name", PROFILES.names())
def test_options_are_declared_and_typed(name: str) -> None:
    options = get_profile(name).OPTIONS
    assert options, name
    for key, option in options.items():
        assert isinstance(option, ProfileOption), key
        assert option.accepts(option.default), key  # the default is of the declared type
        assert option.help, key


def test_undeclared_option_is_refused_before_reading_files() -> None:
    with pytest.raises(UserError, match="profile 'fever8': max_evidence: not an option of this profile"):
        get_profile("fever8").score(predictions="missing.json", references="missing.json", max_evidence=3)
    with pytest.raises(UserError, match="profile 'evalai': metric: unknown value 'bleu'"):
        get_profile("evalai").score(predictions="missing.jsonl", references="missing.jsonl", metric="bleu")


def test_gold_strings(tmp_path: Path) -> None:
    files = make_files(tmp_path)
    strings = get_profile("averitec2024").gold_strings(files["gold"])
    q = GOLD[0]["questions"][0]
    assert q["question"] in strings
    assert f"{q['question']} {q['answers'][0]['answer']}" in strings  # a Q+A string
    assert len(strings) == len(set(strings))
    assert get_profile("averitec2023").gold_strings(files["gold"]) == strings
    assert get_profile("evalai").gold_strings(files["gold_evalai"]) == []
    assert get_profile("fever").gold_strings("anything.jsonl") == []


def test_warm_state_is_used_and_lent_to_one_profile(tmp_path: Path) -> None:
    files = make_files(tmp_path)
    cold = get_profile("averitec2024").score(predictions=files["pred2024"], references=files["gold"], jobs=1)
    engine, cache = MeteorEngine(max_pairs=1000), {}
    warm = WarmScoring(profile="averitec2024", engine=engine, gold_cache=cache)
    hot = get_profile("averitec2024").score(predictions=files["pred2024"], references=files["gold"], jobs=1, warm=warm)
    assert hot.summary == cold.summary
    assert len(cache) == 1 and engine.is_prepared(GOLD[0]["questions"][0]["question"])
    assert engine._pair_scores  # the warm engine scored the pairs
    with pytest.raises(ValueError, match="lent to profile 'averitec2024' was given to profile 'averitec2023'"):
        get_profile("averitec2023").score(predictions=files["pred2023"], references=files["gold"], jobs=1, warm=warm)


def test_summaries_name_no_input_path(tmp_path: Path) -> None:
    files = make_files(tmp_path)
    runs = [("averitec2024", "pred2024", "gold", {}), ("averitec2023", "pred2023", "gold", {"lenient": True}),
            ("evalai", "pred_evalai", "gold_evalai", {})]
    for name, pred, gold, options in runs:
        summary = get_profile(name).score(predictions=files[pred], references=files[gold], jobs=1, **options).summary
        text = json.dumps(summary, default=str)
        assert str(tmp_path) not in text and tmp_path.name not in text, name
