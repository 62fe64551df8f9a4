"""The evidence questions of an AVeriTeC output: who writes the question each cited passage answers.

AVeriTeC scores question–answer pairs while R2VC retrieves passages, so every cited
passage needs a question (:mod:`averitec_tools.baselines.r2vc.io.formats`). The default
:class:`FallbackQuestionWriter` writes :func:`fallback_question`; with
``generator.question_writer: lm`` the generator's causal LM writes them
(:class:`LMQuestionWriter`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from averitec_tools.baselines.r2vc.types import Passage


class QuestionWriter(Protocol):
    """Writes the evidence question a passage answers for a claim."""

    def write(self, *, claim: str, passages: Sequence[Passage]) -> list[str]:
        ...


def fallback_question(claim: str) -> str:
    """The question used when no generator is configured: ``Is it true that <claim>?``.

    Example:
        >>> fallback_question("The sky is green.")
        'Is it true that the sky is green?'
    """
    text = claim.strip().rstrip(".!?").strip()
    if text and text[0].isupper() and not text[:2].isupper():
        text = text[0].lower() + text[1:]
    return f"Is it true that {text}?"


class FallbackQuestionWriter:
    """Every evidence item gets :func:`fallback_question` of the claim."""

    name = "template:'Is it true that <claim>?'"

    def write(self, *, claim: str, passages: Sequence[Passage]) -> list[str]:
        return [fallback_question(claim) for _ in passages]


class LMQuestionWriter:
    """Asks the generator's causal LM, greedily, for the question each passage answers.

    Only with ``generator.question_writer: lm``: SFT/DPO never train the generator to
    write questions, so the default is :class:`FallbackQuestionWriter`.

    Args:
        model: A transformers causal LM (e.g. ``HFGenerator.model``).
        tokenizer: Its tokenizer (with a chat template).
        max_new_tokens: Budget per question.

    Outputs that do not look like a question fall back to :func:`fallback_question`;
    ``n_fallback`` counts them (the run summary reports them as ``template_question``).
    """

    def __init__(self, *, model: Any, tokenizer: Any, max_new_tokens: int = 32, system: str | None = None) -> None:
        self.name = f"lm:{getattr(getattr(model, 'config', None), '_name_or_path', type(model).__name__)}"
        self.n_fallback = 0
        self.model = model
        self.tokenizer = tokenizer
        self.max_new_tokens = max_new_tokens
        #: A reasoning switch ("detailed thinking off") goes first; the instruction follows.
        self.system = system

    def write(self, *, claim: str, passages: Sequence[Passage]) -> list[str]:
        import torch

        out = []
        for p in passages:
            instruction = "You write the question a fact-checker asked to find a piece of evidence."
            user = f"Claim: {claim}\nEvidence: {p.text[:1000]}\nWrite one short question that this evidence answers."
            messages = ([{"role": "system", "content": self.system}, {"role": "user", "content": f"{instruction}\n{user}"}]
                        if self.system else
                        [{"role": "system", "content": instruction}, {"role": "user", "content": user}])
            prompt = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
            # The chat template already wrote the begin-of-text token: adding special tokens
            # again would give Llama tokenizers a second one. token_type_ids (BERT-style
            # tokenizers) are not a causal LM input.
            enc = self.tokenizer(prompt, return_tensors="pt", return_token_type_ids=False,
                                 add_special_tokens=False).to(self.model.device)
            with torch.inference_mode():
                ids = self.model.generate(**enc, max_new_tokens=self.max_new_tokens, do_sample=False,
                                          pad_token_id=self.tokenizer.pad_token_id)
            text = self.tokenizer.decode(ids[0, enc["input_ids"].shape[1]:], skip_special_tokens=True)
            question = text.strip().splitlines()[0].strip() if text.strip() else ""
            if question.endswith("?") and len(question) > 5:
                out.append(question)
            else:
                self.n_fallback += 1
                out.append(fallback_question(claim))
        return out


__all__ = ["FallbackQuestionWriter", "LMQuestionWriter", "QuestionWriter", "fallback_question"]
