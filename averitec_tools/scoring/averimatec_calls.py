"""The AVerImaTeC judge requests: one per call the organisers' evaluator makes that can
change a score, with content-addressed cache keys.

Per claim (``docs/averimatec.md``, "Calls per claim"): one ``qa`` call per gold QA pair
(the gold evidence statements; cached per gold file and judge), one ``questions``, one
``justification`` and one ``evidence`` call, then one ``image`` call per counted
``[REF in PRED]`` tuple whose two items both have images. A call whose result is fixed
whatever the judge says is not made: ``questions`` without predicted or gold questions
(score 0), ``evidence`` without predicted or gold evidence (no score). The organisers also
rate the ``[PRED in REF]`` tuples and repeated gold indices; those ratings change no
reported figure, so they are not requested.

Every request is one user message of content parts in the organisers' order (text calls:
one text part). The cache key is the SHA-256 of (model, kind, the content -- image parts
by the SHA-256 of their bytes --, reply-length limit, sampling); with a sampling preset
other than ``greedy`` the claim and call are part of it too, so draws stay independent.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools.metrics.averimatec_prompts import (
    MAX_NEW_TOKENS,
    AVerImaTeCPrompts,
    numbered,
    predicted_questions,
)
from averitec_tools.metrics.ev2r_runner import JudgeRequest
from averitec_tools.registry import Registry
from averitec_tools.scoring.averimatec_images import ImageInfo
from averitec_tools.scoring.averimatec_inputs import PairedClaim

#: Soft tokens one image costs Gemma 3 (its vision encoder's fixed output); used by ``--dry-run``.
IMAGE_TOKENS = 256


@dataclass(frozen=True)
class Sampling:
    """A judge sampling preset: what is sent besides the prompt (``top_p``/``top_k``: ``None``, not sent)."""

    name: str
    temperature: float
    top_p: float | None = None
    top_k: int | None = None
    source: str = ""


#: ``--judge-sampling``: ``greedy`` (temperature 0, the default) or the organisers' generation settings.
SAMPLING: Registry[Sampling] = Registry("judge sampling preset")
SAMPLING.add("greedy", Sampling("greedy", 0.0, source="deterministic decoding (a departure: the organisers sample)"))
SAMPLING.add("organisers", Sampling(
    "organisers", 1.0, 0.95, 64,
    source="eval_offline.py calls generate() with max_new_tokens only, so Gemma 3's generation_config applies: "
    "do_sample with top_k 64, top_p 0.95 (temperature 1)"))


@dataclass(frozen=True)
class CallSettings:
    """What every request of a run shares: judge model, prompts, sampling."""

    model: str
    prompts: AVerImaTeCPrompts
    sampling: Sampling

    def request(self, kind: str, parts: Sequence[dict[str, Any]], digest_parts: Sequence[Any], where: str,
                ) -> JudgeRequest:
        """A request of ``kind`` with content ``parts`` (``digest_parts`` stand for them in the key)."""
        identity: list[Any] = [self.model, kind, list(digest_parts), MAX_NEW_TOKENS[kind], self.sampling.name]
        if self.sampling.temperature > 0:
            identity.append(where)
        key = hashlib.sha256(json.dumps(identity, ensure_ascii=False).encode("utf-8")).hexdigest()
        return JudgeRequest(key, tuple(parts), where, None, MAX_NEW_TOKENS[kind])

    def text(self, kind: str, text: str, where: str) -> JudgeRequest:
        """A text-only call: one text part, as the organisers' Gemma messages carry it."""
        return self.request(kind, ({"type": "text", "text": text},), [text], where)


def qa_request(settings: CallSettings, question: str, answer: str, where: str) -> JudgeRequest:
    return settings.text("qa", settings.prompts.qa_call(question, answer), where)


def questions_request(settings: CallSettings, claim: PairedClaim) -> JudgeRequest | None:
    """The questions call (``None`` when the score is 0 whatever the judge says)."""
    pred, gold = claim.pred.questions, [q.question for q in claim.gold.questions]
    if not pred or not gold:
        return None
    text = settings.prompts.text_call("questions", prediction=predicted_questions(pred), reference=numbered(gold, " "))
    return settings.text("questions", text, f"claim {claim.id} (questions)")


def justification_request(settings: CallSettings, claim: PairedClaim) -> JudgeRequest:
    text = settings.prompts.text_call("justification", prediction=claim.pred.justification,
                                      reference=claim.gold_justification)
    return settings.text("justification", text, f"claim {claim.id} (justification)")


def evidence_request(settings: CallSettings, claim: PairedClaim, gold_texts: Sequence[str]) -> JudgeRequest | None:
    """The evidence call (``None`` when either side has no item: no score, nothing to ask)."""
    if not claim.pred.evidence or not gold_texts:
        return None
    text = settings.prompts.text_call("evidence", prediction=numbered([e.text for e in claim.pred.evidence], ". "),
                                      reference=numbered(gold_texts, ". "))
    return settings.text("evidence", text, f"claim {claim.id} (evidence)")


def image_request(settings: CallSettings, pred: Sequence[ImageInfo], gold: Sequence[ImageInfo], where: str,
                  ) -> JudgeRequest:
    """The image rating: instruction, predicted images, ``[IMG_SET_2]:``, gold images, request."""
    p = settings.prompts

    def images(infos: Sequence[ImageInfo]) -> list[dict[str, Any]]:
        return [{"type": "image_url", "image_url": {"url": info.data_url}} for info in infos]

    parts = [{"type": "text", "text": p.image_intro}, *images(pred), {"type": "text", "text": p.image_between},
             *images(gold), {"type": "text", "text": p.image_instruction}]
    digest = [p.image_intro, *(i.sha256 for i in pred), p.image_between, *(i.sha256 for i in gold),
              p.image_instruction]
    return settings.request("image", parts, digest, where)


def estimate(request: JudgeRequest) -> int:
    """Prompt tokens of a request for ``--dry-run``: characters / 4 of its text, rounded up,
    plus :data:`IMAGE_TOKENS` per image.

    Example:
        >>> estimate(JudgeRequest("k", ({"type": "text", "text": "abcde"}, {"type": "image_url"}), "w"))
        258
    """
    chars = sum(len(str(part.get("text", ""))) for part in request.prompt if isinstance(part, dict))
    images = sum(1 for part in request.prompt if isinstance(part, dict) and part.get("type") == "image_url")
    return -(-chars // 4) + IMAGE_TOKENS * images


__all__ = [
    "IMAGE_TOKENS",
    "SAMPLING",
    "CallSettings",
    "Sampling",
    "estimate",
    "evidence_request",
    "image_request",
    "justification_request",
    "qa_request",
    "questions_request",
]
