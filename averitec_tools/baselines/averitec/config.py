"""Configuration of the AVeriTeC baseline: one section per stage, YAML or built-in.

Built-ins: ``paper`` (the upstream models: BLOOM-7b1 questions, BERT reranker and
verdict classifier, BART-large justification; GPU settings) and ``offline-minilm`` (runs
here on CPU: reranker and verdict fine-tuned from the packaged all-MiniLM-L6-v2 on
``train.json``, retrieval-based questions, extractive justification).

A model id names the component; the fallbacks are named explicitly
(``questions.model: retrieval-fallback``, ``justification.model: extractive-fallback``), so
a config that omits a model runs the paper's model (or fails with a clear line offline),
never silently a weaker stage. Unknown keys are errors with a did-you-mean.

Example:
    >>> cfg = builtin_config("offline-minilm")
    >>> cfg.questions.model, cfg.reranker.base
    ('retrieval-fallback', 'minilm')
    >>> config_from_mapping({"rerankr": {}}, source="x.yaml")
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: x.yaml: unknown key 'rerankr' (did you mean: reranker?)
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError

QUESTION_FALLBACK = "retrieval-fallback"
JUSTIFICATION_FALLBACK = "extractive-fallback"


@dataclass(frozen=True)
class TrainConfig:
    """Fine-tuning settings of a classifier (reranker or verdict) or the justification model.

    ``max_pairs`` caps the training examples (a seeded, class-balanced sample) so CPU
    training stays short; ``None`` uses all. ``heldout`` is the share of training *claims*
    held out for model selection (the epoch with the best held-out accuracy is kept).
    """

    learning_rate: float = 1e-5
    batch_size: int = 32
    grad_accumulation: int = 4
    epochs: int = 20
    max_pairs: int | None = None
    heldout: float = 0.1
    max_length: int = 256
    freeze_layers: int = 0
    seed: int = 0
    device: str | None = None


@dataclass(frozen=True)
class RetrievalConfig:
    top_k: int = 100


@dataclass(frozen=True)
class QuestionsConfig:
    model: str = "bigscience/bloom-7b1"
    few_shot: int = 10
    num_beams: int = 2
    no_repeat_ngram_size: int = 2
    max_new_tokens: int = 32
    batch_size: int = 8
    dtype: str = "bfloat16"
    device: str | None = None


@dataclass(frozen=True)
class RerankerConfig:
    base: str = "bert-base-uncased"
    checkpoint: str | None = None
    auto_train: bool = False
    keep: int = 3
    batch_size: int = 64
    train: TrainConfig = field(default_factory=TrainConfig)


@dataclass(frozen=True)
class VerdictConfig:
    base: str = "bert-base-uncased"
    checkpoint: str | None = None
    auto_train: bool = False
    batch_size: int = 64
    train: TrainConfig = field(default_factory=TrainConfig)


@dataclass(frozen=True)
class JustificationConfig:
    model: str = "facebook/bart-large"
    checkpoint: str | None = None
    num_beams: int = 2
    max_new_tokens: int = 100
    max_length: int = 512
    batch_size: int = 8
    device: str | None = None
    train: TrainConfig = field(default_factory=lambda: TrainConfig(learning_rate=5e-5, batch_size=8,
                                                                   grad_accumulation=1, epochs=10))


@dataclass(frozen=True)
class DataConfig:
    train: str | None = None  # default averitec/train.json under $AVERITEC_DATA_DIR or the download root
    cache_dir: str | None = None  # default $AVERITEC_CACHE_DIR or ~/.cache/averitec-tools


@dataclass(frozen=True)
class AVeriTeCConfig:
    name: str = "paper"
    data: DataConfig = field(default_factory=DataConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    questions: QuestionsConfig = field(default_factory=QuestionsConfig)
    reranker: RerankerConfig = field(default_factory=RerankerConfig)
    verdict: VerdictConfig = field(default_factory=VerdictConfig)
    justification: JustificationConfig = field(default_factory=JustificationConfig)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def fingerprint(self) -> str:
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()[:16]


#: CPU fine-tuning caps of ``offline-minilm``: 1,200 examples (75 steps of 16), inputs cut
#: at 64 tokens, embeddings and the bottom 3 of MiniLM's 6 layers frozen — a few minutes
#: per model on 2 cores.
OFFLINE_TRAIN = TrainConfig(learning_rate=5e-5, batch_size=16, grad_accumulation=1, epochs=1,
                            max_pairs=1200, heldout=0.05, max_length=64, freeze_layers=3, seed=0, device="cpu")


def _offline() -> AVeriTeCConfig:
    return AVeriTeCConfig(
        name="offline-minilm",
        questions=QuestionsConfig(model=QUESTION_FALLBACK),
        reranker=RerankerConfig(base="minilm", auto_train=True, batch_size=128, train=OFFLINE_TRAIN),
        verdict=VerdictConfig(base="minilm", auto_train=True, batch_size=128, train=OFFLINE_TRAIN),
        justification=JustificationConfig(model=JUSTIFICATION_FALLBACK),
    )


BUILTIN_CONFIGS: dict[str, Any] = {"paper": AVeriTeCConfig, "offline-minilm": _offline}


def builtin_config(name: str) -> AVeriTeCConfig:
    if name not in BUILTIN_CONFIGS:
        close = difflib.get_close_matches(name, list(BUILTIN_CONFIGS), n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"built-ins: {', '.join(BUILTIN_CONFIGS)}"
        raise UserError(f"unknown built-in configuration {name!r}", hint=hint)
    cfg: AVeriTeCConfig = BUILTIN_CONFIGS[name]()
    return cfg


def _check(value: Any, annotation: str, where: str) -> Any:
    kinds = [a.strip() for a in annotation.split("|")]
    if value is None:
        if "None" in kinds:
            return None
        raise UserError(f"{where}: must not be null")
    ok = {"bool": isinstance(value, bool),
          "int": isinstance(value, int) and not isinstance(value, bool),
          "float": isinstance(value, (int, float)) and not isinstance(value, bool),
          "str": isinstance(value, str)}
    for kind in kinds:
        if ok.get(kind):
            return float(value) if kind == "float" else value
    expected = " or ".join(k for k in kinds if k != "None") + (" or null" if "None" in kinds else "")
    raise UserError(f"{where}: expected {expected}, found {type(value).__name__} {value!r}")


def _merge(base: Any, values: Any, where: str) -> Any:
    if not isinstance(values, Mapping):
        raise UserError(f"{where}: expected a mapping of settings, found {type(values).__name__}")
    fields = {f.name: f for f in dataclasses.fields(base)}
    updates = {}
    for key, value in values.items():
        if key not in fields:
            close = difflib.get_close_matches(str(key), list(fields), n=3, cutoff=0.6)
            hint = f"did you mean: {', '.join(close)}?" if close else f"known keys: {', '.join(fields)}"
            raise UserError(f"{where}: unknown key {key!r} ({hint})")
        current = getattr(base, key)
        sub = f"{where}.{key}" if ":" in where else f"{where}: {key}"
        if dataclasses.is_dataclass(current):
            updates[key] = _merge(current, value, sub)
        else:
            updates[key] = _check(value, str(fields[key].type), sub)
    return replace(base, **updates)


def config_from_mapping(data: Any, *, source: str) -> AVeriTeCConfig:
    """Build a configuration from a mapping; ``base:`` names the built-in it overrides."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise UserError(f"{source}: expected a mapping at the top level")
    data = dict(data)
    base = builtin_config(str(data.pop("base"))) if "base" in data else AVeriTeCConfig()
    cfg: AVeriTeCConfig = _merge(base, data, source)
    return cfg


