"""Bounds on one submission's size, checked before any scoring work.

Scoring cost grows with the number and length of the evidence strings, so a competition
bounds them (competition YAML, ``validation:``): tokens per string, evidence items per
claim and tokens in the whole submission; and AVerImaTeC evidence images (an evidence
item's ``images``, base64) in count per claim, bytes and pixels -- the pixels read from each
image's header, so a decompression bomb is refused without being expanded. :func:`check_submission` reads the uploaded
bytes once (a JSON array or JSON lines, whatever the format), walks every item and
refuses the first one past a bound with a message naming the file, the line (JSON
lines) or item index (JSON array), and the claim id.

Tokens are counted as runs of word characters and single other non-space characters
(``\\w+|[^\\w\\s]``): linear, independent of NLTK, and within a factor of two of the
scorer's NLTK tokens either way (NLTK splits "cannot" in two; this splits "U.S." in
four), which is all a bound on work needs.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from averitec_tools import jsonbounds
from averitec_tools.errors import UserError

_TOKEN = re.compile(r"\w+|[^\w\s]")
#: Keys whose list entries are evidence items in some format (2024 ``evidence``, 2023
#: ``questions``, ``string_evidence``, EvalAI ``evidence``, FEVER ``predicted_evidence``).
EVIDENCE_KEYS = ("evidence", "questions", "string_evidence", "predicted_evidence")
#: Nesting deeper than this is refused (every format needs at most 5 levels).
MAX_DEPTH = 16


def count_tokens(text: str) -> int:
    """Tokens of ``text`` as :mod:`this module <averitec_tools.leaderboard.limits>` counts
    them (one C-level pass: ``re.subn``).

    Example:
        >>> count_tokens("The U.S. isn't big."), count_tokens("a " * 10)
        (10, 10)
    """
    return _TOKEN.subn("", text)[1]


@dataclass(frozen=True)
class SubmissionLimits:
    """Bounds checked by :func:`check_submission` (``None``: no bound).

    The defaults are far above every real system measured (docs/leaderboard.md,
    "Submission limits": the 2024 baseline and every shipped prediction file).
    """

    max_tokens_per_string: int | None = 5_000
    max_evidence_per_claim: int | None = 200
    max_tokens_total: int | None = 5_000_000
    #: AVerImaTeC evidence images (base64 in an item's ``images``): count per claim, bytes and
    #: pixels of one image (read from its header; the scorer decodes and checks it again).
    max_images_per_claim: int | None = 64
    max_image_bytes: int | None = 10 << 20
    max_image_pixels: int | None = 40_000_000


@dataclass(frozen=True)
class SubmissionStats:
    """What :func:`check_submission` counted (for logs and the reliability figures)."""

    items: int
    strings: int
    tokens: int
    max_tokens_per_string: int
    max_evidence_per_claim: int
    images: int = 0


def _items(content: bytes, file_name: str) -> Iterator[tuple[str, Any]]:
    """(where, item) of a JSON array or JSON-lines upload, parsed by the bounded parser
    every reader uses (:mod:`averitec_tools.jsonbounds`: its refusals name the line and
    column); nothing for bytes that are not UTF-8 or a top-level value that is not an
    array (the profile's reader then says what it expected)."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        return
    stripped = text.lstrip()
    first_line = stripped.split("\n", 1)[0].strip()
    if stripped.startswith("[") or not (first_line.startswith("{") and first_line.endswith("}")):
        value = jsonbounds.loads(text, where=file_name)
        if isinstance(value, list):
            for i, item in enumerate(value):
                yield f"{file_name}[{i}]", item
        return
    lines = []
    for lineno, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            lines.append((f"{file_name}:{lineno}", jsonbounds.loads(line, where=file_name, line=lineno)))
    yield from lines


def _claim_label(item: Any) -> str:
    if isinstance(item, dict):
        for key in ("claim_id", "id"):
            value = item.get(key)
            if isinstance(value, (int, str)) and not isinstance(value, bool):
                return f" ({key} {str(value)[:40]})"
    return ""


def _image_size(value: str, *, where: str) -> tuple[int, int]:
    """Width and height of a base64 image from its header (nothing is decoded past it)."""
    import base64
    import binascii
    import io
    import warnings

    from PIL import Image, UnidentifiedImageError

    raw = value.split(",", 1)[1] if value.startswith("data:image/") else value
    try:
        with warnings.catch_warnings():  # a bomb is refused by the competition's bound, not warned about
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(base64.b64decode(raw, validate=True)))
        with img:
            return img.width, img.height
    except (binascii.Error, ValueError, UnidentifiedImageError, OSError, Image.DecompressionBombError) as exc:
        raise UserError(f"{where}: not an image ({type(exc).__name__})") from None


