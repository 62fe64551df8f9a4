"""Dataset loaders: AVeriTeC, FEVER and VitaminC in one line, and the knowledge stores as streams.

Ids are hierarchical (``averitec/dev``, ``fever/paper_dev``, ``vitaminc/train``) plus the
R2VC-standardised views ``fever/r2vc`` and ``vitaminc/r2vc`` (which take ``split=``) and the
knowledge stores (``averitec/knowledge_store``, which take ``split=`` and ``claim_ids=``).
``datasets``/``polars`` are imported only by the functions that return them.

Example:
    >>> from averitec_tools.loaders import DATASETS
    >>> "averitec/dev" in DATASETS and "fever/r2vc" in DATASETS
    True
"""

from averitec_tools.loaders import averimatec as _averimatec  # noqa: F401  (registers)
from averitec_tools.loaders import averimatec_store as _averimatec_store  # noqa: F401
from averitec_tools.loaders import averitec as _averitec  # noqa: F401
from averitec_tools.loaders import averitec_store as _averitec_store  # noqa: F401
from averitec_tools.loaders import fever as _fever  # noqa: F401
from averitec_tools.loaders import vitaminc as _vitaminc  # noqa: F401
from averitec_tools.loaders.api import (
    dataset_info,
    dataset_stats,
    features_for,
    iter_dataset,
    load,
    provenance,
    records_from_dataset,
    to_polars,
)
from averitec_tools.loaders.base import (
    DATASETS,
    FAMILIES,
    STORES,
    DatasetEntry,
    DatasetFamily,
    resolve,
)
from averitec_tools.loaders.provenance import Provenance

__all__ = [
    "DATASETS",
    "FAMILIES",
    "STORES",
    "DatasetEntry",
    "DatasetFamily",
    "Provenance",
    "dataset_info",
    "dataset_stats",
    "features_for",
    "iter_dataset",
    "load",
    "provenance",
    "records_from_dataset",
    "resolve",
    "to_polars",
]
