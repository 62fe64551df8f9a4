"""Issue 39: judge failures could be gamed; a failure the submission causes never raises its score.

The attack, reproduced against the local OpenAI-compatible judge of ``tests/_judge_server.py``
(a judge with a context limit: a prompt past it gets HTTP 400 "maximum context length", as
vLLM answers): a team pads only its *wrongly labelled* claims until the judge refuses them.
Under the old ``judge_failures: unscored`` those claims were left out of the mean, so the
new AVeriTeC score became the mean over the correctly labelled claims -- 1.000. Now a
content refusal scores 0, as the organisers' scorer does, and the board bounds what the
judge is shown (10 pairs of at most 2,000 characters): padded or not, the score is the same.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _judge_server import requests_sent, running

from averitec_tools.metrics.judge_policy import BOARD_INPUT_BOUND
from averitec_tools.metrics.signature import parse_signature
from averitec_tools.scoring.profiles import get_profile
from tests._leaderboard_helpers import DEMO_GOLD, DEMO_PREDS

N_CLAIMS = 20
#: The judge's context, in prompt characters: an honest claim's prompt fits, a padded one does not.
CONTEXT_CHARS = 40_000
COUNTS = {f"{w} {k}": n for k in ("evidence", "questions") for w, n in
          (("facts count predicted", 2), ("support predicted", 1), ("facts count reference", 4), ("support reference", 3))}
FIXTURES: dict[str, Any] = {
    "rules": [{"match": [], "min_chars": CONTEXT_CHARS, "responses": [
        {"status": 400, "error": "This model's maximum context length is 3000 tokens. However, you requested 9000 tokens "
                                 "(6000 in the messages, 3000 in the completion). Please reduce the length of the messages."}]}],
    "default": {"status": 200, "content": "Output: " + json.dumps(COUNTS)},  # recall 3/4 > 0.5 on every claim it judges
}
SCORE = "averitec_score_ev2r@0.5"


def _files(tmp_path: Path) -> tuple[Path, Path, Path, list[int]]:
    gold = json.loads(DEMO_GOLD.read_text())[:N_CLAIMS]
    preds = json.loads(DEMO_PREDS.read_text())[:N_CLAIMS]
    wrong = [i for i, (p, g) in enumerate(zip(preds, gold, strict=True)) if p["pred_label"] != g["label"]]
    padded = copy.deepcopy(preds)
    for i in wrong:  # only the claims whose label is wrong: they score 0 whatever the judge says
        padded[i]["evidence"] = [{"question": f"Padding question {k}?", "answer": "padding " * 2000} for k in range(12)]
    paths = []
    for name, data in (("gold.json", gold), ("plain.json", preds), ("padded.json", padded)):
        (tmp_path / name).write_text(json.dumps(data))
        paths.append(tmp_path / name)
    return paths[0], paths[1], paths[2], wrong


def _score(pred: Path, gold: Path, url: str, cache: Path, **extra: Any) -> Any:
    return get_profile("fever8").score(predictions=pred, references=gold, jobs=1, judge_url=url, judge_model="fixture-judge",
                                       judge_cache=str(cache), judge_retries=1, judge_backoff=0.01, judge_timeout=10.0,
                                       judge_unscored=True, **extra)


def test_padding_the_wrongly_labelled_claims_no_longer_pays(tmp_path: Path) -> None:
    gold, plain_path, padded_path, wrong = _files(tmp_path)
    assert 0 < len(wrong) < N_CLAIMS
    bound = {"judge_max_items": BOARD_INPUT_BOUND.max_items, "judge_item_chars": BOARD_INPUT_BOUND.max_chars}
    with running(FIXTURES, tmp_path) as (url, log):
        plain = _score(plain_path, gold, url, tmp_path / "cache")
        unbounded = _score(padded_path, gold, url, tmp_path / "cache")
        bounded = _score(padded_path, gold, url, tmp_path / "cache", **bound)
        sent = requests_sent(log)
    accuracy = plain.summary["veracity"]["accuracy"]
    assert plain.summary["averitec_score_ev2r"]["0.5"] == pytest.approx(accuracy)  # every judged recall is 3/4
    # The attack is real: the judge refused exactly the padded claims' Q+A prompts, and a mean
    # that left them out -- the old policy -- would be the mean over the right labels: 1.000.
    refused = [r for r in sent if len(r["request"]["messages"][0]["content"]) > CONTEXT_CHARS]
    assert len(refused) == len(wrong) and unbounded.summary["judge"]["refused_content"] == len(wrong)
    old_policy = np.mean([c.values[SCORE] for k, c in enumerate(unbounded.per_claim) if k not in wrong])
    assert old_policy == 1.0 > accuracy
    # It no longer pays: refused for its content is 0, and nothing is left unscored.
    for run in (unbounded, bounded):
        assert run.summary["averitec_score_ev2r"]["0.5"] == pytest.approx(plain.summary["averitec_score_ev2r"]["0.5"])
        assert run.summary["judge"]["unscored"]["count"] == 0 and run.summary["judge"]["complete"] is True
        assert all(c.unscored is None for c in run.per_claim)
    assert parse_signature(unbounded.signature)["refused"] == f"zero({len(wrong)})"
    assert all(parse_signature(r.signature).render() == r.signature for r in (plain, unbounded, bounded))
    # Bounded as on the board, the padded prompts fit: judged (recall 3/4), and the label decides.
    assert bounded.summary["judge"]["refused_content"] == 0
    assert parse_signature(bounded.signature)["input"] == "10x2000c" and parse_signature(plain.signature)["input"] == "none"


def test_a_judge_side_failure_is_retried_then_left_unscored(tmp_path: Path) -> None:
    """HTTP 503 (the judge's side) is retried, then unscored and the result incomplete;
    HTTP 401 (the set-up) is not retried. Neither is scored 0 under ``unscored``."""
    gold, plain_path, _, _ = _files(tmp_path)
    claim = json.loads(gold.read_text())[0]["claim"]
    fixtures = {"rules": [{"match": [claim], "responses": [{"status": 503}]}], "default": FIXTURES["default"]}
    with running(fixtures, tmp_path) as (url, log):
        r = _score(plain_path, gold, url, tmp_path / "cache")
        tries = [x for x in requests_sent(log) if claim in x["request"]["messages"][0]["content"]]
    assert len(tries) == 4  # two prompts (qa, questions), each tried twice (judge_retries=1)
    assert r.summary["judge"]["unscored"] == {"count": 1, "reasons": {"judge_request_failed": 1}}
    assert r.summary["judge"]["complete"] is False and r.per_claim[0].unscored == "judge_request_failed"
