"""Parsing generator outputs into R2VC candidates (§3.3, Appendix B output format).

See :func:`parse_candidate`; an output without a label raises
:class:`MalformedOutputError` (the generator keeps it as an Uncertain candidate).

The canonical format (what the prompt asks for and SFT/DPO targets use, see
:func:`averitec_tools.baselines.r2vc.stages.generation.prompt.format_response`) is
``"{Label}. {rationale} [1, 3]."``. Also accepted, in this order of preference:

* a JSON object ``{"label": ..., "rationale": ..., "citations": [1, 3]}``;
* keyed lines ``Label: … / Rationale: … / Citations: [1, 3]`` (``Verdict``,
  ``Justification``, ``Explanation`` are synonyms);
* a leading label word (canonical format; case-insensitive).

A reasoning trace (``<think>…</think>``) before the answer is skipped.
Labels are read case-insensitively, with FEVER-style synonyms (``SUPPORTS``,
``Refuted``, ``NEI``, ``Not enough info``) mapped to True/False/Uncertain.
Citations are the 1-based passage numbers written as ``[n]``/``[n, m]`` markers
(or listed under ``Citations:``); they are stored 0-based, de-duplicated in order
of first mention. Numbers outside ``1..len(passages)`` cite nothing and are
dropped (the verifier's citation score sees an uncited rationale). Citation
markers are removed from the stored rationale.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from averitec_tools.baselines.r2vc.types import R2VC_LABELS, Candidate, GenerationResult, Passage
from averitec_tools.errors import UserError


class MalformedOutputError(ValueError):
    """A generator output that has no recognisable R2VC label."""


_LABEL_WORDS = (
    r"true|false|uncertain|supports?|supported|refutes?|refuted|nei|"
    r"not[\s_-]+enough[\s_-]+(?:info(?:rmation)?|evidence)"
)
_LEADING_LABEL = re.compile(rf"""^\W*({_LABEL_WORDS})\b[\s.:;,!\-–—)*_"']*(.*)$""", re.I | re.S)
_KEYED_LABEL = re.compile(rf"^\W*(?:label|verdict|answer)\W*[:=]\W*({_LABEL_WORDS})\b", re.I | re.M)
_KEYED_RATIONALE = re.compile(
    r"^\W*(?:rationale|justification|explanation|reason)\W*[:=]\s*(.*?)"
    r"(?=^\W*(?:citations?|label|verdict)\W*[:=]|\Z)",
    re.I | re.M | re.S,
)
_KEYED_CITATIONS = re.compile(r"^\W*citations?\W*[:=]\s*(.*)$", re.I | re.M)
_CITATION_MARK = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
_INTEGER = re.compile(r"\d+")
_CODE_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$", re.M)
#: A reasoning model's trace (``detailed thinking on``; an empty one with it off).
_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_WS = re.compile(r"\s+")


def _normalise_label(word: str) -> str | None:
    from averitec_tools.labels import map_label

    try:
        return map_label(_WS.sub(" ", word.strip()), source="ternary", target="r2vc")
    except UserError:
        return None


def _citation_numbers(text: str) -> list[int]:
    numbers: list[int] = []
    for mark in _CITATION_MARK.finditer(text):
        numbers.extend(int(n) for n in _INTEGER.findall(mark.group(1)))
    return numbers


def _clean_rationale(text: str) -> str:
    text = _CITATION_MARK.sub("", text)
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    return _WS.sub(" ", text).strip()


def _from_json(text: str) -> tuple[str, str, list[int]] | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    lowered = {str(k).lower(): v for k, v in obj.items()}
    raw_label = next(
        (lowered[k] for k in ("label", "verdict", "answer") if isinstance(lowered.get(k), str)), None
    )
    label = _normalise_label(raw_label) if raw_label is not None else None
    if label is None:
        return None
    rationale = next(
        (
            str(lowered[k])
            for k in ("rationale", "justification", "explanation", "reason")
            if k in lowered
        ),
        "",
    )
    raw_cites = lowered.get("citations", lowered.get("citation", []))
    if isinstance(raw_cites, (int, str)):
        raw_cites = [raw_cites]
    numbers: list[int] = []
    if isinstance(raw_cites, list):
        for item in raw_cites:
            if isinstance(item, bool):
                continue
            if isinstance(item, int):
                numbers.append(item)
            elif isinstance(item, str):
                numbers.extend(int(n) for n in _INTEGER.findall(item))
    numbers.extend(_citation_numbers(rationale))
    return label, rationale, numbers


