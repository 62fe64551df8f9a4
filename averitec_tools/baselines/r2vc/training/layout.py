"""Training prompts in the inference layout: the gold passage among distractors, at a random place.

At inference the generator sees min(16, |E(c)|) retrieved passages in random order; a
model trained only on one-passage prompts learns to cite ``[1]``. Each training row's
prompt therefore holds its own evidence and up to ``n_passages - 1`` other rows' evidence
sentences, shuffled, and the targets cite the gold passage wherever it landed.

A distractor never comes from a row that could bear on the claim: one with the same
claim text, the same VitaminC ``case_id`` (contrastive revisions of one sentence, whose
evidence may decide the claim the other way), the same page title, or the same
evidence text.

Example:
    >>> from averitec_tools.baselines.r2vc.training.rows import TrainingRow
    >>> rows = [TrainingRow(claim=f"c{i}", evidence_text=f"e{i}", label="True", title=f"P{i}") for i in range(6)]
    >>> layout = draw_layouts(rows, n_passages=4, seed=0)[0]
    >>> len(layout.passages), layout.passages[layout.gold].text
    (4, 'e0')
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from averitec_tools.baselines.r2vc.types import Passage

if TYPE_CHECKING:
    from averitec_tools.baselines.r2vc.training.rows import TrainingRow

#: Random draws tried per distractor before scanning the rows in a shuffled order.
_TRIES = 20


@dataclass(frozen=True)
class PromptLayout:
    """The passages of one training prompt and where the row's own evidence is.

    Attributes:
        passages: The passages, numbered ``[1]``... in this order.
        gold: 0-based index of the row's own evidence in ``passages``.
    """

    passages: tuple[Passage, ...]
    gold: int

    @property
    def distractors(self) -> tuple[int, ...]:
        """Indices of the other passages."""
        return tuple(i for i in range(len(self.passages)) if i != self.gold)


def _unrelated(a: TrainingRow, b: TrainingRow) -> bool:
    if a.claim == b.claim or a.evidence_text == b.evidence_text:
        return False
    if a.group and a.group == b.group:
        return False
    return not (a.title and a.title == b.title)


def _distractors(rows: Sequence[TrainingRow], i: int, *, n: int, rng: random.Random) -> list[int]:
    picked: list[int] = []
    tries = 0
    while len(picked) < n and tries < _TRIES * n and len(rows) > 1:
        tries += 1
        j = rng.randrange(len(rows))
        if j != i and j not in picked and _unrelated(rows[i], rows[j]):
            picked.append(j)
    if len(picked) < n:  # few eligible rows (small data): scan them all in a random order
        order = list(range(len(rows)))
        rng.shuffle(order)
        for j in order:
            if len(picked) == n:
                break
            if j != i and j not in picked and _unrelated(rows[i], rows[j]):
                picked.append(j)
    return picked


def draw_layouts(rows: Sequence[TrainingRow], *, n_passages: int, seed: int,
                 only: Sequence[int] | None = None) -> list[PromptLayout]:
    """One seeded layout per row: its evidence at a random position among ≤ n_passages − 1 distractors.

    With ``n_passages`` 1 every layout is the row's evidence alone, as ``[1]``. ``only``: the
    layouts of these row indices alone, in that order (distractors still drawn from every row).
    """
    if n_passages < 1:
        raise ValueError(f"n_passages must be >= 1, got {n_passages}")
    rng = random.Random(seed)
    out = []
    for i in range(len(rows)) if only is None else only:
        row = rows[i]
        others = [rows[j].passage for j in _distractors(rows, i, n=n_passages - 1, rng=rng)] if n_passages > 1 else []
        gold = rng.randrange(len(others) + 1)
        out.append(PromptLayout(passages=(*others[:gold], row.passage, *others[gold:]), gold=gold))
    return out


__all__ = ["PromptLayout", "draw_layouts"]
