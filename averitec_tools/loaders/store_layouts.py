"""Where store files go when a store is installed (``averitec data download ... [--from DIR]``).

Two layouts, one per store family; each places an archive member (or a file of a store a user
has unpacked) under the split folder, or skips it, and finds an unpacked copy in a folder:

* :class:`FlatLayout` — the AVeriTeC 2024 store: claim files (``<claim_id>.json``) by base
  name, however an archive nests them (``output_dev/0.json``, ``0.json``,
  ``data_store/train/2000.json``), installed flat in ``averitec/knowledge_store/<split>/``;
* :class:`StoreLayout` — AVerImaTeC's: the paths from ``text_related/`` or ``image_related/``
  on, whatever folder holds them (the val/test archives' ``converted_datastore/``, a
  ``Knowledge_Store/<split>/``), installed in ``averimatec/Knowledge_Store/<split>/``: the
  rename the organisers ask users to make. A sub-store of another split is refused.

Example:
    >>> FLAT_LAYOUT.target("output_dev/12.json"), FLAT_LAYOUT.target("output_dev/notes.json")
    ('12.json', None)
    >>> StoreLayout("val").target("converted_datastore/text_related/text_related_store_text_val/3.json")
    'text_related/text_related_store_text_val/3.json'
"""

from __future__ import annotations

import re
from pathlib import Path

from averitec_tools.errors import UserError

#: A store file: ``<claim_id>.json``.
CLAIM_FILE = re.compile(r"^(\d+)\.json$")
#: AVerImaTeC's splits, its two top folders and its sub-store folders (``<kind>_<split>``).
AVERIMATEC_SPLITS = ("train", "val", "test")
TOP_FOLDERS = ("text_related", "image_related")
SUB_STORE = re.compile(r"^(text_related_store_text|image_related_store_text|image_related_store_image)_(\w+)$")


def _debris(parts: list[str]) -> bool:
    """macOS archive debris (``__MACOSX/``, ``._name``)."""
    return parts[0] == "__MACOSX" or parts[-1].startswith("._")


class FlatLayout:
    """The 2024 store in an archive or an unpacked folder: claim files by base name."""

    def target(self, member: str) -> str | None:
        parts = member.replace("\\", "/").split("/")
        return parts[-1] if not _debris(parts) and CLAIM_FILE.match(parts[-1]) else None

    def find_tree(self, folder: Path) -> Path | None:
        """``folder`` or a folder up to two levels below it holding claim files directly."""
        levels = [[folder]]
        for _ in range(2):
            levels.append([d for parent in levels[-1] for d in sorted(parent.iterdir()) if d.is_dir()])
        for candidate in (d for level in levels for d in level):
            if any(CLAIM_FILE.match(p.name) for p in candidate.iterdir() if p.is_file()):
                return candidate
        return None


class StoreLayout:
    """AVerImaTeC's store of one split, found under any folder and installed from its top folders on."""

    def __init__(self, split: str) -> None:
        self.split = split

    def target(self, member: str) -> str | None:
        parts = member.replace("\\", "/").split("/")
        if _debris(parts):
            return None
        top = next((i for i, p in enumerate(parts) if p in TOP_FOLDERS), None)
        if top is None or len(parts) < top + 3:
            return None
        match = SUB_STORE.match(parts[top + 1])
        if match is None:
            return None
        if match.group(2) != self.split:
            raise UserError(f"{member}: is the {match.group(2)!r} store, not {self.split!r}",
                            hint=f"pass --split {match.group(2)}, or the {self.split} archive")
        return "/".join(parts[top:])

    def find_tree(self, folder: Path) -> Path | None:
        for candidate in (folder, folder / "converted_datastore", folder / "Knowledge_Store" / self.split,
                          folder / self.split):
            if any((candidate / top).is_dir() for top in TOP_FOLDERS):
                return candidate
        return None


FLAT_LAYOUT = FlatLayout()

__all__ = ["AVERIMATEC_SPLITS", "CLAIM_FILE", "FLAT_LAYOUT", "SUB_STORE", "TOP_FOLDERS", "StoreLayout"]
