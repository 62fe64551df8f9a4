"""The scoring worker's bounds check (``stats=False``) refuses exactly what counting every
token refuses, with the same message, on uploads built to cross each bound."""

from __future__ import annotations

import itertools
import json
import random

import pytest

from averitec_tools.errors import UserError
from averitec_tools.leaderboard.limits import SubmissionLimits, check_submission, count_tokens


def _outcome(content: bytes, limits: SubmissionLimits, *, stats: bool) -> str:
    try:
        found = check_submission(content, limits=limits, file_name="p.json", stats=stats)
    except UserError as exc:
        return f"refused: {exc}"
    return f"items {found.items}, strings {found.strings}, evidence {found.max_evidence_per_claim}"


def _upload(rng: random.Random, claims: int) -> bytes:
    words = ["a", "U.S.", "isn't", "...", "word", "!!", "x" * 12, "é", "--"]
    def text() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randrange(0, 12)))
    items = [{"claim_id": i, "pred_label": "Refuted",
              "evidence": [{"question": text(), "answer": text()} for _ in range(rng.randrange(1, 4))]}
             for i in range(claims)]
    return json.dumps(items).encode()


@pytest.mark.parametrize("seed", range(6))
def test_the_workers_check_refuses_what_counting_every_token_refuses(seed: int) -> None:
    rng = random.Random(seed)
    content = _upload(rng, 8)
    full = check_submission(content, limits=SubmissionLimits(), file_name="p.json")
    # bounds on both sides of the upload's real longest string and total
    for per_string, total in itertools.product((None, 3, full.max_tokens_per_string - 1, full.max_tokens_per_string),
                                               (None, 10, full.tokens // 2, full.tokens - 1, full.tokens)):
        limits = SubmissionLimits(max_tokens_per_string=per_string, max_tokens_total=total)
        assert _outcome(content, limits, stats=False) == _outcome(content, limits, stats=True), (per_string, total)


def test_statistics_stay_exact_and_the_fast_check_gives_bounds() -> None:
    content = json.dumps([{"claim_id": 0, "evidence": [{"question": "The U.S. isn't big.", "answer": "yes"}]}]).encode()
    exact = check_submission(content, limits=SubmissionLimits(), file_name="p.json")
    assert (exact.tokens, exact.max_tokens_per_string) == (count_tokens("The U.S. isn't big.") + 1, 10)
    fast = check_submission(content, limits=SubmissionLimits(), file_name="p.json", stats=False)
    assert fast.tokens >= exact.tokens and fast.max_tokens_per_string >= exact.max_tokens_per_string
    assert (fast.items, fast.strings) == (exact.items, exact.strings)
