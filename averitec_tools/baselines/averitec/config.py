"""Configuration of the AVeriTeC baseline: one section per stage, YAML or built-in.

Built-ins: ``paper`` (the upstream models and settings: BLOOM-7b1 questions, BERT reranker
and verdict classifier, BART-large justification; GPU settings), ``offline-minilm`` (runs
here on CPU with the upstream settings: reranker and verdict fine-tuned from the packaged
all-MiniLM-L6-v2 on ``train.json``, retrieval-based questions, extractive justification)
and ``offline-minilm-ours`` (the same with this project's earlier choices wherever the
upstream code differs). :data:`UPSTREAM` lists the upstream value of every setting that
changes results; :meth:`AVeriTeCConfig.departures` names the ones a configuration changes.

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
    averitec_tools.errors.UserError: x.yaml: unknown key 'rerankr' (did you mean: reranker, retrieval?)
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from averitec_tools.baselines._run.spec import builtin_or_file
from averitec_tools.baselines.averitec.config_sections import (
    JUSTIFICATION_FALLBACK,
    QUESTION_FALLBACK,
    DataConfig,
    DecisionConfig,
    JustificationConfig,
    QuestionsConfig,
    RerankerConfig,
    RetrievalConfig,
    TrainConfig,
    VerdictConfig,
)
from averitec_tools.cache import cache_root
from averitec_tools.errors import UserError
from averitec_tools.registry import Registry

#: Settings added after the first release (issue 37), with the default at which they change
#: nothing: left out of :meth:`AVeriTeCConfig.fingerprint` there.
LATER_SETTINGS: dict[tuple[str, str], Any] = {
    ("verdict", "train_evidence"): "gold", ("verdict", "retrieved_per_claim"): 3, ("decision", "head"): "none"}


@dataclass(frozen=True)
class AVeriTeCConfig:
    name: str = "paper"
    data: DataConfig = field(default_factory=DataConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    questions: QuestionsConfig = field(default_factory=QuestionsConfig)
    reranker: RerankerConfig = field(default_factory=RerankerConfig)
    verdict: VerdictConfig = field(default_factory=VerdictConfig)
    justification: JustificationConfig = field(default_factory=JustificationConfig)
    decision: DecisionConfig = field(default_factory=DecisionConfig)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def fingerprint(self) -> str:
        """The settings' digest (a resumable run's sidecar header); a setting added since the
        first release is left out at its default, so a configuration that does not use it keeps
        its fingerprint and its kept partial runs.

        Example:
            >>> builtin_config("paper").fingerprint()
            '5716c1948c6dc4e2'
        """
        from averitec_tools.hashing import json_digest

        settings = self.to_dict()
        for (section, key), default in LATER_SETTINGS.items():
            if settings[section][key] == default:
                del settings[section][key]
        return json_digest(settings)

    def departures(self) -> list[str]:
        """Every setting that differs from the upstream code, as ``key=value (upstream: x)``.

        Example:
            >>> builtin_config("paper").departures()
            []
            >>> builtin_config("offline-minilm").departures()[0]
            "questions.model='retrieval-fallback' (upstream: 'bigscience/bloom-7b1')"
        """
        flat = _flatten(self.to_dict())
        return [f"{k}={flat[k]!r} (upstream: {v!r})" for k, v in UPSTREAM.items()
                if flat.get(k) != v and self._applies(k)]

    def _applies(self, key: str) -> bool:
        """Whether a setting can change this configuration's results (a fallback ignores
        its stage's model settings)."""
        if self.questions.model == QUESTION_FALLBACK and key.startswith("questions."):
            return key in ("questions.model", "questions.prompt")
        if self.justification.model == JUSTIFICATION_FALLBACK and not self.justification.checkpoint:
            return not key.startswith("justification.") or key == "justification.model"
        return True


