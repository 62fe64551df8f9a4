"""Upload an export folder to a hub *dataset* repository with ``huggingface_hub``.

``averitec export-hf NAME --split S --out DIR --push-to-hub OWNER/NAME`` writes the export
(:func:`~averitec_tools.loaders.export.export_hf`), then creates the repository if needed
(``HfApi.create_repo(..., repo_type="dataset", exist_ok=True)``) and uploads the card and
the shards in one commit (``HfApi.upload_folder``: Xet or Git LFS for the parquet files, as
the hub chooses). ``HF_ENDPOINT`` and the token (``HF_TOKEN`` or ``huggingface-cli login``)
are read as ``huggingface_hub`` reads them. The commit id comes back, so the repository can
be pinned by whoever loads it: ``load_dataset(REPO, revision=COMMIT)``.

Example:
    >>> check_repo_id("someone/averitec-dev")
    'someone/averitec-dev'
    >>> check_repo_id("no-owner")
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: --push-to-hub 'no-owner': expected OWNER/NAME (a hub dataset repository)
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from averitec_tools.errors import UserError

_REPO_ID = re.compile(r"[A-Za-z0-9][\w.-]{0,95}/[A-Za-z0-9][\w.-]{0,95}")


@dataclass(frozen=True)
class PushResult:
    """Where the export went: repository, the commit made, its URL."""

    repo_id: str
    commit: str
    url: str


def check_repo_id(repo_id: str) -> str:
    """``repo_id`` if it is ``OWNER/NAME`` (checked before any work).

    Raises:
        UserError: anything else.
    """
    if not _REPO_ID.fullmatch(repo_id) or ".." in repo_id or repo_id.endswith((".git", "-", ".")):
        raise UserError(f"--push-to-hub {repo_id!r}: expected OWNER/NAME (a hub dataset repository)")
    return repo_id


def check_can_push() -> None:
    """Refuse before any work when the hub is disabled (``HF_HUB_OFFLINE``)."""
    from averitec_tools.downloads import hub_offline

    if hub_offline():
        raise UserError("--push-to-hub: the hub is disabled (HF_HUB_OFFLINE=1)",
                        hint="unset HF_HUB_OFFLINE (and HF_DATASETS_OFFLINE, TRANSFORMERS_OFFLINE) to upload")


def push_export(folder: str | os.PathLike[str], *, repo_id: str, private: bool = False,
                message: str | None = None) -> PushResult:
    """Upload the export in ``folder`` (its ``README.md`` and ``data/*.parquet``) as one commit.

    Raises:
        UserError: a bad repository id, the hub disabled or refusing (one line, its reason).
    """
    from huggingface_hub import HfApi

    from averitec_tools.downloads.hub import endpoint, hub_errors

    check_repo_id(repo_id)
    check_can_push()
    api = HfApi(endpoint=endpoint())
    try:
        with hub_errors(f"--push-to-hub {repo_id}"):
            api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
            info = api.upload_folder(folder_path=str(Path(folder)), repo_id=repo_id, repo_type="dataset",
                                     allow_patterns=["README.md", "data/*.parquet"],
                                     commit_message=message or "averitec export-hf")
    except (RuntimeError, ValueError) as exc:  # huggingface_hub's wrapper of a failed LFS upload, a bad reply
        cause = exc.__cause__ or exc
        raise UserError(f"--push-to-hub {repo_id}: upload failed: {type(cause).__name__}: "
                        f"{(str(cause).strip().splitlines() or [''])[0]}", hint="the export is kept in --out") from None
    return PushResult(repo_id=repo_id, commit=str(info.oid), url=str(info.commit_url))


__all__ = ["check_can_push", "check_repo_id", "push_export"]
