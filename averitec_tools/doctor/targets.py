"""What each ``make`` paper target needs (:data:`TARGETS`), for ``averitec doctor`` and the paper commands.

Requirements are stated assumptions written here (the paper's models in bf16, Table G.1's batch
sizes, the FEVER index), not measured on a GPU. The GPU figure of ``r2vc-paper`` is the one
number the CLI's refusal, doctor and ``docs/gpu.md`` give: the plan's peak (``averitec baseline
r2vc paper --plan``: DPO of the 8B generator with Table G.1's bf16 weights and 8-bit AdamW),
rounded up; ``tests/test_r2vc_plan.py`` holds it equal to the plan's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from averitec_tools.registry import Registry

#: Share of a GPU's memory a run may fill (the rest: CUDA context, workspaces, fragmentation).
USABLE_SHARE = 0.95
#: The GPU venv ``make venv-gpu`` builds, and its pip (doctor's fixes name it, not the CPU ``.venv``).
GPU_VENV = ".venv-gpu"
GPU_VENV_PIP = f"{GPU_VENV}/bin/pip"
_GPU_VENV = "make venv-gpu"

#: Parameter counts of the hub ids the paper configurations name (from their model cards).
KNOWN_PARAMS: Mapping[str, int] = {
    "nvidia/Llama-3.1-Nemotron-Nano-8B-v1": 8_030_000_000,
    "meta-llama/Llama-3.1-8B-Instruct": 8_030_000_000,
    "bigscience/bloom-7b1": 7_070_000_000,
    "facebook/bart-large": 406_000_000,
    "bert-base-uncased": 110_000_000,
    "google-bert/bert-base-uncased": 110_000_000,
    "microsoft/deberta-v3-large": 435_000_000,
    "MoritzLaurer/DeBERTa-v3-large-mnli-fever-anli-ling-wanli": 435_000_000,
}


@dataclass(frozen=True)
class Need:
    """One requirement of a target and where it stands here.

    Attributes:
        name: What is needed (``GPU``, ``host RAM``, ``vitaminc/train.jsonl``).
        status: ``ok``, ``missing`` or ``optional`` (nice to have, not required).
        have: What this machine has.
        want: What the target needs.
        fix: The command (or step) that fixes a missing item.
    """

    name: str
    status: str
    have: str
    want: str
    fix: str = ""


@dataclass(frozen=True)
class Target:
    """What one ``make`` paper target needs (stated assumptions; see the module doc).

    Attributes:
        name: The ``make`` target (``r2vc-paper``).
        gpu_gib: GPU memory the run fills at its peak (a GPU holds it when :data:`USABLE_SHARE`
            of its memory is at least this).
        gpu_why: Why that much.
        ram_gib: Host RAM.
        disk_gib: Free disk under the data root (data, models, checkpoints).
        modules: Python modules that must import (module → the package/extra that installs it).
        optional: Modules used when present (module → how to install).
        data: Paths under a data root (file or folder) → the command that downloads them.
        hub: Whether the run downloads models from the hub.
    """

    name: str
    gpu_gib: int
    gpu_why: str
    ram_gib: int
    disk_gib: int
    modules: Mapping[str, str] = field(default_factory=dict)
    optional: Mapping[str, str] = field(default_factory=dict)
    data: Mapping[str, str] = field(default_factory=dict)
    hub: bool = True

    @property
    def gpu_text(self) -> str:
        """The GPU it needs, in words (the CLI's refusals and doctor say the same).

        Example:
            >>> TARGETS.get("r2vc-paper").gpu_text
            'one CUDA GPU holding 72 GiB for the run (an 80 GB H100 or larger)'
        """
        smallest = next((label for gib, label in _GPU_CLASSES if gib * USABLE_SHARE >= self.gpu_gib), "a larger GPU")
        return f"one CUDA GPU holding {self.gpu_gib} GiB for the run ({smallest} or larger)"


#: GPU classes by memory (GiB, as torch reports them) for :attr:`Target.gpu_text`.
_GPU_CLASSES: tuple[tuple[float, str], ...] = ((23.6, "a 24 GB GPU"), (39.4, "a 40 GB A100"), (44.4, "a 48 GB L40S"),
                                               (79.1, "an 80 GB H100"), (139.8, "a 141 GB H200"))
#: ``averitec baseline r2vc paper --plan``'s peak (DPO, Table G.1's bf16 weights, 8-bit AdamW), rounded up.
R2VC_PAPER_PEAK_GIB = 72
#: ``averitec baseline averitec reproduce --plan``'s peak for ``paper-bounded`` (its questions stage), rounded up.
AVERITEC_PAPER_PEAK_GIB = 31
_FEVER_FROM = " (tries fever.ai/download/fever, then the hub's fever/fever; sha256-checked; or --from DIR)"


TARGETS: Registry[Target] = Registry("doctor target")
TARGETS.add("r2vc-paper", Target(
    name="r2vc-paper", gpu_gib=R2VC_PAPER_PEAK_GIB, gpu_why="the plan's peak, DPO of the 8B generator with Table "
    "G.1's recipe (bf16 weights and grads, 8-bit paged AdamW, stochastically rounded updates, a bf16 reference, "
    "gradient checkpointing); master_weights: fp32 needs 113 GiB, an H200 (averitec baseline r2vc paper --plan)",
    ram_gib=64, disk_gib=120,
    modules={"torch": _GPU_VENV, "transformers": _GPU_VENV, "trl": _GPU_VENV, "accelerate": _GPU_VENV,
             "bitsandbytes": _GPU_VENV, "faiss": _GPU_VENV, "sentence_transformers": _GPU_VENV},
    optional={"flash_attn": f"{GPU_VENV_PIP} install flash-attn --no-build-isolation (a source build against the "
              "GPU venv's torch: no wheel on PyPI; without it SDPA attention runs, and the reports say so)"},
    data={"vitaminc/train.jsonl": "averitec data download vitaminc",
          "vitaminc/test.jsonl": "averitec data download vitaminc",
          "fever/paper_dev.jsonl": "averitec data download fever --split paper_dev" + _FEVER_FROM,
          "fever/wiki-pages": "averitec data download fever-wiki-pages" + _FEVER_FROM},
))
TARGETS.add("averitec-paper", Target(
    name="averitec-paper", gpu_gib=AVERITEC_PAPER_PEAK_GIB, gpu_why="the plan's peak (averitec baseline averitec "
    "reproduce --plan): BLOOM-7b1 in bf16 writing 16 questions x 2 beams at a time (paper-bounded), 13 GiB of "
    "weights and 16 GiB of key/value cache; the BERT/BART trainings need less", ram_gib=32, disk_gib=80,
    modules={"torch": _GPU_VENV, "transformers": _GPU_VENV, "accelerate": _GPU_VENV, "nltk": _GPU_VENV,
             "rank_bm25": _GPU_VENV},
    data={"averitec/train.json": "averitec data download averitec --split train",
          "averitec/dev.json": "averitec data download averitec --split dev",
          "averitec/knowledge_store/dev": "averitec data download averitec-store --split dev"},
))

__all__ = ["AVERITEC_PAPER_PEAK_GIB", "GPU_VENV", "GPU_VENV_PIP", "KNOWN_PARAMS", "R2VC_PAPER_PEAK_GIB", "TARGETS", "USABLE_SHARE", "Need", "Target"]
