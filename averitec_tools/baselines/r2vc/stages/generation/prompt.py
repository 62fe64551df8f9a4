"""The R2VC generator prompt (paper, Appendix B / Figure B.1) and its response format.

The paper's template is::

    <|system|> You are a fact-checking assistant. Use evidence to decide.
    <|user|> Claim: {claim} Candidate evidence: {evidence_text}
             Output True, False or Uncertain, then a one-sentence justification
             with citations [Title, §, line].
    <|assistant|> True. Because … [Title § line].

Our adaptation (documented in ``docs/r2vc_training.md``): passages are numbered in the
evidence block (``[1] Title: text``) and the response cites them by number
(``[1]``, ``[1, 3]``), so citations can be mapped back to passages unambiguously by
:func:`averitec_tools.baselines.r2vc.stages.generation.generator.parse_candidate`. The canonical
assistant response — what SFT and DPO targets look like and what the parser expects
first — is::

    {Label}. {one-sentence rationale} [{n}, {m}].

e.g. ``False. Because the evidence says the bridge opened in 1932 [2].``

The messages are rendered with the tokenizer's own chat template when it has one;
otherwise :data:`FALLBACK_CHAT_TEMPLATE` renders the paper's literal
``<|system|>``/``<|user|>``/``<|assistant|>`` tags.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from averitec_tools.baselines.r2vc.types import R2VC_LABELS, Passage

SYSTEM_PROMPT = "You are a fact-checking assistant. Use evidence to decide."

USER_TEMPLATE = (
    "Claim: {claim}\n"
    "Candidate evidence:\n"
    "{evidence}\n"
    "Output True, False or Uncertain, then a one-sentence justification with "
    "citations to the evidence numbers, e.g. [1] or [1, 3]."
)

#: Shown in the evidence block when the pool is empty (the model should answer Uncertain).
NO_EVIDENCE = "(no evidence retrieved)"

#: Jinja chat template used when a tokenizer has none: the paper's literal role tags,
#: one per line. It is prefix-consistent (prompt + generation prompt is a prefix of the
#: full conversation), which TRL's completion-only loss relies on.
FALLBACK_CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' + message['content'] }}"
    "{% if message['role'] == 'assistant' %}{{ eos_token }}{% endif %}"
    "{{ '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)

_WS = re.compile(r"\s+")


def format_evidence(*, passages: Sequence[Passage]) -> str:
    """Render the evidence block, one numbered passage per line (numbers are 1-based).

    Args:
        passages: The evidence subset S_i, in the order the model sees it.

    Returns:
        ``"[1] Title: text"`` lines, or :data:`NO_EVIDENCE` for an empty subset.

    Example:
        >>> p = Passage(doc_id="d1", title="Eiffel Tower", url="", text="It is 330 m tall.")
        >>> format_evidence(passages=[p])
        '[1] Eiffel Tower: It is 330 m tall.'
    """
    if not passages:
        return NO_EVIDENCE
    lines = []
    for number, passage in enumerate(passages, start=1):
        text = _WS.sub(" ", passage.text).strip()
        title = _WS.sub(" ", passage.title).strip()
        lines.append(f"[{number}] {title}: {text}" if title else f"[{number}] {text}")
    return "\n".join(lines)


def build_messages(
    *, claim: str, passages: Sequence[Passage], system: str | None = None
) -> list[dict[str, str]]:
    """The system and user messages of the Appendix B prompt for one claim.

    Args:
        claim: The claim text.
        passages: Evidence passages, numbered in this order.
        system: A model's reasoning switch (``"detailed thinking off"``,
            :mod:`~averitec_tools.baselines.r2vc.stages.generation.reasoning`): it becomes the system
            prompt and the paper's system sentence opens the user turn. ``None``: the
            paper's layout.

    Returns:
        ``[{"role": "system", ...}, {"role": "user", ...}]``.

    Example:
        >>> msgs = build_messages(claim="Paris is in France.", passages=[])
        >>> [m["role"] for m in msgs]
        ['system', 'user']
        >>> msgs[1]["content"].splitlines()[0]
        'Claim: Paris is in France.'
        >>> switched = build_messages(claim="X.", passages=[], system="detailed thinking off")
        >>> switched[0]["content"], switched[1]["content"].splitlines()[:2]
        ('detailed thinking off', ['You are a fact-checking assistant. Use evidence to decide.', 'Claim: X.'])
    """
    user = USER_TEMPLATE.format(
        claim=_WS.sub(" ", claim).strip(), evidence=format_evidence(passages=passages)
    )
    if system is not None:
        return [{"role": "system", "content": system}, {"role": "user", "content": f"{SYSTEM_PROMPT}\n{user}"}]
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def format_response(*, label: str, rationale: str, citations: Sequence[int]) -> str:
    """The canonical assistant response: ``"{label}. {rationale} [n, m]."``.

    Args:
        label: One of :data:`R2VC_LABELS`.
        rationale: One sentence; a trailing full stop is removed before the citation.
        citations: 0-based passage indices; written 1-based, as numbered in the prompt.

    Returns:
        The response text (no end-of-sequence token; chat templates add it).

    Raises:
        ValueError: if ``label`` is not an R2VC label or a citation is negative.

    Example:
        >>> format_response(label="True", rationale="Because it is 330 m tall.", citations=[0, 2])
        'True. Because it is 330 m tall [1, 3].'
        >>> format_response(label="Uncertain", rationale="Because nothing says so.", citations=[])
        'Uncertain. Because nothing says so.'
    """
    if label not in R2VC_LABELS:
        raise ValueError(f"label must be one of {R2VC_LABELS}, got {label!r}")
    if any(c < 0 for c in citations):
        raise ValueError(f"citations are 0-based passage indices, got {list(citations)}")
    body = _WS.sub(" ", rationale).strip().rstrip(".").strip()
    if citations:
        cites = ", ".join(str(c + 1) for c in citations)
        return f"{label}. {body} [{cites}]." if body else f"{label}. [{cites}]."
    return f"{label}. {body}." if body else f"{label}."


def ensure_chat_template(tokenizer: Any) -> Any:
    """Give ``tokenizer`` :data:`FALLBACK_CHAT_TEMPLATE` if it has no chat template.

    Args:
        tokenizer: A Hugging Face tokenizer (modified in place).

    Returns:
        The same tokenizer, for chaining.

    Example:
        >>> class Tok:
        ...     chat_template = None
        >>> ensure_chat_template(Tok()).chat_template == FALLBACK_CHAT_TEMPLATE
        True
    """
    if not getattr(tokenizer, "chat_template", None):
        tokenizer.chat_template = FALLBACK_CHAT_TEMPLATE
    return tokenizer


def render_prompt(*, tokenizer: Any, claim: str, passages: Sequence[Passage], system: str | None = None) -> str:
    """The full prompt text, ending with the assistant turn header, ready for generation.

    Uses the tokenizer's chat template, or :data:`FALLBACK_CHAT_TEMPLATE` when it has none.

    Args:
        tokenizer: A Hugging Face tokenizer.
        claim: The claim text.
        passages: Evidence passages.
        system: The model's reasoning switch, or ``None`` (see :func:`build_messages`).

    Returns:
        The rendered prompt string.

    Example:
        >>> class Tok:
        ...     chat_template = None
        ...     eos_token = "</s>"
        ...     def apply_chat_template(self, messages, **kw):
        ...         import jinja2
        ...         return jinja2.Template(self.chat_template).render(
        ...             messages=messages, eos_token=self.eos_token, **kw)
        >>> render_prompt(tokenizer=Tok(), claim="X.", passages=[]).splitlines()[0]
        '<|system|>'
    """
    ensure_chat_template(tokenizer)
    text = tokenizer.apply_chat_template(
        build_messages(claim=claim, passages=passages, system=system),
        tokenize=False,
        add_generation_prompt=True,
    )
    return str(text)


__all__ = ["FALLBACK_CHAT_TEMPLATE", "NO_EVIDENCE", "SYSTEM_PROMPT", "build_messages", "ensure_chat_template",
           "format_evidence", "format_response", "render_prompt"]
