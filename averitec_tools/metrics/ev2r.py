"""Ev2R (FEVER-8's evidence score): an LLM judge counts atomic facts and their support.

For one claim the judge sees the reference and the predicted evidence, splits each into
atomic facts and counts how many facts on each side the other side supports; then

* precision = supported predicted facts / predicted facts,
* recall = supported reference facts / reference facts,

once for the question-answer pairs (``qa``) and once for the questions only
(``questions``). As in the organisers' scorer, the first ``{...}`` block of the reply is
parsed as JSON and the counts are divided with Python's semantics; anything that makes
their code raise (no block, invalid JSON, a missing key, a non-numeric count, a zero fact
count) scores 0 and is counted as unparseable. The new AVeriTeC score counts a claim whose
label is right and whose Q+A recall clears the threshold of a :data:`THRESHOLD_PRESETS`
entry (default ``leaderboard``: ``> 0.5``; see :mod:`averitec_tools.scoring.profiles.fever8`).

The packaged prompt is a versioned text file (``averitec_tools/data/ev2r_prompt_v1.txt``);
the organisers' own prompt is fetched and verified by
:mod:`averitec_tools.metrics.ev2r_official`. The prompt's SHA-256 goes into the signature
and into every cache key.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files

from averitec_tools.errors import UserError
from averitec_tools.hashing import sha256_hex
from averitec_tools.jsonio import read_text
from averitec_tools.metrics.base import Metric, register_metric
from averitec_tools.registry import Registry

KINDS = ("qa", "questions")
#: The JSON keys of a reply, per kind: (predicted facts, supported predicted, reference facts, supported reference).
REPLY_KEYS: dict[str, tuple[str, str, str, str]] = {
    "qa": (
        "facts count predicted evidence",
        "support predicted evidence",
        "facts count reference evidence",
        "support reference evidence",
    ),
    "questions": (
        "facts count predicted questions",
        "support predicted questions",
        "facts count reference questions",
        "support reference questions",
    ),
}
DEFAULT_PROMPT = "ev2r_prompt_v1.txt"
_FIRST_OBJECT = re.compile(r"\{(.*?)\}", re.DOTALL)
_SECTION = re.compile(r"^\[(qa|questions)\]\s*$", re.MULTILINE)


@dataclass(frozen=True)
class JudgePrompt:
    """The two prompt templates (``qa``, ``questions``) of one prompt file, and its hash.

    Example:
        >>> prompt = JudgePrompt.load()
        >>> prompt.name, len(prompt.sha256)
        ('ev2r_prompt_v1.txt', 64)
        >>> "Claim: Cats fly." in prompt.render("qa", claim="Cats fly.", reference="r", prediction="p")
        True
    """

    name: str
    sha256: str
    templates: dict[str, str]
    #: ``"named"``: ``{claim}``, ``{reference}``, ``{prediction}`` replaced literally (other
    #: braces kept); ``"positional"``: ``str.format(claim, reference, prediction)``, as the
    #: organisers fill their templates (``{}`` placeholders, literal braces doubled).
    style: str = "named"

    @classmethod
    def from_text(cls, text: str, *, name: str) -> JudgePrompt:
        body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
        parts = _SECTION.split(body)
        templates = {parts[i]: parts[i + 1].strip("\n") for i in range(1, len(parts) - 1, 2)}
        missing = [k for k in KINDS if k not in templates]
        if missing:
            raise UserError(f"{name}: judge prompt needs sections {', '.join(f'[{k}]' for k in KINDS)}; missing {', '.join(missing)}")
        for kind, template in templates.items():
            for placeholder in ("{reference}", "{prediction}"):
                if placeholder not in template:
                    raise UserError(f"{name}: section [{kind}] has no {placeholder} placeholder")
        return cls(name, sha256_hex(text), templates)

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> JudgePrompt:
        """The packaged prompt, or the prompt file at ``path`` (``--judge-prompt``)."""
        if path is None:
            return cls.from_text((files("averitec_tools") / "data" / DEFAULT_PROMPT).read_text(encoding="utf-8"), name=DEFAULT_PROMPT)
        p = os.fspath(path)
        text = read_text(p, what="judge prompt", undecodable="judge prompt")
        return cls.from_text(text, name=os.path.basename(p))

    def render(self, kind: str, *, claim: str, reference: str, prediction: str) -> str:
        """The prompt for one judgement (see :attr:`style`).

        Example:
            >>> JudgePrompt("p", "0" * 64, {"qa": "{{x}} {} | {} | {}"}, style="positional").render(
            ...     "qa", claim="C", reference="R", prediction="P")
            '{x} C | R | P'
        """
        template = self.templates[kind]
        if self.style == "positional":
            return template.format(claim, reference, prediction)
        return template.replace("{claim}", claim).replace("{reference}", reference).replace("{prediction}", prediction)


@dataclass(frozen=True)
class Judgement:
    """Precision and recall from one judge reply (both 0 when ``parsed`` is False)."""

    precision: float
    recall: float
    parsed: bool


UNPARSEABLE = Judgement(0.0, 0.0, False)


def _no_constants(name: str) -> float:
    raise ValueError(f"{name} is not a count")


def parse_judgement(text: str, kind: str) -> Judgement:
    """Precision and recall from a judge reply, exactly as the organisers' scorer computes them.

    The first ``{...}`` block (non-greedy, across lines) is parsed as JSON and
    ``support / facts count`` is computed with Python's division on the parsed values, so
    integers, floats and booleans count, while strings, ``null``, a missing key or a zero
    count make the reply unparseable (precision and recall 0), as the organisers' ``except``
    does. One departure, so that no summary holds NaN or infinity: a non-finite count or
    ratio is unparseable too (their code would let it poison the mean).

    Example:
        >>> parse_judgement('Sure. {"facts count predicted evidence": 4, "support predicted evidence": 3, '
        ...                 '"facts count reference evidence": 2, "support reference evidence": 1}', "qa")
        Judgement(precision=0.75, recall=0.5, parsed=True)
        >>> parse_judgement('{"facts count predicted evidence": 4,', "qa").parsed
        False
    """
    match = _FIRST_OBJECT.search(text) if isinstance(text, str) else None
    if match is None:
        return UNPARSEABLE
    try:
        obj = json.loads("{" + match.group(1) + "}", parse_constant=_no_constants)
        n_pred, sup_pred, n_ref, sup_ref = (obj[k] for k in REPLY_KEYS[kind])
        precision, recall = float(sup_pred / n_pred), float(sup_ref / n_ref)
    except (ValueError, TypeError, KeyError, ZeroDivisionError, OverflowError, RecursionError):
        return UNPARSEABLE
    if not (math.isfinite(precision) and math.isfinite(recall)):
        return UNPARSEABLE
    return Judgement(precision, recall, True)


@dataclass(frozen=True)
class ThresholdPreset:
    """A published rule for the new AVeriTeC score: Q+A recall ``comparison`` ``threshold``.

    Example:
        >>> p = THRESHOLD_PRESETS.get("leaderboard")
        >>> p.threshold, p.comparison, p.passes(0.5), p.passes(0.51)
        (0.5, '>', False, True)
    """

    name: str
    threshold: float
    comparison: str
    #: Where the rule is published (repository, file, commits, dates).
    source: str

    def passes(self, recall: float) -> bool:
        return recall > self.threshold if self.comparison == ">" else recall >= self.threshold


def preset_registry(title: str, *presets: ThresholdPreset) -> Registry[ThresholdPreset]:
    """A registry of threshold rules by name (one per profile that has published rules).

    Example:
        >>> preset_registry("demo preset", ThresholdPreset("a", 0.5, ">", "here")).get("a").threshold
        0.5
    """
    registry: Registry[ThresholdPreset] = Registry(title)
    for preset in presets:
        registry.add(preset.name, preset)
    return registry


#: The published threshold rules (``--ev2r-preset``); provenance in ``docs/fever8.md``.
THRESHOLD_PRESETS = preset_registry(
    "Ev2R threshold preset",
    ThresholdPreset("leaderboard", 0.5, ">", "Raldir/FEVER-8-Shared-Task averitec_evaluate.py since 547e9f7 "
                    "(2025-04-26), the Hugging Face leaderboard's scorer: ev2r_reporting_levels = [0.5], recall > level"),
    ThresholdPreset("evalai-2025-04", 0.5, ">=", "zhenyundeng/AVeriTeC_EV2R evaluation_script/main.py "
                    "(EvalAI copy, commits 30ca071..0f63439, 2025-04-21/22): recall >= level"),
    ThresholdPreset("evalai-2025-01-debug", 0.46, ">", "zhenyundeng/AVeriTeC_FEVER8 evaluation_script/main.py "
                    "(EvalAI, 2025-01-11; Gemini judge, scores only the first 2 claims): levels [0.46], recall > level"),
    ThresholdPreset("commented-0.44", 0.44, ">", "the commented-out candidate list [0.44, 0.46, 0.48] beside "
                    "ev2r_reporting_levels in both EvalAI copies; no reachable source shows a board using it"),
)
DEFAULT_PRESET = "leaderboard"
COMPARISONS = (">=", ">")


def threshold_rule(*, preset: str = DEFAULT_PRESET, threshold: float | None = None,
                   comparison: str | None = None, presets: Registry[ThresholdPreset] | None = None,
                   flag: str = "--ev2r") -> ThresholdPreset:
    """The preset, with ``--ev2r-threshold`` / ``--ev2r-comparison`` overrides (named ``custom`` if they change it).

    ``presets`` and ``flag`` serve another profile's rules (``averimatec``: its own presets,
    flags ``--averimatec-threshold`` / ``--averimatec-comparison``).

    Example:
        >>> threshold_rule().comparison, threshold_rule(comparison=">=").name
        ('>', 'custom')
        >>> threshold_rule(preset="evalai-2025-04", comparison=">=").name
        'evalai-2025-04'
    """
    base = (THRESHOLD_PRESETS if presets is None else presets).get(preset)
    thr = base.threshold if threshold is None else float(threshold)
    cmp = base.comparison if comparison is None else comparison
    if cmp not in COMPARISONS:
        raise UserError(f"{flag}-comparison must be one of {', '.join(COMPARISONS)}")
    if not 0.0 <= thr <= 1.0:
        raise UserError(f"{flag}-threshold must be between 0 and 1, got {thr}")
    if (thr, cmp) == (base.threshold, base.comparison):
        return base
    return ThresholdPreset("custom", thr, cmp, f"{base.name} with {flag}-threshold/{flag}-comparison")


@register_metric
class Ev2RRecall(
    Metric, name="ev2r-recall", higher_is_better=True,
    description="LLM-judged share of reference atomic facts supported by the predicted evidence "
    "(judge: any chat model, default Llama-3.3-70B-Instruct, temperature 0)",
    citation="Akhtar et al. (2024), Ev2R; FEVER-8 shared task (2025)",
):
    """Ev2R Q+A recall (mean over claims), the evidence half of the new AVeriTeC score.

    Example:
        >>> Ev2RRecall()(judgements=[Judgement(1.0, 0.5, True), Judgement(0.0, 0.0, False)])
        0.25
    """

    def __call__(self, *, judgements: Sequence[Judgement]) -> float:
        return sum(j.recall for j in judgements) / len(judgements) if judgements else 0.0


EV2R_RECALL = Ev2RRecall()

__all__ = [
    "COMPARISONS", "DEFAULT_PRESET", "KINDS", "THRESHOLD_PRESETS", "UNPARSEABLE", "Judgement", "JudgePrompt",
    "ThresholdPreset", "parse_judgement", "preset_registry", "threshold_rule",
]