def _keyed_reading(text: str, match: re.Match[str]) -> tuple[str, list[int]]:
    """Rationale and citation numbers of keyed lines (``Label: … / Rationale: … / Citations: …``)."""
    rationale_match = _KEYED_RATIONALE.search(text)
    if rationale_match:
        rationale = rationale_match.group(1)
    else:  # "Answer: True. Because …": the rationale follows the label
        rest = text[match.end() :]
        cites_line = _KEYED_CITATIONS.search(rest)
        rationale = (rest[: cites_line.start()] if cites_line else rest).lstrip(" .:;,-–—*_\"'")
    numbers = _citation_numbers(rationale)
    cites_match = _KEYED_CITATIONS.search(text)
    if cites_match:
        numbers.extend(int(n) for n in _INTEGER.findall(cites_match.group(1)))
    return rationale, numbers


def _leading_reading(text: str, match: re.Match[str]) -> tuple[str, list[int]]:
    """Rationale and citation numbers after a leading label word (the canonical format)."""
    rest = match.group(2)
    return rest, _citation_numbers(rest)


#: The label-word forms, in order of preference: how to find the label, how to read the rest.
_LABEL_FORMS: tuple[tuple[Callable[[str], re.Match[str] | None],
                          Callable[[str, re.Match[str]], tuple[str, list[int]]]], ...] = (
    (_KEYED_LABEL.search, _keyed_reading),
    (_LEADING_LABEL.match, _leading_reading),
)


def _from_label_word(text: str) -> tuple[str, str, list[int]] | None:
    for find, read in _LABEL_FORMS:
        match = find(text)
        label = None if match is None else _normalise_label(match.group(1))
        if match is not None and label is not None:
            return (label, *read(text, match))
    return None


def parse_candidate(
    text: str,
    *,
    passages: Sequence[Passage],
    mean_logprob: float | None = None,
    config_index: int = 0,
) -> Candidate:
    """Parse one generator output into a :class:`Candidate`.

    The output formats, labels and citations it reads are the module docs'.

    Args:
        text: The raw decoded output (the assistant turn only).
        passages: The evidence subset S_i the prompt numbered.
        mean_logprob: Mean token log-probability of ``text``, if known.
        config_index: Index of the decoding configuration in the bank.

    Returns:
        The parsed candidate, with ``raw_text=text``.

    Raises:
        MalformedOutputError: if no True/False/Uncertain label can be found.

    Example:
        >>> p = [Passage(doc_id=str(i), title="T", url="", text="x") for i in range(3)]
        >>> c = parse_candidate("False. Because it opened in 1932 [2, 9].", passages=p)
        >>> (c.label, c.rationale, c.citations)
        ('False', 'Because it opened in 1932.', (1,))
        >>> parse_candidate('{"label": "SUPPORTS", "rationale": "r", "citations": [1]}',
        ...                 passages=p).citations
        (0,)
        >>> parse_candidate("<think>\\nThe dates differ.\\n</think>\\nFalse. Because [1].", passages=p).label
        'False'
    """
    stripped = _CODE_FENCE.sub("", _THINK.sub("", text)).strip()
    parsed = None
    if stripped:
        parsed = _from_json(stripped) or _from_label_word(stripped)
    if parsed is None:
        preview = _WS.sub(" ", text.strip())[:80]
        raise MalformedOutputError(f"no True/False/Uncertain label in generator output {preview!r}")
    label, rationale, numbers = parsed
    assert label in R2VC_LABELS
    citations: list[int] = []
    for number in numbers:
        index = number - 1
        if 0 <= index < len(passages) and index not in citations:
            citations.append(index)
    return Candidate(
        label=label,
        rationale=_clean_rationale(rationale),
        citations=tuple(citations),
        passages=tuple(passages),
        mean_logprob=mean_logprob,
        config_index=config_index,
        raw_text=text,
    )


def malformed_flags(result: GenerationResult) -> list[bool]:
    """Which candidates of ``result`` came from an unparseable output (re-parsed only when some did)."""
    if not result.n_malformed:
        return [False] * len(result.candidates)
    flags = []
    for c in result.candidates:
        try:
            parse_candidate(c.raw_text, passages=c.passages, mean_logprob=c.mean_logprob,
                            config_index=c.config_index)
            flags.append(False)
        except MalformedOutputError:
            flags.append(True)
    return flags


__all__ = ["MalformedOutputError", "malformed_flags", "parse_candidate"]
