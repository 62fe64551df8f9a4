"""Hungarian METEOR as a reward for TRL trainers (GRPO, RLOO, online DPO): evidence generation
trained toward the official evidence score.

:func:`hungarian_meteor_reward` returns a function with TRL's reward signature
(``reward(prompts=..., completions=..., **dataset_columns) -> list[float]``). Each
completion is read as evidence strings (:func:`evidence_lines`: one per non-empty line),
and scored against its claim's gold evidence with :meth:`BatchScorer.score_pairs` -- the
profile's exact rule (2024: the first 10 strings, normalised by the number of gold
strings), NLTK 3.9.1 METEOR, the gold side prepared once. A claim's gold evidence comes
from a dataset column: ``claim_id`` (a position in the scorer's reference file) or the
gold strings themselves.

Example (with TRL; see ``docs/scorer.md``)::

    from trl import GRPOConfig, GRPOTrainer
    from averitec_tools.scoring import BatchScorer
    from averitec_tools.scoring.rewards import hungarian_meteor_reward

    scorer = BatchScorer(profile="averitec2024", references="dev.json")
    reward = hungarian_meteor_reward(scorer)            # reads the dataset's claim_id column
    trainer = GRPOTrainer(model=model, reward_funcs=[reward], train_dataset=dataset, args=GRPOConfig(...))

Example (the function itself):
    >>> import json, pathlib, tempfile
    >>> gold = pathlib.Path(tempfile.mkdtemp()) / "gold.json"
    >>> _ = gold.write_text(json.dumps([{"claim": "c", "label": "Refuted",
    ...     "questions": [{"question": "Who said it?", "answers": [{"answer": "Bob", "answer_type": "Extractive"}]}]}]))
    >>> from averitec_tools.scoring.batch import BatchScorer
    >>> reward = hungarian_meteor_reward(BatchScorer(references=gold, allow_download=False))
    >>> [round(r, 4) for r in reward(prompts=["p", "p"], completions=["Who said it? Bob", "Nobody knows."], claim_id=[0, 0])]
    [0.996, 0.0]
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.scoring.batch import BatchScorer

Reward = Callable[..., list[float]]


def evidence_lines(completion: str) -> list[str]:
    """A completion's evidence strings: its non-empty lines, stripped.

    Example:
        >>> evidence_lines("Who said it? Bob\\n\\n  When? In 2020.  \\n")
        ['Who said it? Bob', 'When? In 2020.']
    """
    return [line.strip() for line in completion.splitlines() if line.strip()]


def completion_text(completion: Any) -> str:
    """The text of a TRL completion: a string, or a conversation whose last message is the model's.

    Example:
        >>> completion_text("text"), completion_text([{"role": "assistant", "content": "reply"}])
        ('text', 'reply')
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Sequence) and completion and isinstance(completion[-1], Mapping):
        return str(completion[-1].get("content", ""))
    raise UserError(f"a completion must be a string or a list of chat messages, not {type(completion).__name__}")


def hungarian_meteor_reward(scorer: BatchScorer, *, gold: str = "claim_id",
                            parse: Callable[[str], list[str]] = evidence_lines,
                            name: str = "hungarian_meteor") -> Reward:
    """A TRL reward function: the Hungarian METEOR of each completion's evidence against its claim's gold.

    Args:
        scorer: The warm scorer (its profile's rule, its reference file for ``claim_id``).
        gold: The dataset column giving each example's gold: claim ids (positions in the
            reference file) or lists of gold evidence strings.
        parse: Turns a completion's text into evidence strings.
        name: The function's ``__name__`` (TRL logs each reward under it).

    Raises:
        UserError: (when called) no ``gold`` column, or one value per completion missing.
    """

    def reward(prompts: Any = None, completions: Sequence[Any] = (), **columns: Any) -> list[float]:
        values = columns.get(gold)
        if values is None or len(values) != len(completions):
            raise UserError(f"the reward needs a {gold!r} column with one value per completion",
                            hint=f"columns given: {', '.join(sorted(columns)) or 'none'}")
        references = [scorer.gold_evidence(int(v)) if isinstance(v, int) else [str(s) for s in v] for v in values]
        predicted = [parse(completion_text(c)) for c in completions]
        return scorer.score_pairs(zip(predicted, references, strict=True))

    reward.__name__ = reward.__qualname__ = name
    return reward


__all__ = ["Reward", "completion_text", "evidence_lines", "hungarian_meteor_reward"]
