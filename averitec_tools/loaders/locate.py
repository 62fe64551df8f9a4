"""Where the loaders and baselines look for data files, downloaded ones included.

Data roots share one layout, ``<root>/<dataset>/<file>`` (``averitec/dev.json``,
``fever/paper_dev.jsonl``, ``averitec/knowledge_store/dev/<claim_id>.json``): first
``$AVERITEC_DATA_DIR``, then the download root, where ``averitec data download`` puts files
by default (``<cache>/data``: ``$AVERITEC_CACHE_DIR``, else ``$XDG_CACHE_HOME/averitec-tools``,
else ``~/.cache/averitec-tools``). Files downloaded with ``--out DIR`` are found by setting
``AVERITEC_DATA_DIR=DIR``.

Example:
    >>> import os, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp()); (root / "averitec").mkdir()
    >>> _ = (root / "averitec" / "dev.json").write_text("[]")
    >>> saved = os.environ.get("AVERITEC_DATA_DIR")
    >>> os.environ["AVERITEC_DATA_DIR"] = str(root)
    >>> find_data_file("averitec", "dev.json") == root / "averitec" / "dev.json"
    True
    >>> find_data_file("averitec", "nothing.json") is None
    True
    >>> _ = os.environ.pop("AVERITEC_DATA_DIR") if saved is None else os.environ.update(AVERITEC_DATA_DIR=saved)
"""

from __future__ import annotations

import os
from pathlib import Path

from averitec_tools.loaders.base import DATA_DIR_ENV


def download_root() -> Path:
    """The default ``--out`` of ``averitec data download``: ``<cache root>/data``."""
    from averitec_tools.cache import cache_root

    return cache_root("data")


def data_roots() -> list[Path]:
    """``$AVERITEC_DATA_DIR`` (when set), then :func:`download_root`."""
    roots = []
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        roots.append(Path(env))
    root = download_root()
    if root not in roots:
        roots.append(root)
    return roots


def find_data_file(dataset: str, *names: str) -> Path | None:
    """The first ``<root>/<dataset>/<name>`` that exists, over :func:`data_roots` and ``names``."""
    for root in data_roots():
        for name in names:
            path = root / dataset / name
            if path.is_file():
                return path
    return None


def find_data_root(relative: str) -> Path | None:
    """The first data root holding ``relative`` (``"averitec/dev.json"``)."""
    return next((root for root in data_roots() if (root / relative).exists()), None)


def knowledge_store_dir(split: str) -> Path | None:
    """The downloaded (or ``$AVERITEC_DATA_DIR``) AVeriTeC knowledge store of ``split``, if any."""
    for root in data_roots():
        path = root / "averitec" / "knowledge_store" / split
        if path.is_dir():
            return path
    return None


def store_for_claims(claims: str | os.PathLike[str]) -> Path | None:
    """The knowledge store that goes with a claims file found in a data root (``<root>/averitec/dev.json``
    → ``<root>/averitec/knowledge_store/dev``), if it is there; ``None`` for claims files elsewhere.

    Example:
        >>> import pathlib, tempfile
        >>> store_for_claims(pathlib.Path(tempfile.mkdtemp()) / "my-claims.json") is None
        True
    """
    path = Path(claims).absolute()
    for root in data_roots():
        folder = root.absolute() / "averitec"
        if path.parent == folder:
            store = folder / "knowledge_store" / path.stem
            return store if store.is_dir() else None
    return None


__all__ = ["DATA_DIR_ENV", "data_roots", "download_root", "find_data_file", "find_data_root", "store_for_claims"]
