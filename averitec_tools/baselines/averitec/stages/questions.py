"""Stage 3: the question each retrieved sentence answers.

``CausalLMQuestionWriter`` few-shot prompts a causal LM (default ``bigscience/bloom-7b1``;
any HF causal LM) with the 10 training (answer, question) pairs whose answers are most
BM25-similar to the sentence, decoding with 2 beams and no repeated bigrams.
``RetrievalQuestionWriter`` is the named fallback without LM weights: the question of the
most BM25-similar training answer. Both load nothing until the first sentence, so a run
whose questions all come from the stage cache never loads the LM.

Prompt layouts (``questions.prompt``):

* ``upstream`` — as the 2024 shared-task script: each training answer is the example's
  answer text (Boolean: "<answer>, because <explanation lower-cased>"; a final "." added
  unless it ends in . ! : ?), looked up with rank_bm25 Okapi over NLTK tokens; examples
  ``Evidence:  <answer>`` / ``Question answered: <question>?`` (two spaces, as upstream),
  nearest first, joined by blank lines, no header, then ``Evidence: <sentence>`` and an open
  ``Question answered: ``. The output is cut to its first 250 characters, then to the text
  before the first "?" (``output_cut: upstream``).
* ``header-nearest-last`` — this project's earlier layout: a header line, bm25s lookup over
  "<answer>. <explanation>", nearest last; the first generated line is kept.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools.baselines.averitec.config import QUESTION_FALLBACK, QuestionsConfig
from averitec_tools.baselines.averitec.io.data import ClaimItem, gold_pairs
from averitec_tools.baselines.averitec.stages.bm25 import make_index

#: Used when no training answer shares a term with the sentence.
GENERIC_QUESTION = "What does this source say about the claim?"
PROMPT_HEADER = "Each piece of evidence below is followed by the question that it answers.\n\n"
#: Upstream keeps at most this many generated characters.
UPSTREAM_MAX_CHARS = 250
#: ``stop: question-end`` without ``max_new_tokens``: at most this many new tokens (more
#: than the 250 characters upstream keeps, at one character per token or more).
QUESTION_END_MAX_NEW_TOKENS = 256


@dataclass(frozen=True)
class Shot:
    """A few-shot example: the text looked up by BM25 and the prompt block it stands for."""

    lookup: str
    question: str
    block: str


def upstream_shots(train: Sequence[ClaimItem]) -> list[Shot]:
    """The upstream prompt examples of the training claims (unanswerable answers skipped).

    Example:
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> c = AVeriTeCClaim.from_dict({"claim": "x", "questions": [{"question": "Was it?", "answers": [
        ...     {"answer": "No", "answer_type": "Boolean", "boolean_explanation": "It Was Fake"}]}]}, where="x")
        >>> s = upstream_shots([ClaimItem(0, c)])[0]
        >>> s.lookup, s.block
        ('No, because it was fake.', 'Evidence:  No, because it was fake.\\nQuestion answered: Was it?')
    """
    out = []
    for item in train:
        for q in item.record.questions:
            q_text = q.question.strip()
            if not q_text:
                continue
            if not q_text.endswith("?"):
                q_text += "?"
            for a in q.answers:
                if a.answer_type == "Boolean":
                    text = f"{a.answer}, because {(a.boolean_explanation or '').lower().strip()}"
                elif a.answer_type in ("Extractive", "Abstractive"):
                    text = a.answer
                else:
                    continue
                if not text:
                    continue
                if text[-1] not in ".!:?":
                    text += "."
                # upstream joins with "||", flattens newlines, then turns "||" into newlines
                block = f"Evidence:  {text.strip()}||Question answered: {q_text}".replace("\n", " ").replace("||", "\n")
                out.append(Shot(lookup=text, question=q_text, block=block))
    return out


def header_shots(train: Sequence[ClaimItem]) -> list[Shot]:
    """The earlier layout's examples: (answer text, question) of every answerable pair."""
    return [Shot(lookup=p.answer, question=p.question, block=f"Evidence: {p.answer}\nQuestion answered: {p.question}")
            for c in train for p in gold_pairs(c.record) if p.answer_type != "Unanswerable" and p.answer.strip()]


def training_examples(train: Sequence[ClaimItem]) -> list[tuple[str, str]]:
    """(answer, question) pairs of the training claims, unanswerable answers left out."""
    return [(s.lookup, s.question) for s in header_shots(train)]


