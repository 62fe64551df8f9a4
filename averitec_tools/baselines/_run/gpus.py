"""A small registry of GPU specifications for run plans (``--plan``, ``--gpu NAME``).

Each :class:`GpuSpec` holds the vendor datasheet figures a plan's estimate is computed
from: memory, HBM bandwidth and dense bf16 tensor FLOPs (no structured-sparsity doubling).
They are datasheet peaks, not measurements: a plan multiplies them by a stated
utilisation (:data:`DEFAULT_MFU`, :data:`DEFAULT_BANDWIDTH_UTIL`) and says so.

* :data:`GPUS` — name (``h200``, ``h100-80gb`` ...) → :class:`GpuSpec`;
* :func:`gpu_spec` — look a name up (unknown names: a one-line
  :class:`~averitec_tools.errors.UserError` with the close names);
* :func:`detect_gpu` — the spec matching the first CUDA device torch sees (``None`` on CPU
  or for a device not in the registry);
* :func:`resolve_gpu` — the named GPU, else the detected one, else a UserError asking for
  ``--gpu NAME``;
* :func:`check_fits` — before any work: every stage's planned peak against the detected
  GPU's memory (:data:`USABLE_SHARE` of it), refused in one line naming what would fit.

Example:
    >>> spec = gpu_spec("h200")
    >>> spec.memory_gib, spec.bandwidth_tbs, spec.bf16_tflops
    (141.0, 4.8, 989.0)
    >>> detect_gpu(torch_info={"gpus": [{"name": "NVIDIA H100 80GB HBM3"}]}).name
    'h100-80gb'
    >>> resolve_gpu(None, torch_info={"gpus": []})
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: no CUDA GPU detected here: name the GPU to plan for with --gpu NAME (known: a100-40gb, a100-80gb, h100-80gb, h100-pcie-80gb, h200, l40s, rtx-4090)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.registry import Registry

#: Model FLOPs utilisation assumed for training (forward+backward) when a plan has no
#: measured throughput: a typical figure for 8B full fine-tuning with gradient checkpointing.
DEFAULT_MFU = 0.35
#: Fraction of HBM bandwidth a memory-bound decode step reaches (weights read once per step).
DEFAULT_BANDWIDTH_UTIL = 0.6
#: Share of a GPU's memory a plan may fill: the rest is the CUDA context, cuBLAS workspaces and
#: the caching allocator's fragmentation (an 80 GB H100: 76 GiB).
USABLE_SHARE = 0.95


@dataclass(frozen=True)
class GpuSpec:
    """One GPU model's datasheet figures.

    Attributes:
        name: Registry name (``h200``).
        label: Full product name.
        memory_gib: Device memory in GiB (as the datasheet's GB figure).
        bandwidth_tbs: Peak memory bandwidth in TB/s.
        bf16_tflops: Peak dense bf16 tensor TFLOP/s (without sparsity).
        match: Lower-case substrings of ``torch.cuda.get_device_name`` that identify it
            (all must occur).
    """

    name: str
    label: str
    memory_gib: float
    bandwidth_tbs: float
    bf16_tflops: float
    match: tuple[str, ...]

    @property
    def usable_gib(self) -> float:
        """What a plan may fill: :data:`USABLE_SHARE` of ``memory_gib``."""
        return usable_gib(self.memory_gib)

    def to_dict(self) -> dict[str, Any]:
        """The spec as a JSON-ready mapping (``match`` left out)."""
        out = asdict(self)
        out.pop("match")
        out["usable_gib"] = round(self.usable_gib, 1)
        return out


GPUS: Registry[GpuSpec] = Registry("GPU")
for _spec in (
    GpuSpec("h200", "NVIDIA H200 SXM 141GB", 141.0, 4.8, 989.0, ("h200",)),
    GpuSpec("h100-80gb", "NVIDIA H100 SXM 80GB", 80.0, 3.35, 989.0, ("h100", "hbm3")),
    GpuSpec("h100-pcie-80gb", "NVIDIA H100 PCIe 80GB", 80.0, 2.0, 756.0, ("h100", "pcie")),
    GpuSpec("a100-80gb", "NVIDIA A100 SXM 80GB", 80.0, 2.039, 312.0, ("a100", "80gb")),
    GpuSpec("a100-40gb", "NVIDIA A100 SXM 40GB", 40.0, 1.555, 312.0, ("a100", "40gb")),
    GpuSpec("l40s", "NVIDIA L40S 48GB", 48.0, 0.864, 362.0, ("l40s",)),
    GpuSpec("rtx-4090", "NVIDIA GeForce RTX 4090 24GB", 24.0, 1.008, 165.0, ("4090",)),
):
    GPUS.add(_spec.name, _spec)


def gpu_spec(name: str) -> GpuSpec:
    """The registered GPU called ``name`` (case-insensitive).

    Example:
        >>> gpu_spec("A100-80GB").label
        'NVIDIA A100 SXM 80GB'
    """
    return GPUS.get(str(name).strip().lower())


def detect_gpu(*, torch_info: Mapping[str, Any] | None = None) -> GpuSpec | None:
    """The spec of the first visible CUDA device, or ``None`` (no GPU, or not registered).

    Args:
        torch_info: :func:`averitec_tools.doctor.probe_torch`'s answer (probed when ``None``).

    Example:
        >>> detect_gpu(torch_info={"gpus": [{"name": "NVIDIA H200"}]}).name
        'h200'
        >>> detect_gpu(torch_info={"installed": False}) is None
        True
    """
    if torch_info is None:
        from averitec_tools.doctor import probe_torch

        torch_info = probe_torch()
    gpus = torch_info.get("gpus") or []
    if not gpus:
        return None
    device = str(gpus[0].get("name", "")).lower()
    for name in GPUS:
        spec = GPUS.get(name)
        if all(part in device for part in spec.match):
            return spec
    return None


def resolve_gpu(name: str | None, *, torch_info: Mapping[str, Any] | None = None) -> GpuSpec:
    """``name``'s spec when given, else the detected GPU's; a UserError when neither.

    Example:
        >>> resolve_gpu("h100-80gb").bandwidth_tbs
        3.35
    """
    if name:
        return gpu_spec(name)
    if torch_info is None:
        from averitec_tools.doctor import probe_torch

        torch_info = probe_torch()
    spec = detect_gpu(torch_info=torch_info)
    if spec is not None:
        return spec
    gpus = torch_info.get("gpus") or []
    what = (f"the GPU here ({gpus[0].get('name')}) is not in the GPU registry" if gpus
            else "no CUDA GPU detected here")
    raise UserError(f"{what}: name the GPU to plan for with --gpu NAME (known: {', '.join(GPUS.names())})")


def usable_gib(memory_gib: float) -> float:
    """:data:`USABLE_SHARE` of ``memory_gib``.

    Example:
        >>> usable_gib(80.0)
        76.0
    """
    return round(USABLE_SHARE * float(memory_gib), 2)


def fitting_gpus(peak_gib: float) -> list[str]:
    """Registered GPUs whose usable memory holds ``peak_gib``, smallest first.

    Example:
        >>> fitting_gpus(71.6), fitting_gpus(112.6)
        (['h100-80gb', 'h100-pcie-80gb', 'a100-80gb', 'h200'], ['h200'])
    """
    specs = sorted((GPUS.get(n) for n in GPUS.names()), key=lambda g: (g.memory_gib, -g.bf16_tflops))
    return [g.name for g in specs if g.usable_gib >= peak_gib]


def check_fits(peaks: Mapping[str, float], *, what: str, torch_info: Mapping[str, Any] | None = None,
               plan_command: str = "") -> dict[str, Any] | None:
    """Refuse, before any work, a run whose planned peak exceeds the detected GPU (no GPU: nothing to check).

    Args:
        peaks: Stage name → planned peak GPU memory (GiB).
        what: The command, for the message.
        torch_info: :func:`averitec_tools.doctor.probe_torch`'s answer (probed when None).
        plan_command: The command that prints the whole plan (for the hint).

    Returns:
        ``{"gpu", "memory_gib", "usable_gib", "peak_gib", "stage"}`` when a GPU was checked, else None.

    Raises:
        UserError: one line naming the stage, its peak, the GPU and the GPUs that would hold it.

    Example:
        >>> info = {"gpus": [{"name": "NVIDIA A100-SXM4-40GB", "memory_gib": 39.4}]}
        >>> check_fits({"generator dpo": 71.6}, what="r2vc paper", torch_info=info)
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: r2vc paper: stage 'generator dpo' plans a peak of 71.6 GiB of GPU memory; NVIDIA A100-SXM4-40GB has 39.4 GiB, of which a plan may fill 37.4: nothing was run (it fits one h100-80gb, h100-pcie-80gb, a100-80gb, h200)
        >>> check_fits({"generator dpo": 71.6}, what="x", torch_info={"gpus": []}) is None
        True
    """
    if torch_info is None:
        from averitec_tools.doctor import probe_torch

        torch_info = probe_torch()
    gpus = torch_info.get("gpus") or []
    if not gpus or not peaks:
        return None
    gpu = gpus[0]
    usable = usable_gib(gpu["memory_gib"])
    stage, peak = max(peaks.items(), key=lambda kv: kv[1])
    checked = {"gpu": gpu.get("name"), "memory_gib": gpu["memory_gib"], "usable_gib": usable,
               "peak_gib": round(peak, 1), "stage": stage}
    if peak <= usable:
        return checked
    fits = fitting_gpus(peak)
    raise UserError(
        f"{what}: stage {stage!r} plans a peak of {peak:.1f} GiB of GPU memory; {gpu.get('name')} has "
        f"{gpu['memory_gib']:g} GiB, of which a plan may fill {usable:.1f}: nothing was run",
        hint=(f"it fits one {', '.join(fits)}" if fits else "no registered single GPU holds it")
        + (f" ({plan_command} shows every stage's peak)" if plan_command else ""))


__all__ = ["DEFAULT_BANDWIDTH_UTIL", "DEFAULT_MFU", "GPUS", "USABLE_SHARE", "GpuSpec", "check_fits", "detect_gpu",
           "fitting_gpus", "gpu_spec", "resolve_gpu", "usable_gib"]
