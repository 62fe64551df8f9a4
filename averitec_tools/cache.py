"""The one cache root every cache of the package lives under.

``$AVERITEC_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/averitec-tools``, else
``~/.cache/averitec-tools``. Each cache is a folder below it (``prepared/``, ``data/``,
``leaderboard/``, ``r2vc-offline/``, ``averitec-baseline/``, the Ev2R judgement file), so
setting one variable moves them all together.

Example:
    >>> import os
    >>> from unittest import mock
    >>> with mock.patch.dict(os.environ, {"XDG_CACHE_HOME": "/tmp/xdg"}):
    ...     _ = os.environ.pop("AVERITEC_CACHE_DIR", None)
    ...     cache_root().as_posix(), cache_root("leaderboard").as_posix()
    ('/tmp/xdg/averitec-tools', '/tmp/xdg/averitec-tools/leaderboard')
    >>> with mock.patch.dict(os.environ, {"AVERITEC_CACHE_DIR": "/tmp/mine", "XDG_CACHE_HOME": "/tmp/xdg"}):
    ...     cache_root("data").as_posix()
    '/tmp/mine/data'
"""

from __future__ import annotations

import os
from pathlib import Path

#: The environment variable that moves every cache.
CACHE_ENV = "AVERITEC_CACHE_DIR"


def cache_root(*parts: str) -> Path:
    """The cache root (see the module docstring), or the folder ``parts`` below it."""
    env = os.environ.get(CACHE_ENV)
    if env:
        root = Path(env)
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "averitec-tools"
    return root.joinpath(*parts)


__all__ = ["cache_root"]
