"""Signature strings: every field present, round trip through parse_signature."""

from __future__ import annotations

import pytest

from averitec_tools.metrics.signature import Signature, parse_signature


def test_render_and_parse() -> None:
    sig = Signature(
        profile="averitec2024",
        metric="hu-meteor",
        tokenizer="nltk-3.9.1-word_tokenize",
        wordnet="3.0+sha256.0123456789ab",
        thresholds=(0.1, 0.25),
        comparison=">",
        normalisation="gold",
        evidence_cap=10,
        version="0.1.0",
    )
    text = str(sig)
    assert text == (
        "profile:averitec2024|metric:hu-meteor|tok:nltk-3.9.1-word_tokenize|stem:porter-nltk|"
        "wordnet:3.0+sha256.0123456789ab|thr:0.1,0.25(>)|norm:gold|cap:10|version:0.1.0"
    )
    fields = parse_signature(text)
    assert list(fields) == ["profile", "metric", "tok", "stem", "wordnet", "thr", "norm", "cap", "version"]


def test_no_cap_and_bad_field() -> None:
    sig = Signature(profile="evalai", metric="hu-meteor", tokenizer="t", wordnet="w", thresholds=(0.2,),
                    comparison=">=", normalisation="pred", evidence_cap=None, version="v")
    assert parse_signature(sig.render())["cap"] == "none"
    with pytest.raises(ValueError):
        parse_signature("profile:x|garbage")
