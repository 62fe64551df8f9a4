"""Helpers shared by the ``averitec baseline`` commands (``r2vc``, ``ablations``, ``paper``,
``averitec``) and ``averitec index``: a module of its own so that those commands do not
import each other in a circle."""

from __future__ import annotations


def quiet_models(progress: bool) -> None:
    """Without progress bars, also silence transformers' weight-loading bars."""
    if progress:
        return
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:  # pragma: no cover - depends on the install
        return
    hf_logging.disable_progress_bar()


__all__ = ["quiet_models"]
