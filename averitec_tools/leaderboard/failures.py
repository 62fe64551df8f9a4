"""Why a submission failed, in two versions: what its team sees and what organisers see.

A team-visible reason names only the team's own file (by the name they uploaded it
under), the line or item, and the claim id. Server paths (the temporary copy the scorer
reads, the gold file, the cache), facts of the gold file (its claim count, id range,
claim texts: the ``detail`` of a :class:`~averitec_tools.errors.UserError`) and
tracebacks stay in the server log and in ``server_reason``, shown to organisers only.

An error that is not about the submission (the phase's reference file unreadable, a
competition setting, a bug) is a failure on the server's side: the team gets a neutral
line and the submission does not count against its quota.

Example:
    >>> from averitec_tools.errors import UserError
    >>> exc = UserError("/tmp/lb-x/submission.json[3] (claim_id 600): claim_id 600 has no reference claim",
    ...                 detail="/srv/gold/test.json has 500 claims, ids 0..499")
    >>> f = failure_from_error(exc, submission_path="/tmp/lb-x/submission.json", display_name="preds.json",
    ...                        private=["/srv/gold/test.json"])
    >>> f.team, f.charged
    ('preds.json[3] (claim_id 600): claim_id 600 has no reference claim', True)
    >>> "500 claims" in f.server
    True
"""

from __future__ import annotations

import os
import tempfile
import traceback
from collections.abc import Iterable
from dataclasses import dataclass

from averitec_tools.cache import cache_root
from averitec_tools.errors import UserError

SERVER_SIDE = ("the submission could not be scored because of a problem on the server's side; the organisers have "
               "the details (it does not count against your quota)")
INTERNAL = ("internal error while scoring this submission; the organisers have the details "
            "(it does not count against your quota)")
REDACTED = "<server path>"


@dataclass
class Failure(Exception):
    """A submission that cannot be scored.

    Attributes:
        team: What the team sees.
        server: The full message (or traceback), for the log and organisers.
        charged: Whether it counts against the team's quota.
        drop_content: Whether the uploaded bytes are dropped from the store (a file that
            validation refused: scoring it again cannot change that, and a refusal must
            not keep its bytes, whatever their size).
    """

    team: str
    server: str
    charged: bool = True
    drop_content: bool = False

    def __str__(self) -> str:
        return self.server


def redact(text: str, private: Iterable[str]) -> str:
    """``text`` with every private string (longest first) replaced by ``<server path>``.

    Example:
        >>> redact("open /srv/gold/dev.json failed in /srv/gold", ["/srv/gold", "/srv/gold/dev.json"])
        'open <server path> failed in <server path>'
    """
    for secret in sorted({p for p in private if p and len(p) > 1}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def server_paths(*paths: str | os.PathLike[str] | None) -> list[str]:
    """The strings that must not reach a team: each path, its real path, their folders,
    the temporary folder and the data folder of the environment."""
    out: list[str] = []
    for path in paths:
        if path is None:
            continue
        for form in {str(path), os.path.realpath(path)}:
            out.append(form)
            if os.path.isabs(form):  # a relative folder name ("examples") is too common a word
                out.append(os.path.dirname(form))
    for folder in (tempfile.gettempdir(), os.environ.get("AVERITEC_DATA_DIR"), str(cache_root())):
        if folder:
            out += [folder, os.path.realpath(folder)]
    return [p for p in out if p not in ("", "/", ".")]


def failure_from_error(exc: UserError, *, submission_path: str, display_name: str, private: Iterable[str]) -> Failure:
    """The team-safe :class:`Failure` for a scoring error (see the module docstring)."""
    server = str(exc)
    text = exc.message + (f" ({exc.hint})" if exc.hint else "")
    if submission_path not in text:
        return Failure(SERVER_SIDE, server, charged=False)
    team = redact(text.replace(submission_path, display_name), [*private, submission_path])
    return Failure(team, server, charged=True)


def internal_failure(exc: BaseException) -> Failure:
    """The :class:`Failure` for an unexpected exception (a scorer bug): the traceback for
    the organisers, a neutral line for the team."""
    return Failure(INTERNAL, "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)), charged=False)


__all__ = ["INTERNAL", "SERVER_SIDE", "Failure", "failure_from_error", "internal_failure", "server_paths"]
