"""Verified downloads of named files from the Hugging Face hub (generic; no dataset knowledge).

A :class:`DataSource` names files in a hub repository (with the right ``repo_type``), the
sha256 recorded for each, and where they go; :func:`download` fetches them resumably,
verifies them, unpacks archives and records a manifest; :func:`plan` says what that would
take (sizes, disk, free space) without fetching. The dataset catalogue (AVeriTeC, the
knowledge stores, FEVER-8, FEVER, VitaminC) is :mod:`averitec_tools.loaders.catalogue`;
any other module may register its own sources in :data:`SOURCES`. ``huggingface_hub`` is
imported only by the functions that talk to the hub.

Example:
    >>> from averitec_tools.downloads import SOURCES, DataSource, RemoteFile
    >>> isinstance(SOURCES.kind, str) and RemoteFile("a.json").verified
    False
"""

from averitec_tools.downloads.fetch import (
    DownloadReport,
    FileResult,
    download,
    download_all,
    execute,
)
from averitec_tools.downloads.plan import Plan, PlannedFile, check_space, disk_free, human, plan
from averitec_tools.downloads.prepare import hub_offline, prepare
from averitec_tools.downloads.sources import (
    SOURCES,
    DataSource,
    FolderListing,
    HubLocation,
    RemoteFile,
    Unpack,
    all_sources,
    get_sources,
    register_source,
    source_names,
    splits_of,
)

__all__ = [
    "SOURCES",
    "DataSource",
    "DownloadReport",
    "FileResult",
    "FolderListing",
    "HubLocation",
    "Plan",
    "PlannedFile",
    "RemoteFile",
    "Unpack",
    "all_sources",
    "check_space",
    "disk_free",
    "download",
    "download_all",
    "execute",
    "get_sources",
    "human",
    "hub_offline",
    "plan",
    "prepare",
    "register_source",
    "source_names",
    "splits_of",
]