def build_prompt(*, sentence: str, shots: Sequence[Shot], layout: str = "upstream") -> str:
    """The few-shot prompt for one sentence; ``shots`` in prompt order.

    Example:
        >>> shot = Shot("Sun.", "Was it sunny?", "Evidence:  Sun.\\nQuestion answered: Was it sunny?")
        >>> build_prompt(sentence="It\\nrained.", shots=[shot])
        'Evidence:  Sun.\\nQuestion answered: Was it sunny?\\n\\nEvidence: It rained.\\nQuestion answered: '
        >>> print(build_prompt(sentence="It rained.", shots=[Shot("Sun.", "Was it sunny?",
        ...       "Evidence: Sun.\\nQuestion answered: Was it sunny?")], layout="header-nearest-last"))
        Each piece of evidence below is followed by the question that it answers.
        <BLANKLINE>
        Evidence: Sun.
        Question answered: Was it sunny?
        <BLANKLINE>
        Evidence: It rained.
        Question answered:
    """
    if layout == "upstream":
        return "\n\n".join([s.block for s in shots] + [f"Evidence: {sentence.replace(chr(10), ' ')}\nQuestion answered: "])
    blocks = [f"{s.block}\n\n" for s in shots]
    return PROMPT_HEADER + "".join(blocks) + f"Evidence: {sentence}\nQuestion answered:"


def cut_output(text: str, *, style: str) -> str:
    """The question kept from a generated continuation.

    Example:
        >>> cut_output(" Who won?\\nEvidence: x", style="upstream")
        'Who won?'
        >>> cut_output("no question mark", style="upstream")
        'no question mark?'
        >>> cut_output(" Who won?\\nEvidence: x", style="first-line")
        'Who won?'
    """
    if style == "upstream":
        return text[:UPSTREAM_MAX_CHARS].strip().split("?")[0].replace("\n", " ") + "?"
    return text.strip().split("\n")[0].strip() or GENERIC_QUESTION


class _Shots:
    """Training examples and their BM25 index, built on first use."""

    def __init__(self, *, train: Sequence[ClaimItem], layout: str) -> None:
        self.train = list(train)
        self.layout = layout
        self._shots: list[Shot] | None = None
        self._index: Any = None
        self.load_seconds = 0.0

    def nearest(self, sentence: str, k: int) -> tuple[list[Shot], list[float]]:
        """The ``k`` nearest examples, nearest first, with their BM25 scores."""
        if self._shots is None:
            t0 = time.perf_counter()
            self._shots = upstream_shots(self.train) if self.layout == "upstream" else header_shots(self.train)
            self._index = make_index("upstream" if self.layout == "upstream" else "bm25s",
                                     [s.lookup for s in self._shots])
            self.load_seconds = time.perf_counter() - t0
        rows = self._index.top(sentence, k=k)
        scores = self._index.scores(sentence) if rows else []
        return [self._shots[i] for i in rows], [float(scores[i]) for i in rows]


class RetrievalQuestionWriter:
    """The fallback: each sentence gets the question of the nearest training answer (BM25);
    a sentence sharing no term with any training answer gets :data:`GENERIC_QUESTION`.

    Example:
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> train = [ClaimItem(i, AVeriTeCClaim.from_dict({"claim": "c", "questions": [{"question": q,
        ...     "answers": [{"answer": a, "answer_type": "Extractive"}]}]}, where="x"))
        ...     for i, (a, q) in enumerate([("The moon is made of rock.", "What is the moon made of"),
        ...                                 ("Cats purr.", "Do cats purr?"), ("Dogs bark.", "Do dogs bark?")])]
        >>> w = RetrievalQuestionWriter(train=train)
        >>> w.write(["moon rock samples", "zzz"]), w.generic
        (['What is the moon made of?', 'What does this source say about the claim?'], 1)
    """

    component = QUESTION_FALLBACK

    def __init__(self, *, train: Sequence[ClaimItem], layout: str = "upstream") -> None:
        self.shots = _Shots(train=train, layout=layout)
        self.generic = 0

    @property
    def load_seconds(self) -> float:
        """Seconds spent building the example index (on first use)."""
        return self.shots.load_seconds

    def write(self, sentences: Sequence[str]) -> list[str]:
        out = []
        for s in sentences:
            shots, scores = self.shots.nearest(s, 1)
            if shots and scores[0] > 0:
                out.append(shots[0].question)
            else:
                self.generic += 1
                out.append(GENERIC_QUESTION)
        return out


