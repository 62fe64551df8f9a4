"""A score's ``data:`` signature field: which downloaded bytes its gold file is.

When the references file is one ``averitec data download`` fetched from the hub (a download
manifest above it records repository, commit and sha256, and the file's sha256 still
matches), the score's signature gains ``data:SOURCE=REPO@COMMIT12``
(:func:`~averitec_tools.loaders.provenance.data_field`), which
:func:`~averitec_tools.metrics.signature.parse_signature` reads back. Any other file (the
shared data, a file of your own, a copy installed with ``--from`` that no checksum verified)
leaves the signature as it was: its origin is unknown, and a field that said so would
change every score signature printed so far. The file is hashed only when a manifest lies
above it, and nothing of ``loaders``/``downloads`` is imported otherwise (``averitec score``
stays light).

Example:
    >>> import pathlib, tempfile
    >>> gold = pathlib.Path(tempfile.mkdtemp()) / "dev.json"; _ = gold.write_text("[]")
    >>> data_fields(gold)
    []
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any

#: ``downloads.manifest.MANIFEST_NAME``, not imported from there so that a file with no
#: manifest above it costs ``averitec score`` no import (a test holds the two equal).
MANIFEST_NAME = "averitec-data-manifest.json"


def data_fields(references: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """``[("data", "SOURCE=REPO@COMMIT12")]`` for a downloaded, unchanged file; else ``[]``."""
    path = Path(os.path.abspath(references))
    if not any((folder / MANIFEST_NAME).is_file() for folder in path.parents):
        return []
    from averitec_tools.loaders.provenance import data_field, downloaded_provenance

    provenance = downloaded_provenance(path)
    return [] if provenance is None else [data_field(provenance)]


def mark_data(result: Any, *, references: str | os.PathLike[str]) -> Any:
    """The profile's result with the ``data:`` field (:func:`data_fields`) in its signature,
    in ``result.signature`` and the summary's ``signature``; ``result`` itself when there is none
    or when the result has no signature (a ``--dry-run``'s plan scores nothing)."""
    return with_data_fields(result, data_fields(references) if result.signature else [])


def with_data_fields(result: Any, fields: list[tuple[str, str]]) -> Any:
    """``result`` with ``fields`` (found once by :func:`data_fields`, e.g. by a long-lived
    :class:`~averitec_tools.scoring.batch.BatchScorer`) in its signature; unchanged without any."""
    if not result.signature or not fields:
        return result
    from averitec_tools.metrics.signature import extend_signature

    signature = extend_signature(result.signature, fields)
    summary = {key: signature if key == "signature" else value for key, value in result.summary.items()}
    return replace(result, signature=signature, summary=summary)


__all__ = ["MANIFEST_NAME", "data_fields", "mark_data", "with_data_fields"]
