"""Loading Hugging Face causal LMs for the R2VC generator (device, dtype, offline checks).

``torch`` and ``transformers`` are imported lazily.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from averitec_tools.errors import ResourceError, UserError
from averitec_tools.models import hub_offline


def select_device_dtype(*, device: str = "auto", dtype: str = "auto") -> tuple[str, Any]:
    """Resolve ``"auto"``: CUDA with bf16 when available, CPU with fp32 otherwise.

    Args:
        device: ``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...
        dtype: ``"auto"``, ``"bfloat16"``, ``"float16"`` or ``"float32"``.

    Returns:
        ``(device, torch.dtype)``.

    Raises:
        UserError: for an unknown dtype, or CUDA requested where none is available.

    Example:
        >>> import torch
        >>> select_device_dtype(device="cpu", dtype="auto") == ("cpu", torch.float32)
        True
    """
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"device {device!r} requested but CUDA is not available", hint="use --device cpu")
    dtypes = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}
    if dtype == "auto":
        return device, (torch.bfloat16 if device.startswith("cuda") else torch.float32)
    if dtype not in dtypes:
        raise UserError(f"unknown dtype {dtype!r}", hint=f"use one of: auto, {', '.join(dtypes)}")
    return device, dtypes[dtype]


def _source(model_id: str, *, what: str) -> tuple[str, bool]:
    """Where ``model_id`` loads from, and whether it is a local directory (one with a ``config.json``)."""
    path = Path(model_id).expanduser()
    looks_local = path.exists() or model_id.startswith((".", "/", "~"))
    if looks_local and not (path / "config.json").exists():
        raise ResourceError(
            f"cannot load {what} {model_id!r}: no config.json in that directory",
            hint="pass a directory saved with save_pretrained() or a hub id",
        )
    return (str(path) if looks_local else model_id), looks_local


def load_causal_lm(
    model_id: str,
    *,
    device: str | None = "cpu",
    dtype: Any = None,
    local_files_only: bool | None = None,
    trust_remote_code: bool = False,
    model_kwargs: dict[str, Any] | None = None,
) -> tuple[Any, Any]:
    """Load a causal LM and its tokenizer from a local path or hub id, failing clearly offline.

    Local files (a directory, or the hub cache) are tried first with
    ``local_files_only=True``, which never touches the network. Only if that fails and
    downloads are allowed (``local_files_only`` false, or ``None`` with neither
    ``HF_HUB_OFFLINE`` nor ``TRANSFORMERS_OFFLINE`` set) is the hub tried.

    Args:
        model_id: Hub id (``nvidia/Llama-3.1-Nemotron-Nano-8B-v1``) or local directory.
        device: Torch device to move the model to (``None``: leave it where it loads).
        dtype: Torch dtype of the weights (``None``: the checkpoint's).
        local_files_only: Never download (``None``: follow the offline env variables).
        trust_remote_code: Passed to ``from_pretrained``.
        model_kwargs: Extra ``from_pretrained`` arguments (e.g. ``attn_implementation``).

    Returns ``(model, tokenizer)``, the model in eval mode; a ResourceError saying how to fix it
    where the model cannot be found or loaded.

    Example:
        A local path without a saved model fails before transformers is asked:

        >>> try:
        ...     load_causal_lm("/nonexistent/model", local_files_only=True)
        ... except ResourceError as exc:
        ...     print(exc.message)
        cannot load causal LM '/nonexistent/model': no config.json in that directory
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    def load(source: str, local_only: bool, kwargs: dict[str, Any]) -> tuple[Any, Any]:
        tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only, **kwargs)
        model: Any = AutoModelForCausalLM.from_pretrained(
            source, local_files_only=local_only, dtype=dtype, **kwargs, **(model_kwargs or {})
        )
        return model, tokenizer

    model, tokenizer = _local_first(model_id, load, what="causal LM", local_files_only=local_files_only,
                                    trust_remote_code=trust_remote_code)
    if device is not None:
        model.to(device)
    model.eval()
    return model, tokenizer


def load_tokenizer(model_id: str, *, local_files_only: bool | None = None, trust_remote_code: bool = False) -> Any:
    """The tokenizer of a causal LM (a server decodes with it), from :func:`load_causal_lm`'s
    sources; its errors name the tokenizer.

    Example:
        A hub id that is not in the local cache, with downloads off, fails with the offline hint:

        >>> try:
        ...     load_tokenizer("no-such-org/no-such-model", local_files_only=True)
        ... except ResourceError as exc:
        ...     print(str(exc).split(":")[0], "/", "offline mode is on" in str(exc.hint))
        cannot load tokenizer 'no-such-org/no-such-model' / True
    """
    from transformers import AutoTokenizer

    return _local_first(model_id, lambda source, local_only, kwargs: AutoTokenizer.from_pretrained(
        source, local_files_only=local_only, **kwargs), what="tokenizer", local_files_only=local_files_only,
        trust_remote_code=trust_remote_code)


def _local_first(model_id: str, load: Callable[[str, bool, dict[str, Any]], Any], *, what: str,
                 local_files_only: bool | None, trust_remote_code: bool) -> Any:
    """``load(source, local_only, kwargs)`` from local files first, then (downloads allowed) the hub;
    ``what`` (``"causal LM"``, ``"tokenizer"``) names the thing in the errors."""
    offline = hub_offline() if local_files_only is None else local_files_only
    source, looks_local = _source(model_id, what=what)
    kwargs: dict[str, Any] = {"trust_remote_code": trust_remote_code}
    attempts = [True] if (offline or looks_local) else [True, False]
    last_error: Exception | None = None
    for local_only in attempts:
        try:
            return load(source, local_only, kwargs)
        except (OSError, ValueError, KeyError) as exc:
            last_error = exc
    raise _not_loaded(model_id, last_error, what=what, offline=offline)


def _not_loaded(model_id: str, error: Exception | None, *, what: str, offline: bool) -> ResourceError:
    """The one-line error of a ``what`` (causal LM, tokenizer) that could not be loaded, saying how to fix it."""
    reason = str(error).splitlines()[0] if error else "unknown error"
    hint = (
        "download it first on a machine with internet (huggingface-cli download ID) or "
        "pass a local directory; offline mode is on (HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE "
        "or local_files_only)"
        if offline
        else "check the model id and your network / HF token"
    )
    return ResourceError(f"cannot load {what} {model_id!r}: {reason}", hint=hint)


__all__ = ["load_causal_lm", "load_tokenizer", "select_device_dtype"]
