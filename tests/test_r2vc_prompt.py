"""R2VC prompt (Appendix B): evidence numbering, messages, response format, chat templates."""

from __future__ import annotations

import pytest

from averitec_tools.baselines.r2vc.stages.generation.generator import parse_candidate
from averitec_tools.baselines.r2vc.stages.generation.prompt import (
    FALLBACK_CHAT_TEMPLATE,
    NO_EVIDENCE,
    SYSTEM_PROMPT,
    build_messages,
    ensure_chat_template,
    format_evidence,
    format_response,
    render_prompt,
)
from averitec_tools.baselines.r2vc.types import Passage


def _p(i: int, title: str = "", text: str = "") -> Passage:
    return Passage(doc_id=f"d{i}", title=title or f"Title {i}", url=f"u{i}", text=text or f"text {i}")


def test_evidence_block_numbers_passages_from_one_and_collapses_whitespace() -> None:
    block = format_evidence(passages=[_p(1, "Eiffel  Tower", "It is\n330 m tall."), _p(2, " ", "No title.")])
    assert block == "[1] Eiffel Tower: It is 330 m tall.\n[2] No title."


def test_empty_evidence_is_stated_explicitly() -> None:
    assert format_evidence(passages=[]) == NO_EVIDENCE
    assert NO_EVIDENCE in build_messages(claim="c", passages=[])[1]["content"]


def test_messages_follow_appendix_b() -> None:
    msgs = build_messages(claim="  The  sky is green. ", passages=[_p(1)])
    assert msgs[0] == {"role": "system", "content": SYSTEM_PROMPT}
    assert SYSTEM_PROMPT == "You are a fact-checking assistant. Use evidence to decide."
    user = msgs[1]["content"]
    assert user.startswith("Claim: The sky is green.\nCandidate evidence:\n[1] Title 1: text 1\n")
    assert "Output True, False or Uncertain, then a one-sentence justification with citations" in user


@pytest.mark.parametrize(
    ("label", "rationale", "citations", "expected"),
    [
        ("True", "Because it is tall.", [0, 2], "True. Because it is tall [1, 3]."),
        ("False", "Because  it  opened in 1932", [1], "False. Because it opened in 1932 [2]."),
        ("Uncertain", "Because nothing says so.", [], "Uncertain. Because nothing says so."),
        ("Uncertain", "", [], "Uncertain."),
    ],
)
def test_format_response(label: str, rationale: str, citations: list[int], expected: str) -> None:
    assert format_response(label=label, rationale=rationale, citations=citations) == expected


def test_format_response_rejects_bad_label_and_negative_citation() -> None:
    with pytest.raises(ValueError, match="label"):
        format_response(label="Supported", rationale="r", citations=[])
    with pytest.raises(ValueError, match="0-based"):
        format_response(label="True", rationale="r", citations=[-1])


def test_canonical_response_round_trips_through_the_parser() -> None:
    passages = [_p(i) for i in range(4)]
    for label, cites in (("True", (0, 3)), ("False", (2,)), ("Uncertain", ())):
        text = format_response(label=label, rationale="Because of the evidence.", citations=cites)
        cand = parse_candidate(text, passages=passages)
        assert (cand.label, cand.citations, cand.rationale) == (label, cites, "Because of the evidence.")


class _JinjaTokenizer:
    """Minimal stand-in for a tokenizer without a chat template."""

    eos_token = "</s>"
    chat_template: str | None = None

    def apply_chat_template(self, messages, *, tokenize, add_generation_prompt):  # type: ignore[no-untyped-def]
        import jinja2

        assert tokenize is False
        return jinja2.Template(self.chat_template).render(
            messages=messages, eos_token=self.eos_token, add_generation_prompt=add_generation_prompt
        )


def test_fallback_template_renders_paper_role_tags() -> None:
    tok = _JinjaTokenizer()
    text = render_prompt(tokenizer=tok, claim="X is Y.", passages=[_p(1)])
    assert tok.chat_template == FALLBACK_CHAT_TEMPLATE
    assert text.startswith(f"<|system|>\n{SYSTEM_PROMPT}\n<|user|>\nClaim: X is Y.\n")
    assert text.endswith("<|assistant|>\n")


def test_fallback_template_is_prefix_consistent_and_ends_assistant_with_eos() -> None:
    import jinja2

    msgs = build_messages(claim="c", passages=[_p(1)])
    template = jinja2.Template(FALLBACK_CHAT_TEMPLATE)
    prompt = template.render(messages=msgs, eos_token="</s>", add_generation_prompt=True)
    full = template.render(
        messages=[*msgs, {"role": "assistant", "content": "True. r [1]."}],
        eos_token="</s>",
        add_generation_prompt=False,
    )
    assert full.startswith(prompt)
    assert full[len(prompt) :] == "True. r [1].</s>\n"


def test_existing_chat_template_is_kept() -> None:
    tok = _JinjaTokenizer()
    tok.chat_template = "{% for m in messages %}[{{ m['role'] }}]{{ m['content'] }}{% endfor %}"
    before = tok.chat_template
    ensure_chat_template(tok)
    assert tok.chat_template == before
    assert render_prompt(tokenizer=tok, claim="c", passages=[]).startswith("[system]You are")


def test_real_tokenizer_renders_with_fallback_template() -> None:
    from _r2vc_tiny import tiny_tokenizer

    tok = tiny_tokenizer()
    assert not tok.chat_template
    text = render_prompt(tokenizer=tok, claim="Water boils at 100 C.", passages=[_p(1), _p(2)])
    assert "[2] Title 2: text 2" in text and text.endswith("<|assistant|>\n")
