"""The fever8 profile's judge run under the shared judge-failure policy
(:mod:`averitec_tools.metrics.judge_policy`): the input bound, the snapshot, and what each
request's outcome means for its claim.

* **Input bound** (``judge_max_items``, ``judge_item_chars``): the judge sees the first
  ``judge_max_items`` predicted pairs, each question and answer cut to ``judge_item_chars``
  characters (the references are the gold file's, never cut). ``averitec score`` sends
  everything by default, as the organisers' scorer does; a leaderboard phase bounds it
  (:data:`~averitec_tools.metrics.judge_policy.BOARD_INPUT_BOUND` unless the phase says
  otherwise). The signature's ``input`` field says which.
* **Outcomes**: a reply is parsed (unparseable: 0, as the organisers); a refusal for the
  request's content is 0 in every mode (:data:`REFUSED`); a failure on the judge's side
  after its retries is 0 (``zero``), stops the run (``raise``) or leaves the claim
  unscored (``unscored``: the result is *incomplete*).
* **Snapshot** (``judge_snapshot``: a JSON file): replies stored there by an earlier run
  with the same model, prompt and settings are re-used; afterwards the file holds every
  reply the score depends on. Its digest is the signature's ``judge_snapshot`` field.

The ``averimatec`` profile shares :func:`input_bound`, :func:`open_snapshot` (with its own
request settings) and :func:`save_snapshot` (:mod:`averitec_tools.scoring.averimatec_run`).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from averitec_tools.errors import UserError
from averitec_tools.metrics.ev2r import Judgement, JudgePrompt, parse_judgement
from averitec_tools.metrics.judge_policy import InputBound, JudgeSnapshot, public_endpoint

#: A request that failed on the judge's side (scored 0 under ``zero``, unscored under ``unscored``).
FAILED = Judgement(0.0, 0.0, False)
#: A request the judge refused for its content: 0 in every mode, as the organisers' scorer.
REFUSED = Judgement(0.0, 0.0, False)


def input_bound(opts: Mapping[str, Any]) -> InputBound:
    """The bound of the run's options (``UserError`` for a bound below 1).

    Example:
        >>> input_bound({"judge_max_items": 10, "judge_item_chars": None}).field()
        '10xallc'
    """
    items, chars = opts.get("judge_max_items"), opts.get("judge_item_chars")
    for name, value in (("--judge-max-items", items), ("--judge-item-chars", chars)):
        if value is not None and int(value) < 1:
            raise UserError(f"{name} must be at least 1, got {value}")
    return InputBound(None if items is None else int(items), None if chars is None else int(chars))


def snapshot_settings(opts: Mapping[str, Any], bound: InputBound) -> dict[str, Any]:
    """The request settings a snapshot's replies depend on (besides model and prompt)."""
    return {"temperature": 0, "max_tokens": int(opts["judge_max_tokens"]), "input": bound.field()}


class NamedPrompt(Protocol):
    """What a snapshot records of a judged profile's prompt (``JudgePrompt``, ``AVerImaTeCPrompts``)."""

    @property
    def name(self) -> str: ...

    @property
    def sha256(self) -> str: ...


def open_snapshot(opts: Mapping[str, Any], prompt: NamedPrompt, *, backend: str, bound: InputBound,
                  settings: Mapping[str, Any] | None = None) -> JudgeSnapshot:
    """A fresh snapshot of this run's judge, with the replies of ``opts["judge_snapshot"]``
    when that file was written by a run with the same model, prompt and settings
    (``settings``: the request settings the replies depend on; default fever8's,
    :func:`snapshot_settings`)."""
    url = opts.get("judge_url")
    fresh = JudgeSnapshot(backend=backend, model=str(opts["judge_model"]),
                          endpoint=public_endpoint(url) if url else f"local:{opts['judge_model']}",
                          prompts={prompt.name: prompt.sha256},
                          settings=dict(snapshot_settings(opts, bound) if settings is None else settings))
    path = opts.get("judge_snapshot")
    if not path or not os.path.exists(path):
        return fresh
    from averitec_tools.jsonio import load_json

    try:
        stored = JudgeSnapshot.from_json(load_json(path), where=str(path))
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if stored.reusable(model=fresh.model, prompts=fresh.prompts, settings=fresh.settings):
        fresh.replies, fresh.refused = dict(stored.replies), dict(stored.refused)
    return fresh


def save_snapshot(path: str | os.PathLike[str] | None, snapshot: JudgeSnapshot) -> None:
    """Write the snapshot (atomically) where ``judge_snapshot`` names."""
    if not path:
        return
    from averitec_tools.jsonio import atomic_writer

    with atomic_writer(Path(path)) as fh:
        json.dump(snapshot.to_json(), fh, ensure_ascii=False)


def judged(requests: Sequence[tuple[Any, str, Any]], replies: Mapping[str, str], stats: Any) -> dict[tuple[Any, str], Judgement]:
    """Each (claim id, kind)'s judgement: :data:`REFUSED`, :data:`FAILED` or the parsed reply."""
    refused = {r.key for r in stats.refused}
    failed = {r.key for r in stats.failed}
    out = {}
    for c, kind, r in requests:
        out[(c.id, kind)] = REFUSED if r.key in refused else FAILED if r.key in failed else parse_judgement(replies.get(r.key, ""), kind)
    return out


def run_warnings(stats: Any, unparseable: dict[str, int], *, n: int, skipped: int, prompt: JudgePrompt) -> list[str]:
    """The stderr lines of a run: failed requests, unparseable replies, skipped reference
    rows, a prompt that is not the organisers'.

    Example:
        >>> from types import SimpleNamespace
        >>> run_warnings(SimpleNamespace(failed=[], failure_mode="zero"), {"questions_answers": 1, "questions_only": 0}, n=2, skipped=0,
        ...              prompt=SimpleNamespace(name="fever8-official"))
        ['1 of 4 judge replies could not be parsed; they score 0, as in the official code']
    """
    warnings = []
    refused = getattr(stats, "refused", [])
    if refused:
        warnings.append(f"the judge refused {len(refused)} request(s) for their content (e.g. past its context length); "
                        "they score 0, as in the official code")
    if stats.failure_mode == "unscored" and stats.failed:
        warnings.append(f"{len(stats.failed)} judge request(s) failed on the judge's side; their claims are unscored "
                        "(--judge-unscored: excluded from the judge means, counted in judge.unscored; the result is "
                        "incomplete until they are scored again)")
    elif stats.failed:
        shown = ", ".join(r.where for r in stats.failed[:5]) + (" ..." if len(stats.failed) > 5 else "")
        warnings.append(f"{len(stats.failed)} judge request(s) failed and score 0 (--official-failure-mode): {shown}")
    total_bad = sum(unparseable.values())
    if total_bad:
        warnings.append(f"{total_bad} of {2 * n} judge replies could not be parsed; they score 0, as in the official code")
    return warnings + _input_warnings(skipped=skipped, prompt=prompt)


def _input_warnings(*, skipped: int, prompt: JudgePrompt) -> list[str]:
    warnings = []
    if skipped:
        warnings.append(f"{skipped} reference row(s) with split other than 'gold' not scored, "
                        "as on the leaderboard")
    if not prompt.name.startswith("fever8-official"):
        warnings.append(f"judge prompt {prompt.name} is not the organisers'; for figures comparable with the "
                        "leaderboard use --judge-prompt official")
    return warnings


__all__ = ["run_warnings", "FAILED", "REFUSED", "input_bound", "judged", "open_snapshot", "save_snapshot", "snapshot_settings"]
