"""Stage 3: the question each retrieved sentence answers.

``CausalLMQuestionWriter`` few-shot prompts a causal LM (default ``bigscience/bloom-7b1``;
any HF causal LM) with the 10 training (answer, question) pairs whose answers are most
BM25-similar to the sentence, in an "evidence, then the question it answers" layout,
decoding with 2 beams and no repeated bigrams. ``RetrievalQuestionWriter`` is the named
fallback without LM weights: the question of the most BM25-similar training answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from averitec_tools.baselines.averitec.config import QUESTION_FALLBACK, QuestionsConfig
from averitec_tools.baselines.averitec.data import ClaimItem, gold_pairs
from averitec_tools.baselines.averitec.retrieval import BM25Index

#: Used when no training answer shares a term with the sentence.
GENERIC_QUESTION = "What does this source say about the claim?"
PROMPT_HEADER = "Each piece of evidence below is followed by the question that it answers.\n\n"


def training_examples(train: Sequence[ClaimItem]) -> list[tuple[str, str]]:
    """(answer, question) pairs of the training claims, unanswerable answers left out."""
    return [(p.answer, p.question) for c in train for p in gold_pairs(c.record)
            if p.answer_type != "Unanswerable" and p.answer.strip()]


def build_prompt(*, sentence: str, shots: Sequence[tuple[str, str]]) -> str:
    """The few-shot prompt for one sentence.

    Example:
        >>> print(build_prompt(sentence="It rained.", shots=[("Sun.", "Was it sunny?")]))
        Each piece of evidence below is followed by the question that it answers.
        <BLANKLINE>
        Evidence: Sun.
        Question answered: Was it sunny?
        <BLANKLINE>
        Evidence: It rained.
        Question answered:
    """
    blocks = [f"Evidence: {a}\nQuestion answered: {q}\n\n" for a, q in shots]
    return PROMPT_HEADER + "".join(blocks) + f"Evidence: {sentence}\nQuestion answered:"


class RetrievalQuestionWriter:
    """The fallback: each sentence gets the question of the nearest training answer (BM25).

    Example:
        >>> w = RetrievalQuestionWriter([("The moon is made of rock.", "What is the moon made of?"),
        ...                              ("Cats purr.", "Do cats purr?")])
        >>> w.write(["moon rock samples"])
        ['What is the moon made of?']
    """

    component = QUESTION_FALLBACK

    def __init__(self, examples: Sequence[tuple[str, str]]) -> None:
        self.examples = list(examples)
        self.index = BM25Index([a for a, _ in self.examples])
        self.generic = 0

    def write(self, sentences: Sequence[str]) -> list[str]:
        out = []
        for s in sentences:
            top = self.index.top(s, k=1)
            if top:
                out.append(self.examples[top[0]][1])
            else:
                self.generic += 1
                out.append(GENERIC_QUESTION)
        return out


class CausalLMQuestionWriter:
    """Few-shot question generation with a Hugging Face causal LM (BLOOM by default)."""

    def __init__(self, *, config: QuestionsConfig, examples: Sequence[tuple[str, str]]) -> None:
        from averitec_tools.baselines.averitec.models import load_causal_lm

        self.config = config
        self.examples = list(examples)
        self.index = BM25Index([a for a, _ in self.examples])
        self.model, self.tokenizer, self.component = load_causal_lm(
            model=config.model, dtype=config.dtype, device=config.device)

    def prompt(self, sentence: str) -> str:
        rows = self.index.top(sentence, k=self.config.few_shot)
        # Nearest last, closest to the sentence being asked about.
        shots = [self.examples[i] for i in reversed(rows)]
        return build_prompt(sentence=sentence, shots=shots)

    def write(self, sentences: Sequence[str]) -> list[str]:
        import torch

        out: list[str] = []
        bs = max(1, self.config.batch_size)
        for start in range(0, len(sentences), bs):
            prompts = [self.prompt(s) for s in sentences[start : start + bs]]
            enc = self.tokenizer(prompts, return_tensors="pt", padding=True, truncation=True, max_length=2048)
            enc = {k: v.to(self.model.device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
            with torch.no_grad():
                gen = self.model.generate(
                    **enc, num_beams=self.config.num_beams, no_repeat_ngram_size=self.config.no_repeat_ngram_size,
                    max_new_tokens=self.config.max_new_tokens, do_sample=False,
                    pad_token_id=self.tokenizer.pad_token_id, early_stopping=True)
            new = gen[:, enc["input_ids"].shape[1]:]
            for text in self.tokenizer.batch_decode(new, skip_special_tokens=True):
                line = text.strip().split("\n")[0].strip()
                out.append(line or GENERIC_QUESTION)
        return out


def build_question_writer(*, config: QuestionsConfig, examples: Sequence[tuple[str, str]]) -> Any:
    if config.model == QUESTION_FALLBACK:
        return RetrievalQuestionWriter(examples)
    return CausalLMQuestionWriter(config=config, examples=examples)


__all__ = ["GENERIC_QUESTION", "CausalLMQuestionWriter", "RetrievalQuestionWriter", "build_prompt",
           "build_question_writer", "training_examples"]
