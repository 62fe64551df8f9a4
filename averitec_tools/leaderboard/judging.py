"""The board's side of an LLM-judged phase (issue 39): what it shows the judge, the judge
snapshot kept with every result, and what an incomplete result means.

* Each judged profile (one that declares ``judge_snapshot``) is scored with the phase's
  input bound -- :data:`~averitec_tools.metrics.judge_policy.BOARD_INPUT_BOUND` (10
  predicted pairs, each question and answer cut at 2,000 characters) unless the phase's
  ``options`` set ``judge_max_items`` / ``judge_item_chars`` -- and with a snapshot file
  (:func:`snapshot_file`): the submission's stored snapshot, so that ``rescore`` re-uses
  every stored reply (asking the judge only for what is missing), unless the organisers
  asked for a fresh judge. The snapshot written back is stored in ``results.judge_snapshot``
  and named in the result's signature (``judge_snapshot:sha256.…``).
* A result whose judge could not be reached for some claims (after the retries) is
  *incomplete* (:func:`result_complete`): it is listed on the board apart, unranked, until
  it is scored again (``rescore --incomplete`` or ``--submission ID``). Refusals for the
  content and unparseable replies are 0, never incomplete: nothing a submission causes
  can keep it off a mean.

Example:
    >>> result_complete({"judge": {"complete": False}}), result_complete({"label_accuracy": 1.0})
    (False, True)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from averitec_tools.metrics.judge_policy import BOARD_INPUT_BOUND


def judged_profile(profile: str) -> bool:
    """Whether ``profile`` sends submissions to an LLM judge and keeps a snapshot of its replies."""
    from averitec_tools.scoring.profiles import get_profile

    return "judge_snapshot" in get_profile(profile).OPTIONS


def bounded_options(profile: str, options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` with the board's input bound where the phase set none (judged profiles only).

    Example:
        >>> bounded_options("fever8", {"judge_url": "u"})["judge_item_chars"], bounded_options("averitec2024", {})
        (2000, {})
    """
    out = dict(options)
    if judged_profile(profile):
        out.setdefault("judge_max_items", BOARD_INPUT_BOUND.max_items)
        out.setdefault("judge_item_chars", BOARD_INPUT_BOUND.max_chars)
    return out


def snapshot_file(folder: Path, profile: str, stored: Mapping[str, Any] | None) -> Path:
    """Where ``profile`` reads and writes its snapshot in a scoring run's folder, pre-filled with ``stored``."""
    path = folder / f"judge-snapshot-{profile}.json"
    if stored:
        path.write_text(json.dumps(stored), encoding="utf-8")
    return path


def read_snapshot(path: Path) -> dict[str, Any] | None:
    """The snapshot a run wrote (``None``: the profile wrote none)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))  # type: ignore[no-any-return]
    except (OSError, ValueError):
        return None


def result_complete(summary: Mapping[str, Any] | None) -> bool:
    """Whether a stored result's summary says every claim was judged (no judge: complete)."""
    judge = (summary or {}).get("judge")
    return not isinstance(judge, Mapping) or judge.get("complete", True) is not False


__all__ = ["bounded_options", "judged_profile", "read_snapshot", "result_complete", "snapshot_file"]
