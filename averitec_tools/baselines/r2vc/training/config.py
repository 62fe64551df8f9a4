"""SFT and DPO settings for the R2VC generator, with the paper's Table G.1 values as defaults.

Settings load from YAML (``from_yaml``) or a mapping (``from_dict``); unknown keys are
rejected with a close-name suggestion. ``"auto"`` values resolve at training time:
on CUDA, Table G.1's recipe — **bf16 full weights** (``master_weights: bf16``), gradient
checkpointing, ``paged_adamw_8bit`` (bitsandbytes; an error naming the ``train`` extra
when it is missing, never a silent downgrade) and ``flash_attention_2`` when flash-attn
is installed, else SDPA — flash-attn is not in any extra (it needs a two-step install,
``docs/r2vc_training.md``), and the report says which attention ran. On CPU: fp32 weights,
no checkpointing, ``adamw_torch`` and SDPA.

With bf16 weights an AdamW step at DPO's lr 4e-6 is below half a bf16 ulp for most
weights: rounded to nearest it is lost (measured on a tiny Llama: 7 % of the weights move
per step). The optimizer's update is therefore written back by stochastic rounding
(``bf16_rounding: stochastic``, :mod:`~averitec_tools.baselines.r2vc.training.bf16_updates`),
which keeps every update in expectation; ``bf16_rounding: nearest`` is the literal (failing)
recipe, kept only to measure it. ``master_weights: fp32`` (fp32 weights, bf16 autocast) is
the named option for GPUs with room for it (an H200: ``docs/gpu.md``). Every run checks that
its weights moved (:mod:`~averitec_tools.baselines.r2vc.training.weights`).
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, fields
from importlib.util import find_spec
from typing import Any, TypeVar

from averitec_tools.errors import UserError

#: The paper's generator backbone (§3.3: "Llama-3.1-8B-Nemotron-Nano").
PAPER_MODEL = "nvidia/Llama-3.1-Nemotron-Nano-8B-v1"

S = TypeVar("S", bound="TrainSettings")


@dataclass(frozen=True)
class TrainSettings:
    """Settings shared by SFT and DPO.

    Attributes:
        model: Hub id or local directory of the model to train.
        learning_rate: Peak learning rate.
        lr_scheduler_type: Transformers scheduler name.
        warmup_ratio: Fraction of steps spent warming up.
        weight_decay: AdamW weight decay.
        per_device_train_batch_size: Examples per device per step.
        gradient_accumulation_steps: Steps accumulated per optimizer update.
        max_length: Maximum tokens of prompt + response.
        num_train_epochs: Epochs (Table G.1: 1).
        max_steps: Stop after this many optimizer steps (-1: run the epochs).
        optim: Optimizer name, or ``"auto"`` (paged_adamw_8bit on CUDA, adamw_torch on CPU).
        bf16: bf16 training, or ``"auto"`` (on CUDA).
        gradient_checkpointing: On/off, or ``"auto"`` (on CUDA).
        attn_implementation: ``"auto"`` (flash_attention_2 on CUDA if installed, else
            sdpa), or any transformers attention implementation name.
        logging_steps: Log every n steps.
        save_steps: Checkpoint every n optimizer steps into the persistent ``OUT.checkpoints/``
            folder, from which a rerun resumes (0: no checkpoints, a rerun starts over;
            :mod:`~averitec_tools.baselines.r2vc.training.checkpoints`).
        save_total_limit: Checkpoints kept (the newest; each holds weights and optimizer
            state: about 6 bytes per parameter with fp32 master weights and 8-bit AdamW).
        seed: Training seed (also draws each prompt's distractors and gold position).
        limit: Use only the first n data rows (None: all).
        local_files_only: Never download the model (None: follow ``HF_HUB_OFFLINE``).
        report_to: Experiment trackers (``"none"`` by default).
        master_weights: ``"bf16"`` (default, Table G.1: the weights themselves in bf16 when
            ``bf16`` resolves true, i.e. on CUDA; fp32 on CPU) or ``"fp32"`` (fp32 weights and
            optimizer updates, bf16 autocast for compute: about 12 bytes per parameter with
            8-bit AdamW and autocast's bf16 weight copies; an H200, not an 80 GB H100).
        bf16_rounding: How bf16 weights take an update: ``"stochastic"`` (default: kept in
            expectation, :mod:`~averitec_tools.baselines.r2vc.training.bf16_updates`) or
            ``"nearest"`` (the optimizer's own write-back: updates below half an ulp are lost).
        n_passages: Passages in each training prompt: the gold evidence at a random
            position among other rows' evidence, as inference shows min(16, |E|)
            passages in random order (1: the gold passage alone).
        min_changed_fraction: The run fails unless at least this share of the
            (sampled) non-embedding weights changed — with stochastically rounded bf16
            weights, which move by one ulp at a time: unless the weights kept this share
            of the optimizer's update — checked after the first full-rate optimizer step
            and at the end (0 disables the check).
        reasoning: Reasoning mode of models that switch it in the system prompt
            (Llama-3.1-Nemotron-Nano: ``"detailed thinking on/off"``): ``"auto"`` (off
            for such models, the paper's prompt otherwise), ``"off"``, ``"on"``, or
            ``"none"`` (always the paper's system prompt).
    """

    model: str = PAPER_MODEL
    learning_rate: float = 2e-4
    lr_scheduler_type: str = "cosine"
    warmup_ratio: float = 0.03
    weight_decay: float = 0.1
    per_device_train_batch_size: int = 2
    gradient_accumulation_steps: int = 8
    max_length: int = 8192
    num_train_epochs: float = 1.0
    max_steps: int = -1
    optim: str = "auto"
    bf16: bool | str = "auto"
    gradient_checkpointing: bool | str = "auto"
    attn_implementation: str = "auto"
    logging_steps: int = 10
    save_steps: int = 500
    save_total_limit: int = 1
    seed: int = 0
    limit: int | None = None
    local_files_only: bool | None = None
    report_to: str = "none"
    master_weights: str = "bf16"
    bf16_rounding: str = "stochastic"
    n_passages: int = 16
    min_changed_fraction: float = 0.5
    reasoning: str = "auto"

    def __post_init__(self) -> None:
        positive = (
            "learning_rate",
            "per_device_train_batch_size",
            "gradient_accumulation_steps",
            "max_length",
            "num_train_epochs",
            "logging_steps",
            "save_total_limit",
        )
        for name in positive:
            if getattr(self, name) <= 0:
                raise UserError(f"{type(self).__name__}: {name} must be > 0, got {getattr(self, name)}")
        if not 0.0 <= self.warmup_ratio < 1.0:
            raise UserError(f"{type(self).__name__}: warmup_ratio must be in [0, 1), got {self.warmup_ratio}")
        for name in ("bf16", "gradient_checkpointing"):
            value = getattr(self, name)
            if not isinstance(value, bool) and value != "auto":
                raise UserError(f"{type(self).__name__}: {name} must be true, false or 'auto', got {value!r}")
        if self.limit is not None and self.limit < 1:
            raise UserError(f"{type(self).__name__}: limit must be >= 1, got {self.limit}")
        name = type(self).__name__
        if self.master_weights not in ("fp32", "bf16"):
            raise UserError(f"{name}: master_weights must be 'fp32' or 'bf16', got {self.master_weights!r}")
        if self.bf16_rounding not in ("stochastic", "nearest"):
            raise UserError(f"{name}: bf16_rounding must be 'stochastic' or 'nearest', got {self.bf16_rounding!r}")
        if self.n_passages < 1:
            raise UserError(f"{name}: n_passages must be >= 1, got {self.n_passages}")
        if not 0.0 <= self.min_changed_fraction <= 1.0:
            raise UserError(f"{name}: min_changed_fraction must be in [0, 1], got {self.min_changed_fraction}")
        from averitec_tools.baselines.r2vc.stages.generation.reasoning import REASONING_MODES

        if self.reasoning not in REASONING_MODES:
            raise UserError(f"{name}: reasoning must be one of {', '.join(REASONING_MODES)}, got {self.reasoning!r}")

    @classmethod
    def from_dict(cls: type[S], mapping: dict[str, Any], *, where: str = "") -> S:
        """Build settings from a mapping, rejecting unknown keys (with a suggestion).

        Example:
            >>> SFTSettings.from_dict({"learning_rate": 1e-4}).learning_rate
            0.0001
        """
        from averitec_tools.configfile import override_dataclass

        return override_dataclass(cls(), mapping, where=where or cls.__name__)

    @classmethod
    def from_yaml(cls: type[S], path: str | os.PathLike[str]) -> S:
        """Load settings from a YAML file (a flat mapping, or one under an ``sft``/``dpo`` key).

        Example:
            >>> SFTSettings.from_yaml("sft.yaml")  # doctest: +SKIP
        """
        from averitec_tools.configfile import load_yaml_file

        where = os.fspath(path)
        data = load_yaml_file(path, what="settings file")
        data = data or {}
        section = cls.SECTION
        if isinstance(data, dict) and isinstance(data.get(section), dict):
            data = data[section]
        return cls.from_dict(data, where=where)

    SECTION = "train"

    def to_dict(self) -> dict[str, Any]:
        """The settings as a plain dict (for saving next to the trained model)."""
        return asdict(self)

    def resolved(self, *, cuda: bool) -> dict[str, Any]:
        """Resolve the ``"auto"`` values for a CUDA or CPU run.

        Example:
            >>> SFTSettings().resolved(cuda=False)["optim"]
            'adamw_torch'
        """
        optim = self.optim
        if optim == "auto":
            optim = "paged_adamw_8bit" if cuda else "adamw_torch"
        attn = self.attn_implementation
        if attn == "auto":  # flash-attn is a separate install: use it where it is, say which ran
            attn = "flash_attention_2" if cuda and find_spec("flash_attn") is not None else "sdpa"
        for value, package, key in ((optim, "bitsandbytes", "optim"), (attn, "flash_attn", "attn_implementation")):
            needs = value.endswith("8bit") if package == "bitsandbytes" else value.startswith("flash_attention")
            if needs and find_spec(package) is None:
                install = ("pip install 'averitec-tools[train]'" if package == "bitsandbytes" else
                           "pip install flash-attn --no-build-isolation (after torch; docs/r2vc_training.md)")
                raise UserError(
                    f"{type(self).__name__}: {key} {value!r} needs {package.replace('_', '-')}, which is not installed",
                    hint=f"{install}, or set {key} explicitly (e.g. "
                    f"{'adamw_torch' if key == 'optim' else 'sdpa'})",
                )
        return {
            "optim": optim,
            "bf16": cuda if self.bf16 == "auto" else bool(self.bf16),
            "gradient_checkpointing": (
                cuda if self.gradient_checkpointing == "auto" else bool(self.gradient_checkpointing)
            ),
            "attn_implementation": attn,
        }

    def trainer_kwargs(self, *, output_dir: str, cuda: bool) -> dict[str, Any]:
        """Keyword arguments shared by ``SFTConfig`` and ``DPOConfig``."""
        from transformers import TrainingArguments

        resolved = self.resolved(cuda=cuda)
        # transformers 5 renamed gradient_checkpointing (deprecated, removed in v6).
        checkpointing_key = (
            "activation_checkpointing"
            if "activation_checkpointing" in {f.name for f in fields(TrainingArguments)}
            else "gradient_checkpointing"
        )
        return {
            "output_dir": output_dir,
            "learning_rate": self.learning_rate,
            "lr_scheduler_type": self.lr_scheduler_type,
            # transformers 5 takes a ratio in [0, 1) through warmup_steps.
            "warmup_steps": self.warmup_ratio,
            "weight_decay": self.weight_decay,
            "per_device_train_batch_size": self.per_device_train_batch_size,
            "gradient_accumulation_steps": self.gradient_accumulation_steps,
            "max_length": self.max_length,
            "num_train_epochs": self.num_train_epochs,
            "max_steps": self.max_steps,
            "optim": resolved["optim"],
            "bf16": resolved["bf16"],
            checkpointing_key: resolved["gradient_checkpointing"],
            "logging_steps": self.logging_steps,
            "save_strategy": "steps" if self.save_steps > 0 else "no",
            "save_steps": self.save_steps if self.save_steps > 0 else 500,
            "save_total_limit": self.save_total_limit,
            "seed": self.seed,
            "data_seed": self.seed,
            "report_to": self.report_to,
            "use_cpu": not cuda,
        }


@dataclass(frozen=True)
class SFTSettings(TrainSettings):
    """Supervised fine-tuning settings (Table G.1 "Generator / SFT" rows).

    Example:
        >>> s = SFTSettings()
        >>> (s.learning_rate, s.lr_scheduler_type, s.warmup_ratio, s.weight_decay)
        (0.0002, 'cosine', 0.03, 0.1)
        >>> s.per_device_train_batch_size * s.gradient_accumulation_steps, s.max_length
        (16, 8192)
    """

    SECTION = "sft"


@dataclass(frozen=True)
class DPOSettings(TrainSettings):
    """DPO settings (Table G.1 "DPO" rows).

    ``model`` is the SFT checkpoint to align. The learning rate decays linearly
    (Figure F.3: "linearly anneals toward zero"); Table G.1 lists no DPO warm-up.

    Attributes:
        beta: DPO β (0.2).
        max_target_length: Longest response in tokens (512); longer pairs are dropped.
        wrong_label_fraction: Share of rejected responses that carry a wrong label
            (the rest carry mismatched citations); not given in the paper.
        pair_seed: Seed of the preference-pair corruption draws.

    Example:
        >>> d = DPOSettings()
        >>> (d.beta, d.learning_rate, d.weight_decay, d.max_target_length)
        (0.2, 4e-06, 0.1, 512)
    """

    learning_rate: float = 4e-6
    lr_scheduler_type: str = "linear"
    warmup_ratio: float = 0.0
    save_steps: int = 50
    beta: float = 0.2
    max_target_length: int = 512
    wrong_label_fraction: float = 0.5
    pair_seed: int = 0

    SECTION = "dpo"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.beta <= 0:
            raise UserError(f"DPOSettings: beta must be > 0, got {self.beta}")
        if self.max_target_length < 1:
            raise UserError(f"DPOSettings: max_target_length must be >= 1, got {self.max_target_length}")
        if not 0.0 <= self.wrong_label_fraction <= 1.0:
            raise UserError(
                f"DPOSettings: wrong_label_fraction must be in [0, 1], got {self.wrong_label_fraction}"
            )


__all__ = ["DPOSettings", "SFTSettings", "TrainSettings"]
