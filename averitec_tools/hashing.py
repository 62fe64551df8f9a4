"""The one file hash of the package: SHA-256, read in 1 MiB blocks (constant memory).

Used for gold files (prepared caches, leaderboard warm caches), downloads, training
data and run manifests, embedding shards.

Example:
    >>> import hashlib, os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "f.txt")
    >>> with open(path, "wb") as fh:
    ...     _ = fh.write(b"abc")
    >>> file_sha256(path)
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'
    >>> file_sha256(path) == hashlib.sha256(b"abc").hexdigest()
    True
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any

_BLOCK = 1 << 20


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The hex SHA-256 of the file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


def json_digest(*parts: Any) -> str:
    """A 16-hex-digit cache key: SHA-256 of each part as sorted-key JSON (``str`` for the rest).

    Example:
        >>> json_digest("v1", {"b": 2, "a": 1}) == json_digest("v1", {"a": 1, "b": 2})
        True
        >>> json_digest("v1", [1, 2])
        'f0711684d1f38750'
    """
    h = hashlib.sha256()
    for part in parts:
        h.update(json.dumps(part, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


__all__ = ["file_sha256", "json_digest"]