def resolve_config(spec: str) -> AVeriTeCConfig:
    """A built-in name or a YAML file path."""
    if spec in BUILTIN_CONFIGS:
        return builtin_config(spec)
    import yaml

    p = Path(spec)
    if not p.is_file():
        close = difflib.get_close_matches(spec, list(BUILTIN_CONFIGS), n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"or use a built-in: {', '.join(BUILTIN_CONFIGS)}"
        raise UserError(f"{p}: no such configuration file", hint=hint)
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        loc = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        raise UserError(f"{p}{loc}: invalid YAML: {getattr(exc, 'problem', None) or exc}") from None
    return config_from_mapping(data, source=str(p))


def train_path(cfg: AVeriTeCConfig) -> Path:
    """``data.train``, else ``averitec/train.json`` under ``$AVERITEC_DATA_DIR`` or the download root."""
    if cfg.data.train:
        return Path(cfg.data.train)
    from averitec_tools.loaders.locate import find_data_file

    found = find_data_file("averitec", "train.json")
    if found is not None:
        return found
    root = os.environ.get("AVERITEC_DATA_DIR")
    if root:
        return Path(root) / "averitec" / "train.json"
    raise UserError("no training data: set data.train in the config or AVERITEC_DATA_DIR",
                    hint="or download it: averitec data download averitec --split train")


def cache_dir(cfg: AVeriTeCConfig) -> Path:
    if cfg.data.cache_dir:
        return Path(cfg.data.cache_dir)
    root = os.environ.get("AVERITEC_CACHE_DIR") or str(Path.home() / ".cache" / "averitec-tools")
    return Path(root) / "averitec-baseline"


__all__ = ["JUSTIFICATION_FALLBACK", "OFFLINE_TRAIN", "QUESTION_FALLBACK", "AVeriTeCConfig", "TrainConfig",
           "builtin_config", "cache_dir", "config_from_mapping", "resolve_config", "train_path"]