def _flatten(d: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, Mapping):
            out.update(_flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


#: The settings the upstream scripts use (2024 shared-task baseline for retrieval, questions,
#: reranker inference and verdict inference; the 2023 training scripts for training and the
#: justification). Execution-only keys (devices, inference batch sizes of the classifiers,
#: micro-batches, cache paths, checkpoints) are not listed: they do not change results.
#: The reranker's training script is not released; its settings are the verdict script's.
UPSTREAM: dict[str, Any] = {
    "retrieval.top_k": 100, "retrieval.bm25": "upstream",
    "questions.model": "bigscience/bloom-7b1", "questions.few_shot": 10, "questions.prompt": "upstream",
    "questions.num_beams": 2, "questions.no_repeat_ngram_size": 2, "questions.max_length": 5000, "questions.stop": "none",
    "questions.max_new_tokens": None, "questions.output_cut": "upstream", "questions.prompt_max_tokens": None,
    "questions.batch_size": 1, "questions.dtype": "bfloat16",
    "reranker.base": "bert-base-uncased", "reranker.keep": 3, "reranker.input": "upstream",
    "reranker.negatives": "upstream", "reranker.max_length": 512,
    "verdict.base": "bert-base-uncased", "verdict.input": "upstream", "verdict.aggregation": "upstream",
    "verdict.max_length": 400,
    "justification.model": "facebook/bart-large", "justification.untrained": False, "justification.input": "upstream",
    "justification.decoder_start": "pad", "justification.num_beams": 2, "justification.max_new_tokens": 99,
    "justification.max_length": 512, "justification.batch_size": 1,
    "decision.reranker": "always", "decision.label_bias": "none", "decision.head": "none",
    "verdict.train_evidence": "gold",
    **{f"{stage}.train.{k}": v for stage, sel in (("reranker", "accuracy"), ("verdict", "claim-macro-f1"),
                                                   ("justification", "meteor"))
       for k, v in {"learning_rate": 1e-5, "batch_size": 32, "grad_accumulation": 4, "epochs": 20,
                    "max_pairs": None, "max_length": 512, "freeze_layers": 0, "select": sel}.items()},
}

#: Departures that no setting turns off (see docs/averitec_baseline.md).
STRUCTURAL_DEPARTURES: tuple[str, ...] = (
    "training epochs are picked on held-out training claims (upstream: on dev)",
    "a claim without evidence is predicted Not Enough Evidence with a placeholder QA pair "
    "(upstream: left out of the prediction file)",
    "the reranker trains on AVeriTeC train only (upstream: plus Full Fact QA pairs not released)",
    "the trainers' optimizer is torch.optim.AdamW with its defaults, weight decay 0.01 and eps 1e-8 (upstream: "
    "transformers' AdamW with its defaults, weight decay 0.0 and eps 1e-6: MichSchli/AVeriTeC "
    "models/SequenceClassificationModule.py and JustificationGenerationModule.py)",
)

#: Allowed values of the settings that name a behaviour.
CHOICES: dict[tuple[str, str], tuple[str, ...]] = {
    ("RetrievalConfig", "bm25"): ("upstream", "bm25s"),
    ("QuestionsConfig", "prompt"): ("upstream", "header-nearest-last"),
    ("QuestionsConfig", "output_cut"): ("upstream", "first-line"),
    ("QuestionsConfig", "stop"): ("none", "question-end"),
    ("RerankerConfig", "input"): ("upstream", "pair"),
    ("RerankerConfig", "negatives"): ("upstream", "one-swap"),
    ("VerdictConfig", "input"): ("upstream", "pair"),
    ("VerdictConfig", "aggregation"): ("upstream", "conflicting-pair"),
    ("JustificationConfig", "input"): ("upstream", "plain"),
    ("JustificationConfig", "decoder_start"): ("pad", "model"),
    ("TrainConfig", "select"): ("accuracy", "claim-macro-f1", "meteor", "last"),
    ("DecisionConfig", "reranker"): ("always", "slice-choice", "bm25-order"),
    ("DecisionConfig", "label_bias"): ("none", "slice-fit"),
    ("DecisionConfig", "head"): ("none", "claim-head"),
    ("VerdictConfig", "train_evidence"): ("gold", "gold+retrieved"),
}


#: CPU fine-tuning caps of ``offline-minilm``: 1,200 examples, inputs cut at 64 tokens,
#: embeddings and the bottom 3 of MiniLM's 6 layers frozen — a few minutes per model on
#: 2 cores. The reranker's batch counts positives, each with its 9 negatives (20 sequences).
OFFLINE_TRAIN = TrainConfig(learning_rate=5e-5, batch_size=16, grad_accumulation=1, epochs=1,
                            max_pairs=1200, heldout=0.05, max_length=64, freeze_layers=3, seed=0, device="cpu")


#: The offline verdict model's input cap (was 64): of the 6,426 upstream-style verdict inputs
#: of the training claims, 58.2 % are longer than 64 MiniLM tokens, 12.9 % than 128, 1.4 % than 256.
VERDICT_MAX_LENGTH = 256


#: The offline verdict model's training (issue 37 item 4): the caps lifted as far as the first
#: build on 2 quiet cores stays within 30 minutes (docs/averitec_baseline.md: the cost), 15 % of
#: the training claims held out (the decision slice the claim head is fitted on).
VERDICT_TRAIN = replace(OFFLINE_TRAIN, select="claim-macro-f1", max_length=VERDICT_MAX_LENGTH, heldout=0.15,
                        max_pairs=3000, freeze_layers=0, epochs=1)


def _offline() -> AVeriTeCConfig:
    """The upstream pipeline's settings with CPU substitutes and caps."""
    return AVeriTeCConfig(
        name="offline-minilm",
        data=DataConfig(pseudo_test_claims=500),
        questions=QuestionsConfig(model=QUESTION_FALLBACK),
        reranker=RerankerConfig(base="minilm", auto_train=True, batch_size=128, max_length=None,
                                train=replace(OFFLINE_TRAIN, batch_size=2)),
        verdict=VerdictConfig(base="minilm", auto_train=True, batch_size=128, max_length=None,
                              train_evidence="gold+retrieved", train=VERDICT_TRAIN),
        justification=JustificationConfig(model=JUSTIFICATION_FALLBACK),
        decision=DecisionConfig(reranker="bm25-order", head="claim-head"),
    )


def _offline_ours() -> AVeriTeCConfig:
    """``offline-minilm`` with this project's earlier choices where upstream differs."""
    base = _offline()
    return replace(
        base, name="offline-minilm-ours",
        retrieval=replace(base.retrieval, bm25="bm25s"),
        questions=replace(base.questions, prompt="header-nearest-last", output_cut="first-line", max_length=None,
                          max_new_tokens=32, prompt_max_tokens=2048, batch_size=8),
        reranker=replace(base.reranker, input="pair", negatives="one-swap", train=OFFLINE_TRAIN),
        verdict=replace(base.verdict, input="pair", aggregation="conflicting-pair", train=OFFLINE_TRAIN,
                        train_evidence="gold"),
        justification=replace(base.justification, input="plain", decoder_start="model", max_new_tokens=100,
                              batch_size=8, train=TrainConfig(learning_rate=5e-5, batch_size=8, grad_accumulation=1,
                                                              epochs=10, max_length=256, select="last")),
        decision=DecisionConfig(),  # the earlier choices: the reranker always, no label bias
    )


#: Built-in configurations selectable by name: name → factory.
BUILTIN_CONFIGS: Registry[Callable[[], AVeriTeCConfig]] = Registry("built-in configuration")
def _paper_bounded() -> AVeriTeCConfig:
    """``paper`` with BLOOM stopping at the end of the question (``questions.stop: question-end``) and
    writing 16 questions per ``generate`` call, across claims (``questions.batch_size: 16``;
    ``baselines/averitec/chunked.py``; upstream decodes one at a time)."""
    base = AVeriTeCConfig()
    return replace(base, name="paper-bounded", questions=replace(base.questions, stop="question-end", batch_size=16))


BUILTIN_CONFIGS.add("paper", AVeriTeCConfig)
BUILTIN_CONFIGS.add("paper-bounded", _paper_bounded)
BUILTIN_CONFIGS.add("offline-minilm", _offline)
BUILTIN_CONFIGS.add("offline-minilm-ours", _offline_ours)


def builtin_config(name: str) -> AVeriTeCConfig:
    """A built-in configuration by name (with close-name suggestions)."""
    return BUILTIN_CONFIGS.get(name)()


def config_from_mapping(data: Any, *, source: str) -> AVeriTeCConfig:
    """Build a configuration from a mapping; ``base:`` names the built-in it overrides."""
    if data is None:
        data = {}
    if not isinstance(data, Mapping):
        raise UserError(f"{source}: expected a mapping at the top level")
    data = dict(data)
    base = builtin_config(str(data.pop("base"))) if "base" in data else AVeriTeCConfig()
    from averitec_tools.configfile import override_dataclass

    return override_dataclass(base, data, where=source, choices=CHOICES)


def resolve_config(spec: str) -> AVeriTeCConfig:
    """A built-in name or a YAML file path."""
    return builtin_or_file(spec, builtins=BUILTIN_CONFIGS, load=_load_file)


def _load_file(path: str) -> AVeriTeCConfig:
    from averitec_tools.configfile import load_yaml_file

    data = load_yaml_file(path, hint=f"or use a built-in: {', '.join(BUILTIN_CONFIGS)}")
    return config_from_mapping(data, source=path)


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
    return cache_root("averitec-baseline")


__all__ = ["CHOICES", "JUSTIFICATION_FALLBACK", "DecisionConfig", "OFFLINE_TRAIN", "QUESTION_FALLBACK", "STRUCTURAL_DEPARTURES",
           "UPSTREAM", "AVeriTeCConfig",
           "TrainConfig",
           "builtin_config", "cache_dir", "config_from_mapping", "resolve_config", "train_path"]
