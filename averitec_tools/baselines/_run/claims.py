"""Reading a claims file, as both baselines do: one claim object per record, ids checked.

Example:
    >>> import json, tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "c.json"
    >>> _ = p.write_text(json.dumps([{"claim": "A.", "claim_id": 7}, {"claim": "B.", "claim_id": 7}]))
    >>> ids = ClaimIds(noun="claim_id")
    >>> [ids.check(item["claim_id"], where=loc.where) for loc, item in claim_objects(p)]
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: ...c.json[1]: duplicate claim_id 7
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.jsonio import Located, iter_records


def claim_objects(path: str | os.PathLike[str]) -> Iterator[tuple[Located, Mapping[str, Any]]]:
    """Each record of a claims file (JSON array or JSONL) with where it stands.

    Raises:
        UserError: a record is not an object (file and item named), or the file is unreadable.
    """
    for loc in iter_records(path):
        if not isinstance(loc.value, Mapping):
            raise UserError(f"{loc.where}: expected a claim object, found {type(loc.value).__name__}")
        yield loc, loc.value


class ClaimIds:
    """The ids of one claims file: each an integer or a string, none twice.

    Args:
        noun: How messages name the id (``claim_id``, ``claim id``).
    """

    def __init__(self, *, noun: str) -> None:
        self.noun = noun
        self.seen: set[Any] = set()

    def check(self, claim_id: Any, *, where: str) -> Any:
        """``claim_id``, once it is checked and recorded.

        Raises:
            UserError: not an integer or string, or seen before in this file.
        """
        if not isinstance(claim_id, (int, str)) or isinstance(claim_id, bool):
            raise UserError(f"{where}: {self.noun} must be an integer or string, found {claim_id!r}")
        if claim_id in self.seen:
            raise UserError(f"{where}: duplicate {self.noun} {claim_id!r}")
        self.seen.add(claim_id)
        return claim_id


__all__ = ["ClaimIds", "claim_objects"]
