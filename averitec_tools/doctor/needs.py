"""Each requirement of a doctor target against what the machine has (:func:`target_needs`).

One function per kind of need (GPU, host RAM and disk, hub, modules, data), each a list of
:class:`~averitec_tools.doctor.targets.Need` rows: ``ok``, ``missing`` (with the fix) or
``optional``.

Example:
    >>> from averitec_tools.doctor.targets import TARGETS
    >>> [n.status for n in gpu_needs(TARGETS.get("averitec-paper"), [{"name": "H100", "memory_gib": 79.2}], {})]
    ['ok']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from averitec_tools.doctor.targets import USABLE_SHARE, Need, Target

GIB = 1 << 30


def gib_text(n: int | float | None) -> str:
    """Bytes in GiB, one decimal (``unknown`` for ``None``).

    Example:
        >>> gib_text(3 << 30), gib_text(None)
        ('3.0 GiB', 'unknown')
    """
    return "unknown" if n is None else f"{n / GIB:.1f} GiB"


def gpu_needs(target: Target, gpus: Sequence[Mapping[str, Any]], torch_info: Mapping[str, Any]) -> list[Need]:
    """The GPU row: the largest GPU's usable share against the target's planned peak."""
    best = max((g["memory_gib"] for g in gpus), default=0.0)
    fits = best * USABLE_SHARE >= target.gpu_gib  # what a run may fill of it (baselines._run.gpus.usable_gib)
    have = ", ".join(f"{g['name']} {g['memory_gib']} GiB" for g in gpus) or (
        f"none (torch {torch_info.get('version')}, CUDA build {torch_info.get('cuda_build')})"
        if torch_info.get("installed") else "none (torch not installed)")
    return [Need("GPU", "ok" if fits else "missing", have, f"{target.gpu_text}: {target.gpu_why}",
                 "" if fits else "run on a machine with such a GPU, after make venv-gpu")]


def host_needs(target: Target, *, ram: int | None, disk: int) -> list[Need]:
    """Host RAM and free disk."""
    ram_ok = ram is not None and ram >= target.ram_gib * GIB * 0.95
    disk_ok = disk >= target.disk_gib * GIB
    return [Need("host RAM", "ok" if ram_ok else "missing", gib_text(ram), f">= {target.ram_gib} GiB",
                 "" if ram_ok else "a machine with more memory"),
            Need("free disk", "ok" if disk_ok else "missing", gib_text(disk), f">= {target.disk_gib} GiB",
                 "" if disk_ok else "free space under the data root and the Hugging Face cache")]


def hub_needs(target: Target, hub: Mapping[str, Any] | None) -> list[Need]:
    """The model hub, where the target downloads models and the hub was probed."""
    if not target.hub or hub is None:
        return []
    ok = hub["reachable"] and not hub["offline_env"]
    have = ("disabled (HF_HUB_OFFLINE, or TRANSFORMERS_OFFLINE where it is unset)" if hub["offline_env"] else
            "reachable" if hub["reachable"] else "unreachable") + f" at {hub['endpoint']}"
    fix = ("HF_HUB_OFFLINE=0 (as the make paper targets set it; it overrides TRANSFORMERS_OFFLINE)" if hub["offline_env"]
           else "" if ok else "a network route to the hub, or HF_ENDPOINT=<mirror>")
    return [Need("hub", "ok" if ok else "missing", have, "the model hub (model downloads)", fix)]


def module_needs(target: Target, modules: Mapping[str, str | None]) -> list[Need]:
    """Required modules (``missing`` when absent), then optional ones (``optional``)."""
    rows = []
    for wanted, absent, want in ((target.modules, "missing", "importable"), (target.optional, "optional", "optional")):
        for mod, how in wanted.items():
            have = modules.get(mod)
            rows.append(Need(f"module {mod}", "ok" if have else absent, have or "not installed", want,
                             "" if have else how))
    return rows


def data_needs(target: Target, data_roots: Sequence[Path]) -> list[Need]:
    """Each input file, found under the first data root that has it."""
    rows = []
    for rel, how in target.data.items():
        found = next((root / rel for root in data_roots if (root / rel).exists()), None)
        rows.append(Need(rel, "ok" if found else "missing", str(found) if found else "not found in the data roots",
                         "$AVERITEC_DATA_DIR or the download root", "" if found else how))
    return rows


def target_needs(target: Target, *, torch_info: Mapping[str, Any], ram: int | None, disk: int,
                 hub: Mapping[str, Any] | None, modules: Mapping[str, str | None],
                 data_roots: Sequence[Path]) -> list[Need]:
    """Every requirement of ``target``, in the order the report prints them."""
    return [*gpu_needs(target, torch_info.get("gpus") or [], torch_info), *host_needs(target, ram=ram, disk=disk),
            *hub_needs(target, hub), *module_needs(target, modules), *data_needs(target, data_roots)]


__all__ = ["GIB", "data_needs", "gib_text", "gpu_needs", "host_needs", "hub_needs", "module_needs", "target_needs"]
