"""Reasoning-mode switches of generator models, and which mode an R2VC run uses.

The paper's generator, Llama-3.1-Nemotron-Nano-8B-v1, is a reasoning model whose mode is
chosen by the *system prompt*: exactly ``"detailed thinking on"`` (a ``<think>`` trace
before the answer) or ``"detailed thinking off"`` (a direct answer), with every
instruction in the user turn (the model card). The paper's prompt (Appendix B) puts its
own sentence in the system turn, which leaves the mode to chance, and a reasoning trace
does not fit Table G.1's 160 new tokens. So for such a model R2VC writes the switch as
the system prompt and moves the paper's system sentence to the top of the user turn:

* ``auto`` (default) — ``off`` for a model with a switch, ``none`` otherwise;
* ``off`` / ``on`` — the switch (an error for a model without one);
* ``none`` — the paper's prompt unchanged (the model's mode is then unspecified).

``on`` needs room for the trace: :func:`check_budget` refuses it below
:data:`MIN_TOKENS_REASONING_ON` new tokens. Training and inference must use the same
layout; the trained model's ``r2vc_training.json`` records the mode, and
:func:`resolve_reasoning` reads it back for that model.

Example:
    >>> resolve_reasoning(model="nvidia/Llama-3.1-Nemotron-Nano-8B-v1", requested="auto")
    ReasoningChoice(mode='off', system='detailed thinking off', family='llama-nemotron-nano')
    >>> resolve_reasoning(model="meta-llama/Llama-3.1-8B-Instruct", requested="auto").mode
    'none'
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from averitec_tools.errors import UserError

REASONING_MODES: tuple[str, ...] = ("auto", "off", "on", "none")

#: Fewest new tokens allowed with reasoning on (a trace plus the verdict).
MIN_TOKENS_REASONING_ON = 1024

#: Where a trained model records the prompt layout it was trained with.
TRAINING_FILE = "r2vc_training.json"


@dataclass(frozen=True)
class ReasoningSwitch:
    """A model family whose reasoning mode is its system prompt."""

    family: str
    pattern: str
    on: str
    off: str


#: Known switches (matched case-insensitively against the model id).
SWITCHES: tuple[ReasoningSwitch, ...] = (
    ReasoningSwitch(family="llama-nemotron-nano", pattern=r"nemotron[-_]nano",
                    on="detailed thinking on", off="detailed thinking off"),
)


@dataclass(frozen=True)
class ReasoningChoice:
    """The mode a run uses and the system prompt that selects it.

    Attributes:
        mode: ``"off"``, ``"on"`` or ``"none"`` (no switch: the paper's prompt).
        system: The system prompt that selects the mode (``None`` for ``"none"``).
        family: The switching model family, or ``None``.
    """

    mode: str
    system: str | None
    family: str | None

    def to_dict(self) -> dict[str, str | None]:
        return {"mode": self.mode, "system": self.system, "family": self.family}


#: No reasoning switch: the paper's Appendix B system prompt.
PAPER_PROMPT = ReasoningChoice(mode="none", system=None, family=None)


def switch_for(model: str) -> ReasoningSwitch | None:
    """The reasoning switch of ``model`` (a hub id or path), or None."""
    for switch in SWITCHES:
        if re.search(switch.pattern, model, flags=re.IGNORECASE):
            return switch
    return None


def recorded_choice(model: str) -> ReasoningChoice | None:
    """The reasoning choice a trained model directory recorded in ``r2vc_training.json``."""
    path = Path(model).expanduser() / TRAINING_FILE
    if not path.is_file():
        return None
    try:
        prompt = json.loads(path.read_text(encoding="utf-8")).get("prompt", {}).get("reasoning")
    except (ValueError, AttributeError):
        raise UserError(f"{path}: corrupt training record") from None
    if not isinstance(prompt, dict) or prompt.get("mode") not in ("off", "on", "none"):
        return None
    return ReasoningChoice(mode=prompt["mode"], system=prompt.get("system"), family=prompt.get("family"))


def resolve_reasoning(*, model: str, requested: str = "auto") -> ReasoningChoice:
    """Which mode runs for ``model``: a trained model's recorded choice, else the switch rule.

    Raises:
        UserError: an unknown mode, or ``on``/``off`` for a model without a switch, or a
            request that contradicts what the model was trained with.
    """
    if requested not in REASONING_MODES:
        raise UserError(f"reasoning must be one of {', '.join(REASONING_MODES)}, got {requested!r}")
    recorded = recorded_choice(model)
    if recorded is not None:
        if requested not in ("auto", recorded.mode):
            raise UserError(f"{model}: trained with reasoning {recorded.mode!r}, asked for {requested!r}",
                            hint="use the mode the model was trained with (reasoning: auto)")
        return recorded
    switch = switch_for(model)
    if requested == "none" or (requested == "auto" and switch is None):
        return PAPER_PROMPT
    if switch is None:
        raise UserError(f"{model}: no known reasoning switch for reasoning {requested!r}",
                        hint="use reasoning: auto or none")
    mode = "off" if requested == "auto" else requested
    return ReasoningChoice(mode=mode, system=switch.on if mode == "on" else switch.off, family=switch.family)


def check_budget(choice: ReasoningChoice, *, max_new_tokens: int) -> None:
    """Refuse reasoning ``on`` with too few new tokens for a trace and a verdict.

    Example:
        >>> check_budget(ReasoningChoice("on", "detailed thinking on", "x"), max_new_tokens=160)
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: reasoning 'on' writes a trace before the verdict: max_new_tokens 160 ...
    """
    if choice.mode == "on" and max_new_tokens < MIN_TOKENS_REASONING_ON:
        raise UserError(f"reasoning 'on' writes a trace before the verdict: max_new_tokens {max_new_tokens} "
                        f"leaves no room for the label", hint=f"raise generator.max_new_tokens to at least "
                        f"{MIN_TOKENS_REASONING_ON} or use reasoning: off")


__all__ = ["PAPER_PROMPT", "REASONING_MODES", "ReasoningChoice", "check_budget", "recorded_choice", "resolve_reasoning"]
