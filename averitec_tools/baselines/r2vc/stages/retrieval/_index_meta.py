"""Checks shared by every saved retrieval index (present, readable, built from this corpus) and
by every index search (its arguments)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from averitec_tools.baselines.r2vc.corpus.store import ParagraphStore
from averitec_tools.errors import UserError

T = TypeVar("T")


def search_queries(queries: Sequence[str], *, k: int) -> list[str]:
    """The queries of an index search as a list, once ``k`` is checked.

    Raises:
        UserError: ``k`` below 1.
    """
    if k < 1:
        raise UserError(f"k must be >= 1, got {k}")
    return list(queries)


def rebuild_hint(index_dir: Path) -> str:
    """How to rebuild an index that cannot be used (shown with every index error)."""
    return f"rebuild it: build_retriever(..., rebuild=True) (CLI: averitec baseline r2vc --rebuild-index), or delete {index_dir}"


def read_index_meta(
    root: Path,
    *,
    kind: str,
    store: ParagraphStore,
    meta_file: str,
    needs: Sequence[str],
    parse: Callable[[dict[str, Any]], T],
) -> T:
    """Read a saved index's metadata and check it was built from ``store``.

    Args:
        root: The index directory.
        kind: Backend name for messages ("bm25s", "dense", "pyserini").
        store: The corpus the index must have been built from (by fingerprint).
        meta_file: Metadata file name inside ``root``.
        needs: Other files or folders that must exist inside ``root``.
        parse: Pulls the backend's settings out of the metadata; a missing key or a
            wrong type there counts as corrupt metadata.

    Raises:
        UserError: Missing files, corrupt metadata, or another corpus — each with the
            rebuild hint.
    """
    missing = [name for name in (meta_file, *needs) if not (root / name).exists()]
    if missing:
        raise UserError(f"{root}: no {kind} index here (missing {', '.join(missing)})", hint=rebuild_hint(root))
    meta_path = root / meta_file
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
        fingerprint = meta["corpus_fingerprint"]
        parsed = parse(meta)
    except (ValueError, KeyError, TypeError) as exc:
        raise UserError(f"{meta_path}: corrupt index metadata ({exc})", hint=rebuild_hint(root)) from None
    if fingerprint != store.fingerprint:
        raise UserError(
            f"{root}: {kind} index was built from another corpus "
            f"(fingerprint {fingerprint}, corpus has {store.fingerprint})",
            hint=rebuild_hint(root),
        )
    return parsed