def _images(item: dict[str, Any], *, here: str, limits: SubmissionLimits) -> tuple[dict[str, Any], int]:
    """The item without its evidence images (they are not text), after checking them against
    ``limits``; and how many there were."""
    evidence = item.get("evidence")
    if not isinstance(evidence, list) or not any(isinstance(e, dict) and "images" in e for e in evidence):
        return item, 0
    count, kept = 0, []
    for i, e in enumerate(evidence):
        images = e.get("images") if isinstance(e, dict) else None
        if not isinstance(images, list):
            kept.append(e)
            continue
        kept.append({k: v for k, v in e.items() if k != "images"})
        for k, value in enumerate(images):
            count += 1
            where = f"{here}: evidence[{i}].images[{k}]"
            if not isinstance(value, str):
                raise UserError(f"{where}: an image must be a base64 string")
            if limits.max_image_bytes is not None and len(value) * 3 // 4 > limits.max_image_bytes:
                raise UserError(f"{where}: an image of more than {limits.max_image_bytes} bytes (the competition's limit)")
            if limits.max_image_pixels is not None:
                width, height = _image_size(value, where=where)
                if width * height > limits.max_image_pixels:
                    raise UserError(f"{where}: an image of {width}x{height} pixels; the competition allows at most "
                                    f"{limits.max_image_pixels}")
    if limits.max_images_per_claim is not None and count > limits.max_images_per_claim:
        raise UserError(f"{here}: {count} evidence images, the competition allows at most {limits.max_images_per_claim} per claim")
    return {**item, "evidence": kept}, count


def _evidence_count(item: dict[str, Any], *, here: str, per_claim: int | None) -> int:
    """The item's evidence items in every format (2023 answers too), refused past ``per_claim``."""
    n_evidence = 0
    for key in EVIDENCE_KEYS:
        value = item.get(key)
        if isinstance(value, list):
            n_evidence += len(value)
            if key == "questions":  # 2023 format: answers are evidence too
                n_evidence += sum(len(q["answers"]) for q in value if isinstance(q, dict) and isinstance(q.get("answers"), list))
    if per_claim is not None and n_evidence > per_claim:
        raise UserError(f"{here}: {n_evidence} evidence items, the competition allows at most {per_claim} per claim")
    return n_evidence


class _TokenBudget:
    """The string and total token bounds of one upload, checked string by string in the
    upload's order.

    With ``exact`` every string's tokens are counted (the statistics). Without, a string
    is counted only when its length could pass ``per_string`` (a token is at least one
    character), and the running total is the sum of lengths until that sum could pass
    ``total_limit``: then the strings seen so far are counted once and every later one
    too. The refusals (which string, which message) are those of counting everything,
    for a fraction of the work: the bounds sit far above real submissions.
    """

    def __init__(self, limits: SubmissionLimits, file_name: str, *, exact: bool) -> None:
        self.per_string, self.total_limit, self.file_name = limits.max_tokens_per_string, limits.max_tokens_total, file_name
        self.exact = exact
        self.total = self.longest = 0
        self._uncounted: list[str] = []

    def add(self, value: str, here: str) -> None:
        per_string = self.per_string
        n = count_tokens(value) if self.exact or (per_string is not None and len(value) > per_string) else -1
        if per_string is not None and n > per_string:
            raise UserError(
                f"{here}: a string of more than {per_string} tokens ({value[:30]!r}...); "
                f"the competition allows at most {per_string} tokens per string"
            )
        if n < 0:
            n = len(value)  # an upper bound, until the total could pass its limit
            self._uncounted.append(value)
        self.longest = max(self.longest, n)
        self.total += n
        if self.total_limit is not None and self.total > self.total_limit:
            if self._uncounted:  # the bound was not exact: count what it stood for, from now on every string
                self.total -= sum(map(len, self._uncounted)) - sum(map(count_tokens, self._uncounted))
                self._uncounted, self.exact = [], True
            if self.total > self.total_limit:
                raise UserError(f"{self.file_name}: more than {self.total_limit} tokens in the submission (the competition's limit)")


def _walk(item: Any, here: str, budget: _TokenBudget) -> int:
    """Check every string of ``item`` against ``budget`` and its nesting; how many strings."""
    strings = 0
    stack: list[tuple[Any, int]] = [(item, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise UserError(f"{here}: JSON nested deeper than {MAX_DEPTH} levels")
        if isinstance(value, str):
            strings += 1
            budget.add(value, here)
        elif isinstance(value, dict):
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
    return strings


def check_submission(content: bytes, *, limits: SubmissionLimits, file_name: str, stats: bool = True) -> SubmissionStats:
    """Refuse an upload past ``limits`` before it is scored.

    Args:
        content: The uploaded bytes.
        limits: The competition's bounds.
        file_name: The name the team gave the file (used in messages).
        stats: Whether to count every token for the returned statistics; without, the
            same refusals, and ``tokens``/``max_tokens_per_string`` are upper bounds where
            no bound came close (string lengths: the scoring worker's check).

    Raises:
        UserError: naming ``file_name``, the line or item and the claim id.

    Example:
        >>> import json
        >>> big = json.dumps([{"claim_id": 0, "evidence": [{"question": "q", "answer": "w " * 9}]}]).encode()
        >>> check_submission(big, limits=SubmissionLimits(max_tokens_per_string=10), file_name="p.json").tokens
        10
        >>> check_submission(big, limits=SubmissionLimits(max_tokens_per_string=5), file_name="p.json")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: p.json[0] (claim_id 0): a string of more than 5 tokens ...
    """
    budget = _TokenBudget(limits, file_name, exact=stats)
    items = strings = most_evidence = n_images = 0
    for where, item in _items(content, file_name):
        items += 1
        here = where + _claim_label(item)
        if isinstance(item, dict):
            item, found = _images(item, here=here, limits=limits)  # AVerImaTeC: images are counted, not tokenised
            n_images += found
            most_evidence = max(most_evidence, _evidence_count(item, here=here, per_claim=limits.max_evidence_per_claim))
        strings += _walk(item, here, budget)
    return SubmissionStats(items, strings, budget.total, budget.longest, most_evidence, n_images)


__all__ = ["MAX_DEPTH", "SubmissionLimits", "check_submission"]