class CausalLMQuestionWriter:
    """Few-shot question generation with a Hugging Face causal LM (BLOOM by default),
    loaded on the first call of :meth:`write`."""

    def __init__(self, *, config: QuestionsConfig, train: Sequence[ClaimItem]) -> None:
        from averitec_tools.baselines.averitec.models import describe

        self.config = config
        self.shots = _Shots(train=train, layout=config.prompt)
        _, self.component = describe(model=config.model)
        self._model: Any = None
        self._lm_seconds = 0.0

    @property
    def load_seconds(self) -> float:
        """Seconds spent loading the LM and building the example index (on first use)."""
        return self._lm_seconds + self.shots.load_seconds

    def prompt(self, sentence: str) -> str:
        shots, _ = self.shots.nearest(sentence, self.config.few_shot)
        if self.config.prompt != "upstream":
            shots = shots[::-1]  # nearest last, closest to the sentence being asked about
        return build_prompt(sentence=sentence, shots=shots, layout=self.config.prompt)

    def _load(self) -> tuple[Any, Any]:
        if self._model is None:
            from averitec_tools.baselines.averitec.models import load_causal_lm

            t0 = time.perf_counter()
            self._model = load_causal_lm(model=self.config.model, dtype=self.config.dtype, device=self.config.device)
            self._lm_seconds = time.perf_counter() - t0
        return self._model[0], self._model[1]

    def write(self, sentences: Sequence[str]) -> list[str]:
        import torch

        if not sentences:
            return []
        model, tokenizer = self._load()
        c = self.config
        limits = generation_limits(c, tokenizer=tokenizer)
        out: list[str] = []
        bs = max(1, c.batch_size)
        for start in range(0, len(sentences), bs):
            prompts = [self.prompt(s) for s in sentences[start : start + bs]]
            trunc = {"truncation": True, "max_length": c.prompt_max_tokens} if c.prompt_max_tokens else {}
            enc = tokenizer(prompts, return_tensors="pt", padding=True, **trunc)
            enc = {k: v.to(model.device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
            with torch.no_grad():
                gen = model.generate(**enc, num_beams=c.num_beams, no_repeat_ngram_size=c.no_repeat_ngram_size,
                                     do_sample=False, pad_token_id=tokenizer.pad_token_id, early_stopping=True,
                                     **limits)
            new = gen[:, enc["input_ids"].shape[1]:]
            out.extend(cut_output(t, style=c.output_cut)
                       for t in tokenizer.batch_decode(new, skip_special_tokens=True))
        return out


def generation_limits(config: QuestionsConfig, *, tokenizer: Any = None) -> dict[str, Any]:
    """The ``generate`` arguments that bound one question's decoding.

    Example:
        >>> from averitec_tools.baselines.averitec.config import builtin_config
        >>> generation_limits(builtin_config("paper").questions)
        {'max_length': 5000}
        >>> generation_limits(builtin_config("paper-bounded").questions)
        {'max_new_tokens': 256, 'stop_strings': ['?']}
    """
    if config.stop == "question-end":
        out: dict[str, Any] = {"max_new_tokens": config.max_new_tokens or QUESTION_END_MAX_NEW_TOKENS,
                               "stop_strings": ["?"]}
        if tokenizer is not None:
            out["tokenizer"] = tokenizer
        return out
    if config.max_new_tokens is not None:
        return {"max_new_tokens": config.max_new_tokens}
    return {"max_length": config.max_length} if config.max_length is not None else {}


def build_question_writer(*, config: QuestionsConfig, train: Sequence[ClaimItem]) -> Any:
    if config.model == QUESTION_FALLBACK:
        return RetrievalQuestionWriter(train=train, layout=config.prompt)
    return CausalLMQuestionWriter(config=config, train=train)


__all__ = ["QUESTION_END_MAX_NEW_TOKENS", "CausalLMQuestionWriter", "RetrievalQuestionWriter", "Shot", "build_prompt",
           "build_question_writer", "cut_output", "training_examples", "upstream_shots"]
