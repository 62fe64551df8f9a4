"""The judge-failure policy of every LLM-judged score: what a failed request means, how it
is retried, how much of a submission a judge is shown, and the snapshot a score depends on.

A judged profile (``fever8`` today; any profile that sends a submission's text to an
OpenAI-compatible judge) calls these pieces so that **nothing a submission does can raise
its own score**:

* :func:`classify_http_error` sorts a judge's HTTP refusal. A refusal *caused by the
  request's content* (HTTP 413; a 400/422 that names the context length, the token limit or
  a content filter) is :data:`CONTENT` -- the profile scores it 0, as the organisers'
  scorer does with every exception, and it is not retried (the same content is refused
  again). Timeouts, connection errors, 408/429 and 5xx are :data:`INFRASTRUCTURE`:
  retried by :class:`RetryPolicy`, then the claim is left unscored and its row is
  *incomplete* (never ranked on a partial mean until it is scored again). 401/403/404 and
  other 400s are :data:`CONFIGURATION` (the judge's URL, key or model is wrong): not the
  submission's doing, so they count as infrastructure when a run must go on.
* :class:`InputBound` cuts what the judge sees of a prediction: the first ``max_items``
  question-answer pairs (the organisers' scorer reads the first 10 predicted pairs for
  its METEOR side) and each question and answer to ``max_chars`` characters; its
  :meth:`~InputBound.field` goes into the signature (``input:10x2000c``). Padding a claim
  past the judge's context is then bounded, and a refusal that still happens scores 0.
* :class:`JudgeSnapshot` records everything a score depends on: back-end, model,
  endpoint, prompt hashes, request settings, the input bound, and every reply (and
  content refusal) by request key. Its :meth:`~JudgeSnapshot.digest` names it in the
  signature (``judge_snapshot:sha256.…``); a later run given the snapshot re-uses its
  replies instead of asking the judge again (a leaderboard's ``rescore``).

Example:
    >>> classify_http_error(400, "This model's maximum context length is 8192 tokens"), classify_http_error(503, "")
    ('content', 'infrastructure')
    >>> InputBound(max_items=2, max_chars=3).pairs([("abcdef", "x"), ("q", "a"), ("dropped", "")])
    ((('abc', 'x'), ('q', 'a')), 2)
    >>> RetryPolicy(retries=3, backoff=0.5).wait(2, retry_after=None)
    2.0
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

#: A refusal caused by the request's content: scores 0, not retried.
CONTENT = "content"
#: The judge's side (timeouts, connection errors, 408/429, 5xx): retried, then unscored (row incomplete).
INFRASTRUCTURE = "infrastructure"
#: The organisers' set-up (401/403/404, another 400): not the submission's doing.
CONFIGURATION = "configuration"
#: Per-claim reasons a judged value is what it is (the first two score 0, the last is unscored).
REFUSED_REASON = "judge_refused_content"
UNPARSEABLE_REASON = "judge_reply_unparseable"
UNAVAILABLE_REASON = "judge_request_failed"

_CONTENT_WORDS = re.compile(
    r"context|too long|too large|too many tokens|maximum.{0,40}tokens|token limit|exceed|input validation|"
    r"prompt is too|content[ _-]?(?:filter|policy|management)|safety", re.IGNORECASE)
#: Most bytes of an error body read to classify it (a judge's error is a line or two).
MAX_ERROR_BYTES = 4096


class RetryableJudgeError(Exception):
    """A transient judge failure (:data:`INFRASTRUCTURE`); ``retry_after`` is the server's hint in seconds, if any."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class JudgeContentRefused(Exception):
    """The judge refused the request for its content (:data:`CONTENT`): scored 0, not retried."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def classify_http_error(status: int, body: str) -> str:
    """:data:`CONTENT`, :data:`INFRASTRUCTURE` or :data:`CONFIGURATION` for a judge's HTTP error.

    Example:
        >>> classify_http_error(413, ""), classify_http_error(422, "Input validation error: inputs tokens + max_new_tokens")
        ('content', 'content')
        >>> classify_http_error(400, "unknown field 'seed'"), classify_http_error(401, "bad key"), classify_http_error(429, "")
        ('configuration', 'configuration', 'infrastructure')
    """
    if status == 413:
        return CONTENT
    if status in (400, 422):
        return CONTENT if _CONTENT_WORDS.search(body or "") else CONFIGURATION
    if status in (408, 409, 425, 429) or status >= 500:
        return INFRASTRUCTURE
    return CONFIGURATION


@dataclass(frozen=True)
class RetryPolicy:
    """How an infrastructure failure is retried: ``retries`` more attempts, waiting
    ``backoff * 2**k`` seconds (or the server's ``Retry-After``), never more than ``max_wait``."""

    retries: int = 5
    backoff: float = 1.0
    max_wait: float = 60.0

    def wait(self, attempt: int, *, retry_after: float | None) -> float:
        """Seconds to wait before attempt ``attempt + 1`` (``attempt`` counts from 0)."""
        return min(self.max_wait, retry_after if retry_after is not None else self.backoff * 2**attempt)


@dataclass(frozen=True)
class InputBound:
    """What a judge is shown of a prediction: the first ``max_items`` items, each text cut to
    ``max_chars`` characters (``None``: no bound)."""

    max_items: int | None = None
    max_chars: int | None = None

    def clip(self, text: str) -> str:
        return text if self.max_chars is None else text[: self.max_chars]

    def pairs(self, pairs: Sequence[tuple[str, str]]) -> tuple[tuple[tuple[str, str], ...], int]:
        """The bounded pairs and how many pairs were cut or dropped."""
        kept = list(pairs) if self.max_items is None else list(pairs)[: self.max_items]
        out = tuple((self.clip(q), self.clip(a)) for q, a in kept)
        changed = len(pairs) - len(kept) + sum(1 for a, b in zip(kept, out, strict=True) if a != b)
        return out, changed

    @property
    def active(self) -> bool:
        return self.max_items is not None or self.max_chars is not None

    def field(self) -> str:
        """The signature's ``input`` field: ``10x2000c`` (items x characters), ``all`` where unbounded.

        Example:
            >>> InputBound(10, 2000).field(), InputBound().field(), InputBound(None, 500).field()
            ('10x2000c', 'none', 'allx500c')
        """
        if not self.active:
            return "none"
        return f"{'all' if self.max_items is None else self.max_items}x{'all' if self.max_chars is None else self.max_chars}c"


#: What a leaderboard shows a judge unless its phase says otherwise: the organisers' 10
#: predicted pairs, each question and answer cut at 2,000 characters (the longest gold answer
#: in AVeriTeC train and dev is 2,000 characters, the longest gold question 396).
BOARD_INPUT_BOUND = InputBound(max_items=10, max_chars=2000)


def public_endpoint(url: str) -> str:
    """A judge URL without credentials or query (what a snapshot records).

    Example:
        >>> public_endpoint("https://user:key@judge.example/v1/chat/completions?api_key=x")
        'https://judge.example/v1/chat/completions'
    """
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


@dataclass
class JudgeSnapshot:
    """Everything a judged score depends on (see the module docstring).

    Example:
        >>> snap = JudgeSnapshot(backend="openai", model="m", endpoint="http://127.0.0.1:8000/v1",
        ...                      prompts={"qa": "ab" * 32}, settings={"temperature": 0, "max_tokens": 3000})
        >>> snap.replies["k1"] = "{...}"
        >>> again = JudgeSnapshot.from_json(json.loads(json.dumps(snap.to_json())), where="s.json")
        >>> again.digest() == snap.digest(), snap.field().startswith("sha256.")
        (True, True)
    """

    backend: str
    model: str
    endpoint: str
    prompts: dict[str, str]
    settings: dict[str, Any]
    replies: dict[str, str] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"format": 1, "backend": self.backend, "model": self.model, "endpoint": self.endpoint,
                "prompts": dict(self.prompts), "settings": dict(self.settings),
                "replies": dict(sorted(self.replies.items())), "refused": dict(sorted(self.refused.items()))}

    @classmethod
    def from_json(cls, obj: Any, *, where: str) -> JudgeSnapshot:
        """A snapshot from :meth:`to_json`'s mapping (``ValueError`` naming ``where`` otherwise)."""
        keys = ("backend", "model", "endpoint", "prompts", "settings", "replies", "refused")
        if not isinstance(obj, Mapping) or obj.get("format") != 1 or any(k not in obj for k in keys):
            raise ValueError(f"{where}: not a judge snapshot (format 1 with {', '.join(keys)})")
        texts = [*obj["replies"].values(), *obj["refused"].values()]
        if not all(isinstance(v, str) for v in texts):
            raise ValueError(f"{where}: a judge snapshot holds text replies only")
        return cls(str(obj["backend"]), str(obj["model"]), str(obj["endpoint"]), dict(obj["prompts"]),
                   dict(obj["settings"]), dict(obj["replies"]), dict(obj["refused"]))

    def digest(self) -> str:
        """SHA-256 of the canonical JSON of the whole snapshot."""
        from averitec_tools.hashing import sha256_hex

        return sha256_hex(json.dumps(self.to_json(), sort_keys=True, ensure_ascii=False, separators=(",", ":")))

    def field(self) -> str:
        """The signature's ``judge_snapshot`` value: ``sha256.`` and the digest's first 12 hex digits."""
        return f"sha256.{self.digest()[:12]}"

    def reusable(self, *, model: str, prompts: Mapping[str, str], settings: Mapping[str, Any]) -> bool:
        """Whether a run with these settings may re-use the stored replies (same model, prompts and settings)."""
        return self.model == model and dict(self.prompts) == dict(prompts) and dict(self.settings) == dict(settings)


__all__ = [
    "BOARD_INPUT_BOUND",
    "CONFIGURATION",
    "CONTENT",
    "INFRASTRUCTURE",
    "MAX_ERROR_BYTES",
    "REFUSED_REASON",
    "UNAVAILABLE_REASON",
    "UNPARSEABLE_REASON",
    "InputBound",
    "JudgeContentRefused",
    "JudgeSnapshot",
    "RetryPolicy",
    "RetryableJudgeError",
    "classify_http_error",
    "public_endpoint",
]
