"""The evidence-scorer registry and base class, and the Q+A parsing every scorer shares.

The scorers themselves live in :mod:`~averitec_tools.scoring.meta_eval.scorers` (the
non-LLM ones), :mod:`~averitec_tools.scoring.meta_eval.ev2r_scorer`,
:mod:`~averitec_tools.scoring.meta_eval.free_scorer`,
:mod:`~averitec_tools.scoring.meta_eval.verdict_scorer` and
:mod:`~averitec_tools.scoring.meta_eval.nli_verdict`; each registers here, so none imports
another.

    >>> qa_strings("Question: Who?\\nAnswer: Me.\\nQuestion: When?\\nAnswer: Now.")
    ['Who? Me.', 'When? Now.']
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from averitec_tools.registry import Registry
from averitec_tools.scoring.meta_eval.ratings import RatedItem

#: Name → scorer class (instantiated with its defaults, then its spec's parameters).
SCORERS: Registry[type] = Registry("evidence scorer")
_QUESTION = re.compile(r"(?m)^Question:")


def register_scorer(cls: type) -> type:
    """Class decorator: register ``cls`` under ``cls.name``."""
    SCORERS.add(cls.name, cls)
    return cls


@dataclass(frozen=True)
class Scorer:
    """Base of the evidence scorers: ``name``, whether it calls an LLM, ``score(items=)``."""

    name: ClassVar[str] = ""
    llm: ClassVar[bool] = False

    def __str__(self) -> str:
        base = type(self)()
        changed = [f"{f.name}={getattr(self, f.name)}" for f in dataclasses.fields(self)
                   if getattr(self, f.name) != getattr(base, f.name)]
        return f"{self.name}({','.join(changed)})" if changed else self.name

    def score(self, *, items: Sequence[RatedItem]) -> list[float | None]:
        raise NotImplementedError

    def details(self) -> dict[str, Any]:
        """Facts the report prints with the scorer (failures, model hash ...)."""
        return {}


def check_mode_coverage(name: str, *, mode: str, modes: Sequence[str], coverage: float) -> None:
    """The one-line error of a verdict scorer's ``mode`` outside ``modes`` or ``coverage`` outside [0, 1].

    Example:
        >>> check_mode_coverage("x", mode="gold", modes=("gold",), coverage=1.5)
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: x: coverage must lie in [0, 1], got 1.5
    """
    from averitec_tools.errors import UserError

    if mode not in modes:
        raise UserError(f"{name}: mode must be one of {', '.join(modes)}, got {mode!r}")
    if not 0.0 <= coverage <= 1.0:
        raise UserError(f"{name}: coverage must lie in [0, 1], got {coverage}")


def qa_blocks(text: str) -> list[tuple[str, str]]:
    """``(question, answer)`` of each ``Question: ...\\nAnswer: ...`` block of an evidence text.

    Example:
        >>> qa_blocks("Question: Who?\\nAnswer: Me.\\n\\nQuestion: When?\\nAnswer: Now.\\n")
        [('Who?', 'Me.'), ('When?', 'Now.')]
    """
    out = []
    for block in _QUESTION.split(text):
        block = block.strip()
        if not block:
            continue
        q, _, a = block.partition("\nAnswer:")
        out.append((q.strip(), a.strip()))
    return out


def qa_strings(text: str) -> list[str]:
    """Each block as one ``"question answer"`` string (the official Q+A evidence strings)."""
    return [f"{q} {a}".strip() for q, a in qa_blocks(text)]



__all__ = ["SCORERS", "Scorer", "check_mode_coverage", "qa_blocks", "qa_strings", "register_scorer"]
