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
import os

_BLOCK = 1 << 20


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The hex SHA-256 of the file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


__all__ = ["file_sha256"]
