"""Signature strings: every field present, round trip through parse_signature, the dialect's rules
(keys, escaped separators, embedded signatures). Every command's printed signatures:
``test_signatures_every_command.py``."""

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


def test_judge_agreement_form_and_bad_signatures() -> None:
    text = "report:judge-agreement|metric:ev2r-qa|judges:a,b|thr:0.5(>)|version:0.1.0"
    parsed = parse_signature(text)
    assert parsed.head is None and parsed["report"] == "judge-agreement" and parsed.render() == text
    with pytest.raises(ValueError, match="given twice"):
        parse_signature("profile:a|profile:b")
    with pytest.raises(ValueError, match="not a signature field"):
        parse_signature("profile:a|compare")  # a bare word only leads
    with pytest.raises(ValueError, match="not a signature field"):
        parse_signature("Calibration report|profile:a")


def test_values_never_break_the_dialect_and_keys_are_checked() -> None:
    from averitec_tools.metrics.signature import embed_signature, extend_signature, render_signature

    text = render_signature([("model", "local:a|b"), ("thr", "0.5(>)")], version="1")
    assert text == "model:local:a%7Cb|thr:0.5(>)|version:1" and parse_signature(text)["model"] == "local:a%7Cb"
    with pytest.raises(ValueError, match="not a signature key"):
        render_signature([("bad key", 1)])
    with pytest.raises(ValueError, match="given twice"):
        extend_signature("profile:a|subset:1/2", {"subset": "2/3"})
    with pytest.raises(ValueError, match="not a signature field"):
        parse_signature("profile:a|bad key:1")
    outer = extend_signature("profile:a|version:1", embed_signature("of", "compare|test:bootstrap|version:1"))
    assert outer == "profile:a|version:1|of:compare|of.test:bootstrap|of.version:1"
    assert parse_signature(outer).embedded("of").render() == "compare|test:bootstrap|version:1"
    with pytest.raises(KeyError, match="no signature embedded as 'score'"):
        parse_signature(outer).embedded("score")
