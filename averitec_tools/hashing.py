"""The package's hashes, all SHA-256: of a file (read in 1 MiB blocks, constant memory), of a
text or bytes (:func:`sha256_hex`: keys, tokens, content), of JSON parts (:func:`json_digest`:
cache keys).

Files: used for gold files (prepared caches, leaderboard warm caches), downloads, training
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


def sha256_hex(data: str | bytes, *, length: int = 64) -> str:
    """The first ``length`` hex digits of the SHA-256 of ``data`` (text as UTF-8): the one
    digest of a key, a token or a text's content.

    Example:
        >>> sha256_hex("abc", length=12), sha256_hex(b"abc") == hashlib.sha256(b"abc").hexdigest()
        ('ba7816bf8f01', True)
    """
    return hashlib.sha256(data.encode("utf-8") if isinstance(data, str) else data).hexdigest()[:length]


def json_digest(*parts: Any, length: int = 16) -> str:
    """A cache key: the first ``length`` hex digits (16 by default) of the SHA-256 of each
    part as sorted-key ASCII JSON (``str`` for the rest), one after another.

    Example:
        >>> json_digest("v1", {"b": 2, "a": 1}) == json_digest("v1", {"a": 1, "b": 2})
        True
        >>> json_digest("v1", [1, 2])
        'f0711684d1f38750'
    """
    return sha256_hex("".join(json.dumps(part, sort_keys=True, default=str) for part in parts), length=length)


__all__ = ["file_sha256", "json_digest", "sha256_hex"]
