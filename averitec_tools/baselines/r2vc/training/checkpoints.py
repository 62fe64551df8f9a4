"""Resumable training: a persistent checkpoint folder next to the output, and where to resume.

A stage saving to ``OUT`` with ``save_steps`` > 0 trains in ``OUT.checkpoints/`` (not a
scratch folder: it survives an exception, a kill or a reboot). The trainer writes
``checkpoint-<step>/`` there every ``save_steps`` optimizer steps (the weights, the
optimizer and scheduler, the RNG states, ``trainer_state.json`` last) and keeps the newest
``save_total_limit``. A rerun with the same settings and data resumes from the newest
*complete* checkpoint (one whose ``trainer_state.json`` was written: a kill while a
checkpoint was being written leaves an incomplete folder, skipped). The folder's
``run.json`` records what the checkpoints belong to; a rerun with other settings or data is
refused instead of resuming someone else's run. On success the final model moves to
``OUT`` and the checkpoint folder is deleted.

Example:
    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> folder = open_checkpoints(root / "sft", fingerprint="abc")
    >>> folder.name, last_complete_checkpoint(folder)
    ('sft.checkpoints', None)
    >>> (folder / "checkpoint-2").mkdir(); _ = (folder / "checkpoint-2" / "trainer_state.json").write_text("{}")
    >>> (folder / "checkpoint-4").mkdir()  # torn: no trainer_state.json
    >>> last_complete_checkpoint(folder).name
    'checkpoint-2'
    >>> try:
    ...     open_checkpoints(root / "sft", fingerprint="other")
    ... except UserError as exc:
    ...     print(str(exc).split(": ", 1)[1].split(" (delete")[0])
    holds checkpoints of another training run (other settings or data)
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError

SUFFIX = ".checkpoints"
_STEP = re.compile(r"checkpoint-(\d+)$")


def checkpoint_folder(output_dir: str | os.PathLike[str]) -> Path:
    """``OUT.checkpoints`` for an output folder ``OUT``.

    Example:
        >>> checkpoint_folder("/w/dpo").as_posix()
        '/w/dpo.checkpoints'
    """
    out = Path(output_dir)
    return out.with_name(out.name + SUFFIX)


def run_fingerprint(*, stage: str, settings: dict[str, Any], n_examples: int,
                    manifest: dict[str, Any] | None) -> str:
    """What a checkpoint folder belongs to: the stage, its settings, example count and data digests.

    Example:
        >>> a = run_fingerprint(stage="sft", settings={"lr": 1}, n_examples=3, manifest=None)
        >>> a == run_fingerprint(stage="sft", settings={"lr": 2}, n_examples=3, manifest=None)
        False
    """
    from averitec_tools.hashing import json_digest

    data = {role: {k: v for k, v in (info or {}).items() if k in ("sha256", "bytes", "fingerprint")}
            for role, info in ((manifest or {}).get("data") or {}).items()}
    return json_digest("r2vc-train-checkpoints-v1", stage, settings, n_examples, data)


def open_checkpoints(output_dir: str | os.PathLike[str], *, fingerprint: str) -> Path:
    """Create (or reopen) ``OUT.checkpoints``; refuse one that belongs to another run.

    Raises:
        UserError: the folder's ``run.json`` names another fingerprint.
    """
    folder = checkpoint_folder(output_dir)
    stamp = folder / "run.json"
    if stamp.is_file():
        recorded = json.loads(stamp.read_text(encoding="utf-8")).get("fingerprint")
        if recorded != fingerprint:
            raise UserError(f"{folder}: holds checkpoints of another training run (other settings or data)",
                            hint=f"delete {folder} to start this run from step 0")
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    tmp = stamp.with_suffix(".json.tmp")
    tmp.write_text(json.dumps({"fingerprint": fingerprint}) + "\n", encoding="utf-8")
    os.replace(tmp, stamp)
    return folder


def last_complete_checkpoint(folder: str | os.PathLike[str]) -> Path | None:
    """The highest-step ``checkpoint-N`` in ``folder`` whose ``trainer_state.json`` exists."""
    root = Path(folder)
    if not root.is_dir():
        return None
    done = [(int(m.group(1)), p) for p in root.iterdir()
            if (m := _STEP.match(p.name)) and (p / "trainer_state.json").is_file()]
    return max(done)[1] if done else None


__all__ = ["last_complete_checkpoint", "open_checkpoints", "run_fingerprint"]
