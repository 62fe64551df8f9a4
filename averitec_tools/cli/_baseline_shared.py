"""Argument helpers shared by the ``averitec baseline r2vc`` commands (``run``, ``ablations``,
``paper``) and ``averitec index``: a module of its own so that those commands do not import
each other in a circle."""

from __future__ import annotations

import argparse
from typing import Any

from averitec_tools.errors import UserError


def _claims_path(args: argparse.Namespace, config: Any) -> str:
    if args.claims is not None:
        return str(args.claims)
    if not config.offline.enabled:
        raise UserError(f"config {config.name!r}: --claims is required")
    from averitec_tools.baselines.r2vc.offline.data import default_claims_path

    return str(default_claims_path())


def _quiet_models(progress: bool) -> None:
    """Without progress bars, also silence transformers' weight-loading bars."""
    if progress:
        return
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - depends on the install
        return
    hf_logging.disable_progress_bar()
