"""Persisted keys keep their bytes: every key now made by ``averitec_tools.hashing`` equals the
formula it was written with before (issue 38), so caches, stored tokens and rule hashes written
by earlier versions are still found. The expected values are computed here with ``hashlib``
and ``json`` directly, independently of the helpers under test; texts include non-ASCII."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from averitec_tools.hashing import file_sha256

TEXTS = ["Who said it?", "Qui l'a dit ? « Moi » — 2024", "Wer? Ich."]


def _hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_judgement_cache_key() -> None:
    from averitec_tools.metrics.ev2r_runner import cache_key

    for text in TEXTS:
        parts = ["m", "p" * 64, "3", "qa", text, "é", "t=0.7;seed=1;rep=0"]
        old = hashlib.sha256(json.dumps(parts, ensure_ascii=False).encode("utf-8")).hexdigest()
        assert cache_key(model="m", prompt_sha256="p" * 64, claim_id=3, kind="qa", reference=text, prediction="é",
                         sampling="t=0.7;seed=1;rep=0") == old


def test_prepared_gold_cache_file(tmp_path: Path) -> None:
    from averitec_tools._version import __version__
    from averitec_tools.metrics.prepared_cache import (
        _FORMAT,
        _nltk_version,
        lexicon_digest,
        prepared_cache_file,
    )
    from averitec_tools.metrics.tokenize import TOKENIZER_NAME

    gold = tmp_path / "gold.json"
    gold.write_text("[]", encoding="utf-8")
    # issue 42 added the lexical tables' digest and the entry format: entries cached with other
    # stem/synonym tables or another layout must not be found
    setup = _hex(f"{TOKENIZER_NAME}|nltk-{_nltk_version()}|{__version__}|{lexicon_digest()}|{_FORMAT}")[:12]
    path = prepared_cache_file(references=gold, cache_dir=tmp_path)
    assert path == tmp_path / "prepared" / f"{file_sha256(gold)}-{setup}.json"


def test_minilm_reference_embedding_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools.metrics import minilm_qa_f1

    monkeypatch.setattr(minilm_qa_f1, "weights_sha256", lambda: "w" * 64)
    monkeypatch.setattr(minilm_qa_f1, "embed", lambda texts, **_: {t: np.ones(2) for t in texts})
    minilm_qa_f1.embed_cached([*TEXTS, TEXTS[0]], max_length=64, cache_dir=tmp_path)
    unique = sorted(set(TEXTS))
    old = hashlib.sha256(json.dumps(["w" * 64, 64, unique]).encode()).hexdigest()[:32]
    assert [p.name for p in tmp_path.iterdir()] == [f"{old}.npy"]


def test_leaderboard_warm_gold_cache_file(tmp_path: Path) -> None:
    from averitec_tools._version import __version__
    from averitec_tools.leaderboard.competition import load_competition
    from averitec_tools.leaderboard.processing import Scorer
    from averitec_tools.metrics.tokenize import TOKENIZER_NAME

    root = Path(__file__).resolve().parents[1]
    phase = load_competition(root / "examples" / "leaderboard" / "demo.yaml").phases[0]
    gold = root / "examples" / "demo_gold.json"
    phase = dataclasses.replace(phase, gold=str(gold))
    scorer = Scorer(cache_dir=tmp_path)
    try:
        scorer.prepare_gold(phase)
        lexicon = scorer.engine.lexicon.digest  # in the key since issue 42's lexical tables
    finally:
        scorer.close()
    old = _hex(f"{file_sha256(gold)}|{TOKENIZER_NAME}|{__version__}|{lexicon}")[:32]
    assert (tmp_path / f"gold-{old}.json").is_file()


@pytest.mark.parametrize("claim_id", [0, 1460, "abc"])
def test_lite_rule_token_secret_and_prompt_hashes(claim_id: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from averitec_tools.leaderboard.db import hash_token
    from averitec_tools.leaderboard.secret import secret_path
    from averitec_tools.metrics.ev2r import JudgePrompt
    from averitec_tools.scoring.meta_eval.lite import _rank_key

    assert _rank_key(claim_id) == _hex(f"averitec-lite:{claim_id}")
    assert hash_token(f"tok-{claim_id}-é") == _hex(f"tok-{claim_id}-é")
    monkeypatch.delenv("AVERITEC_LEADERBOARD_SECRET_FILE", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    url = "postgresql://user:pw@db.example/board"
    import sqlalchemy as sa

    where = _hex(sa.engine.make_url(url).render_as_string(hide_password=True))[:16]
    assert secret_path(url) == tmp_path / "averitec-tools" / f"leaderboard-{where}.secret"
    text = f"[qa]\nClaim {claim_id} é: {{reference}} {{prediction}}\n[questions]\n{{reference}} {{prediction}}\n"
    assert JudgePrompt.from_text(text, name="p").sha256 == _hex(text)
