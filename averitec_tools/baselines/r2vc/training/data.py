"""Training data for the R2VC generator (paper §3.3): SFT examples and DPO preference pairs.

Input rows are :class:`~averitec_tools.baselines.r2vc.training.rows.TrainingRow` records
(:mod:`~averitec_tools.baselines.r2vc.training.rows`: standardised VitaminC-style
``{claim, evidence_text, label}``).

The paper uses "the evidence_text field as the single evidence snippet" of the Appendix
B prompt; inference shows min(16, |E|) passages in random order. Prompts are therefore
built in the inference layout (:mod:`~averitec_tools.baselines.r2vc.training.layout`):
the row's evidence at a random position among ``n_passages - 1`` other rows' evidence
(``n_passages=1``: the paper's single snippet as ``[1]``).

* SFT example: prompt = system + user messages, completion = the templated response
  with the gold label and a minimal rationale that quotes and cites the gold passage.
* DPO pair (x, y+, y−): y+ is that same chosen response; y− is, by a seeded draw,
  either a *wrong label* (one of the two other labels, with a rationale written for
  it, citing the gold passage) or a *mismatched citation* (the correct label, but
  quoting and citing one of the prompt's distractors — a random position, not always
  ``[2]``; in a one-passage prompt, another row's evidence cited as a passage number
  the prompt does not have).

Both are returned in TRL's conversational prompt–completion / preference formats.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools.baselines.r2vc.stages.generation.prompt import build_messages, format_response
from averitec_tools.baselines.r2vc.training.layout import PromptLayout, draw_layouts
from averitec_tools.baselines.r2vc.training.rows import TrainingRow
from averitec_tools.baselines.r2vc.types import R2VC_LABELS
from averitec_tools.errors import UserError

#: Words quoted from the evidence in a templated rationale.
QUOTE_WORDS = 40

REJECTION_KINDS: tuple[str, ...] = ("wrong_label", "mismatched_citation")


@dataclass(frozen=True)
class PreferencePair:
    """One DPO triple (x, y+, y−) and how y− was corrupted.

    Attributes:
        row: The source row (x is built from it).
        chosen: y+, the correct, grounded response.
        rejected: y−, the corrupted response.
        rejection_kind: One of :data:`REJECTION_KINDS`.
        layout: The prompt's passages (None: the row's evidence alone).
    """

    row: TrainingRow
    chosen: str
    rejected: str
    rejection_kind: str
    layout: PromptLayout | None = None


def _quote(text: str, *, words: int = QUOTE_WORDS) -> str:
    tokens = text.split()
    quoted = " ".join(tokens[:words])
    quoted = quoted.rstrip(".,;: ")
    return quoted + (" …" if len(tokens) > words else "")


def templated_rationale(*, label: str, evidence_text: str) -> str:
    """A minimal evidence-grounded one-sentence rationale for ``label`` (no citation marker).

    Example:
        >>> templated_rationale(label="False", evidence_text="It opened in 1932.")
        'Because the evidence states "It opened in 1932", which contradicts the claim'
    """
    quote = _quote(evidence_text)
    if label == "True":
        return f'Because the evidence states "{quote}", which supports the claim'
    if label == "False":
        return f'Because the evidence states "{quote}", which contradicts the claim'
    if label == "Uncertain":
        return f'Because the evidence states "{quote}", which is not enough to decide the claim'
    raise ValueError(f"label must be one of {R2VC_LABELS}, got {label!r}")


def chosen_response(row: TrainingRow, *, gold: int = 0) -> str:
    """y+: the gold label with a rationale that quotes the evidence and cites it (0-based ``gold``).

    Example:
        >>> chosen_response(TrainingRow(claim="c", evidence_text="e", label="True"))
        'True. Because the evidence states "e", which supports the claim [1].'
        >>> chosen_response(TrainingRow(claim="c", evidence_text="e", label="True"), gold=6)[-4:]
        '[7].'
    """
    return format_response(
        label=row.label,
        rationale=templated_rationale(label=row.label, evidence_text=row.evidence_text),
        citations=[gold],
    )


def rejected_response(
    row: TrainingRow, *, kind: str, rng: random.Random, other_evidence: Sequence[str],
    layout: PromptLayout | None = None,
) -> str:
    """y−: a wrong label, or the right label with a clearly mismatched citation.

    Args:
        row: The source row.
        kind: ``"wrong_label"`` or ``"mismatched_citation"``.
        rng: Seeded random source (picks the wrong label / the other evidence).
        other_evidence: Evidence texts of other rows, quoted by a mismatched citation
            when the prompt has no distractor.
        layout: The prompt's passages: a mismatched citation quotes and cites one of its
            distractors, a wrong label cites the gold passage.

    Example:
        >>> r = TrainingRow(claim="c", evidence_text="e", label="True")
        >>> rejected_response(r, kind="mismatched_citation", rng=random.Random(0),
        ...                   other_evidence=["x"])
        'True. Because the evidence states "x", which supports the claim [2].'
    """
    gold = layout.gold if layout is not None else 0
    if kind == "wrong_label":
        wrong = rng.choice([label for label in R2VC_LABELS if label != row.label])
        return format_response(
            label=wrong,
            rationale=templated_rationale(label=wrong, evidence_text=row.evidence_text),
            citations=[gold],
        )
    if kind == "mismatched_citation" and layout is not None and layout.distractors:
        cited = rng.choice(layout.distractors)
        return format_response(
            label=row.label,
            rationale=templated_rationale(label=row.label, evidence_text=layout.passages[cited].text),
            citations=[cited],
        )
    if kind == "mismatched_citation":
        candidates = [text for text in other_evidence if text != row.evidence_text]
        foreign = rng.choice(candidates) if candidates else "an unrelated source"
        # Passage [2] does not exist in a single-evidence prompt: a hallucinated citation.
        return format_response(
            label=row.label,
            rationale=templated_rationale(label=row.label, evidence_text=foreign),
            citations=[1],
        )
    raise ValueError(f"kind must be one of {REJECTION_KINDS}, got {kind!r}")


def build_preference_pairs(
    rows: Sequence[TrainingRow], *, seed: int = 0, wrong_label_fraction: float = 0.5, n_passages: int = 1,
    layout_seed: int = 0, only: Sequence[int] | None = None,
) -> list[PreferencePair]:
    """Build one DPO preference pair per row (seeded, reproducible).

    Args:
        rows: Training rows.
        seed: Seed of the corruption draws.
        wrong_label_fraction: Probability that y− is a wrong label (else a mismatched
            citation).
        n_passages: Passages per prompt (the inference layout, :func:`draw_layouts`).
        layout_seed: Seed of the distractors and gold positions.
        only: Build the pairs of these row indices alone, in that order (distractors and
            mismatched citations still come from every row).

    Returns:
        One pair per row (of ``only``), in order.

    Example:
        >>> rows = [TrainingRow(claim="c", evidence_text=f"e{i}", label="True") for i in range(4)]
        >>> pairs = build_preference_pairs(rows, seed=0)
        >>> all(p.chosen != p.rejected for p in pairs)
        True
    """
    if not 0.0 <= wrong_label_fraction <= 1.0:
        raise UserError(f"wrong_label_fraction must be in [0, 1], got {wrong_label_fraction}")
    rng = random.Random(seed)
    evidence_pool = [row.evidence_text for row in rows]
    layouts = draw_layouts(rows, n_passages=n_passages, seed=layout_seed, only=only)
    chosen_rows = rows if only is None else [rows[i] for i in only]
    pairs = []
    for row, layout in zip(chosen_rows, layouts, strict=True):
        kind = "wrong_label" if rng.random() < wrong_label_fraction else "mismatched_citation"
        pairs.append(
            PreferencePair(
                row=row,
                chosen=chosen_response(row, gold=layout.gold),
                rejected=rejected_response(row, kind=kind, rng=rng, other_evidence=evidence_pool, layout=layout),
                rejection_kind=kind,
                layout=layout,
            )
        )
    return pairs


def sft_record(
    row: TrainingRow, *, layout: PromptLayout | None = None, system: str | None = None
) -> dict[str, list[dict[str, str]]]:
    """One conversational prompt–completion record (TRL's SFT format).

    Args:
        row: The training row.
        layout: The prompt's passages (None: the row's evidence alone).
        system: The model's reasoning switch (see :func:`~averitec_tools.baselines.r2vc.stages.generation.prompt.build_messages`).

    Example:
        >>> rec = sft_record(TrainingRow(claim="c", evidence_text="e", label="Uncertain"))
        >>> [m["role"] for m in rec["prompt"]], rec["completion"][0]["role"]
        (['system', 'user'], 'assistant')
    """
    layout = layout or PromptLayout(passages=(row.passage,), gold=0)
    return {
        "prompt": build_messages(claim=row.claim, passages=layout.passages, system=system),
        "completion": [{"role": "assistant", "content": chosen_response(row, gold=layout.gold)}],
    }


def dpo_record(pair: PreferencePair, *, system: str | None = None) -> dict[str, list[dict[str, str]]]:
    """One conversational preference record (TRL's DPO format).

    Example:
        >>> row = TrainingRow(claim="c", evidence_text="e", label="True")
        >>> rec = dpo_record(build_preference_pairs([row], seed=0)[0])
        >>> sorted(rec)
        ['chosen', 'prompt', 'rejected']
    """
    passages = pair.layout.passages if pair.layout is not None else (pair.row.passage,)
    return {
        "prompt": build_messages(claim=pair.row.claim, passages=passages, system=system),
        "chosen": [{"role": "assistant", "content": pair.chosen}],
        "rejected": [{"role": "assistant", "content": pair.rejected}],
    }


def build_sft_dataset(
    rows: Sequence[TrainingRow], *, n_passages: int = 1, seed: int = 0, system: str | None = None
) -> Any:
    """A ``datasets.Dataset`` of :func:`sft_record` rows (``prompt``, ``completion``).

    Args:
        rows: Training rows.
        n_passages: Passages per prompt (the inference layout, :func:`draw_layouts`).
        seed: Seed of the distractors and gold positions.
        system: The model's reasoning switch, or None.

    Example:
        >>> ds = build_sft_dataset([TrainingRow(claim="c", evidence_text="e", label="True")])
        >>> ds.column_names
        ['prompt', 'completion']
    """
    from datasets import Dataset

    layouts = draw_layouts(rows, n_passages=n_passages, seed=seed)
    return Dataset.from_list([sft_record(row, layout=layout, system=system)
                              for row, layout in zip(rows, layouts, strict=True)])


def build_dpo_dataset(pairs: Iterable[PreferencePair], *, system: str | None = None) -> Any:
    """A ``datasets.Dataset`` of :func:`dpo_record` rows (``prompt``, ``chosen``, ``rejected``).

    Example:
        >>> row = TrainingRow(claim="c", evidence_text="e", label="True")
        >>> build_dpo_dataset(build_preference_pairs([row])).num_rows
        1
    """
    from datasets import Dataset

    return Dataset.from_list([dpo_record(pair, system=system) for pair in pairs])


__all__ = ["PreferencePair", "build_dpo_dataset", "build_preference_pairs", "build_sft_dataset", "chosen_response",
           "rejected_response", "sft_record"]
