"""The GPU-spec registry plans are computed from (``baselines/_run/gpus.py``)."""

from __future__ import annotations

import pytest

from averitec_tools.baselines._run.gpus import GPUS, detect_gpu, gpu_spec, resolve_gpu
from averitec_tools.errors import UserError


def test_every_spec_is_positive_and_named_by_its_key() -> None:
    for name in GPUS:
        spec = GPUS.get(name)
        assert spec.name == name
        assert spec.memory_gib > 0 and spec.bandwidth_tbs > 0 and spec.bf16_tflops > 0


@pytest.mark.parametrize(("device", "expected"), [
    ("NVIDIA H200", "h200"),
    ("NVIDIA H100 80GB HBM3", "h100-80gb"),
    ("NVIDIA H100 PCIe", "h100-pcie-80gb"),
    ("NVIDIA A100-SXM4-80GB", "a100-80gb"),
    ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
    ("NVIDIA L40S", "l40s"),
    ("Tesla T4", None),
])
def test_detect_matches_torch_device_names(device: str, expected: str | None) -> None:
    spec = detect_gpu(torch_info={"gpus": [{"name": device}]})
    assert (spec.name if spec else None) == expected


def test_resolve_prefers_the_named_gpu_and_refuses_an_unknown_one() -> None:
    assert resolve_gpu("H200", torch_info={"gpus": [{"name": "NVIDIA A100-SXM4-40GB"}]}).name == "h200"
    with pytest.raises(UserError, match="did you mean: h200"):
        gpu_spec("h20")
    with pytest.raises(UserError, match=r"Tesla T4\) is not in the GPU registry"):
        resolve_gpu(None, torch_info={"gpus": [{"name": "Tesla T4"}]})
