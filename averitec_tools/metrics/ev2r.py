"""Ev2R (FEVER-8's evidence score): an LLM judge counts atomic facts and their support.

For one claim the judge sees the reference and the predicted evidence, splits each into
atomic facts and counts how many facts on each side the other side supports; then

* precision = supported predicted facts / predicted facts,
* recall = supported reference facts / reference facts,

once for the question-answer pairs (``qa``) and once for the questions only
(``questions``). As in the organisers' scorer, the first ``{...}`` block of the reply is
parsed as JSON; a reply without one, invalid JSON, a missing key or a zero fact count
scores 0 and is counted as unparseable. The new AVeriTeC score counts a claim whose label
is right and whose Q+A recall reaches the threshold (see
:mod:`averitec_tools.leaderboard.profiles.fever8`).

The prompt is a versioned text file (``averitec_tools/data/ev2r_prompt_v1.txt``); its
SHA-256 goes into the signature and into every cache key.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.resources import files

from averitec_tools.errors import UserError
from averitec_tools.metrics.base import MetricInfo, register_metric

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
        return cls(name, hashlib.sha256(text.encode("utf-8")).hexdigest(), templates)

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> JudgePrompt:
        """The packaged prompt, or the prompt file at ``path`` (``--judge-prompt``)."""
        if path is None:
            return cls.from_text((files("averitec_tools") / "data" / DEFAULT_PROMPT).read_text(encoding="utf-8"), name=DEFAULT_PROMPT)
        p = os.fspath(path)
        try:
            with open(p, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise UserError(f"{p}: cannot read the judge prompt ({exc.strerror})") from None
        except UnicodeDecodeError:
            raise UserError(f"{p}: judge prompt is not valid UTF-8") from None
        return cls.from_text(text, name=os.path.basename(p))

    def render(self, kind: str, *, claim: str, reference: str, prediction: str) -> str:
        """The prompt for one judgement (placeholders replaced literally, braces kept)."""
        return (
            self.templates[kind].replace("{claim}", claim).replace("{reference}", reference).replace("{prediction}", prediction)
        )


@dataclass(frozen=True)
class Judgement:
    """Precision and recall from one judge reply (both 0 when ``parsed`` is False)."""

    precision: float
    recall: float
    parsed: bool


UNPARSEABLE = Judgement(0.0, 0.0, False)


def parse_judgement(text: str, kind: str) -> Judgement:
    """Precision and recall from a judge reply (the first ``{...}`` block, parsed as JSON).

    Example:
        >>> parse_judgement('Sure. {"facts count predicted evidence": 4, "support predicted evidence": 3, '
        ...                 '"facts count reference evidence": 2, "support reference evidence": 1}', "qa")
        Judgement(precision=0.75, recall=0.5, parsed=True)
        >>> parse_judgement('{"facts count predicted evidence": 4,', "qa").parsed
        False
    """
    match = _FIRST_OBJECT.search(text or "")
    if match is None:
        return UNPARSEABLE
    try:
        obj = json.loads("{" + match.group(1) + "}")
        n_pred, sup_pred, n_ref, sup_ref = (obj[k] for k in REPLY_KEYS[kind])
        values = [float(v) for v in (n_pred, sup_pred, n_ref, sup_ref) if not isinstance(v, bool)]
        if len(values) != 4:
            return UNPARSEABLE
        return Judgement(values[1] / values[0], values[3] / values[2], True)
    except (ValueError, TypeError, KeyError, ZeroDivisionError, AttributeError):
        return UNPARSEABLE


def questions_text(pairs: Sequence[tuple[str, str]]) -> str:
    """The questions of the pairs joined by spaces (what the organisers send for ``questions``).

    Example:
        >>> questions_text([("Who?", "Bob."), ("", "x"), ("When?", "2020.")])
        'Who? When?'
    """
    return " ".join(q for q, _ in pairs if q)


@dataclass(frozen=True)
class Ev2RRecall:
    """Ev2R Q+A recall (mean over claims), the evidence half of the new AVeriTeC score."""

    info: MetricInfo

    def __call__(self, *, judgements: Sequence[Judgement]) -> float:
        return sum(j.recall for j in judgements) / len(judgements) if judgements else 0.0


EV2R_RECALL = register_metric(
    Ev2RRecall(
        info=MetricInfo(
            name="ev2r-recall",
            higher_is_better=True,
            description="LLM-judged share of reference atomic facts supported by the predicted evidence",
            params={"judge": "any chat model (default Llama-3.3-70B-Instruct)", "temperature": 0},
            citation="Akhtar et al. (2024), Ev2R; FEVER-8 shared task (2025)",
        )
    )
)

__all__ = [
    "EV2R_RECALL",
    "KINDS",
    "REPLY_KEYS",
    "UNPARSEABLE",
    "Judgement",
    "JudgePrompt",
    "parse_judgement",
    "questions_text",
]
