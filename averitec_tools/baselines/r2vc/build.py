"""Build an :class:`~averitec_tools.baselines.r2vc.pipeline.R2VCPipeline` from a configuration.

This module sits above both :mod:`~averitec_tools.baselines.r2vc.pipeline` and
:mod:`~averitec_tools.baselines.r2vc.offline.preset`, so neither imports the other's builder
(no import cycle).

Each preset (:mod:`~averitec_tools.baselines.r2vc.presets`) has its builder in
:data:`BUILDERS`: ``standard`` builds the models the configuration names,
``offline-minilm`` trains and caches its own
(:func:`averitec_tools.baselines.r2vc.offline.preset.build_offline_pipeline`).

Nothing is substituted silently: a standard configuration must name its generator
and calibrator or switch on the matching ablation
(:meth:`~averitec_tools.baselines.r2vc.config.R2VCConfig.check_components`), and the
pipeline's ``components`` name what each stage runs.

Example:
    >>> from averitec_tools.baselines.r2vc.config import R2VCConfig
    >>> build_pipeline(R2VCConfig(name="paper"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: config 'paper': generator.model is not set (...)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
from averitec_tools.baselines.r2vc.presets import preset_for
from averitec_tools.baselines.r2vc.stages.questions import QuestionWriter
from averitec_tools.baselines.r2vc.stages.verification.verifier import verifier_from_config
from averitec_tools.baselines.r2vc.types import Generator
from averitec_tools.errors import UserError
from averitec_tools.registry import Registry


def build_pipeline(
    config: R2VCConfig,
    *,
    corpus: str | None = None,
    claims: Sequence[ClaimInput] = (),
    rebuild_index: bool = False,
    progress: bool = True,
    engine: Any = None,
    evidence: str = "retrieved",
) -> R2VCPipeline:
    """Build the stages of ``config`` (after applying its ablation switches) with its preset's builder.

    With ``evidence="given"`` (claims carry their own evidence, the oracle-document
    setting) no retriever is built and ``corpus`` is not needed. A non-local ``engine``
    builds missing retrieval indexes on it (see
    :func:`~averitec_tools.baselines.r2vc.stages.retrieval.build_retriever`).

    Raises:
        UserError / ResourceError: a component left unset without its ablation, no
            corpus, a missing or corrupt index, a model that cannot be loaded (offline:
            at once, never waiting on the network).
    """
    cfg = config.effective()
    cfg.check_components()
    build = BUILDERS.get(preset_for(cfg).name)
    return build(config, cfg, corpus=corpus, claims=claims, rebuild_index=rebuild_index, progress=progress,
                 engine=engine, evidence=evidence)


def _build_offline(config: R2VCConfig, cfg: R2VCConfig, *, claims: Sequence[ClaimInput], progress: bool,
                   engine: Any, **_: Any) -> R2VCPipeline:
    from averitec_tools.baselines.r2vc.offline.preset import build_offline_pipeline

    return build_offline_pipeline(cfg, claims=claims, progress=progress, engine=engine, base=config)


def _build_standard(config: R2VCConfig, cfg: R2VCConfig, *, corpus: str | None, rebuild_index: bool,
                    progress: bool, engine: Any, evidence: str, **_: Any) -> R2VCPipeline:
    from averitec_tools.baselines.r2vc.stages.calibration.calibrator import load_or_none
    from averitec_tools.baselines.r2vc.stages.generation.nli_fallback import NLIFallbackGenerator
    from averitec_tools.baselines.r2vc.stages.retrieval.configured import retriever_from_config
    from averitec_tools.nli import HFNLIBackend

    corpus_dir = corpus or cfg.retrieval.corpus
    if corpus_dir is None and evidence != "given":
        raise UserError(f"config {cfg.name!r}: no corpus given", hint="pass --corpus DIR or set retrieval.corpus")
    if corpus_dir is not None and not Path(corpus_dir).is_dir():
        raise UserError(f"{corpus_dir}: corpus directory not found")
    retriever = None if evidence == "given" or corpus_dir is None else retriever_from_config(
        cfg.retrieval, corpus=corpus_dir, index_dir=cfg.retrieval.index_dir or str(Path(corpus_dir) / "indexes"),
        rebuild=rebuild_index, show_progress=progress, engine=engine,
    )
    calibrator = load_or_none(cfg.calibration.path)  # the pipeline drops it under ablation.no_calibration
    v = cfg.verifier
    backend = HFNLIBackend(model_id=v.model, device=v.device, batch_size=v.batch_size,
                           max_length=v.max_length, pair_order=v.pair_order)
    verifier = verifier_from_config(backend=backend, config=cfg.verifier)
    question_writer: QuestionWriter | None = None
    generator: Generator
    g = cfg.generator
    if g.model is None:  # only reachable with ablation.nli_only (check_components)
        generator = NLIFallbackGenerator(nli=verifier.nli, subset_size=g.subset_size,
                                         t_ent=v.t_ent, t_contr=v.t_contr, delta=v.delta)
    else:
        from averitec_tools.baselines.r2vc.stages.generation.generator import HFGenerator
        from averitec_tools.baselines.r2vc.stages.questions import LMQuestionWriter

        hf = HFGenerator(g.model, device=g.device, dtype=g.dtype, max_new_tokens=g.max_new_tokens,
                         subset_size=g.subset_size, reasoning=g.reasoning,
                         attn_implementation=generator_attention(g.attn_implementation, device=g.device))
        generator = hf
        if g.question_writer == "lm":  # asked for: the generator was never trained to write questions
            question_writer = LMQuestionWriter(model=hf.model, tokenizer=hf.tokenizer, system=hf.reasoning.system)
    pipe = R2VCPipeline(retriever=retriever, generator=generator, verifier=verifier,
                        calibrator=calibrator, config=cfg, question_writer=question_writer)
    pipe.components["verifier"]["revision"] = model_revision(backend.model)
    if g.model is not None:
        pipe.components["generator"] = {
            "model": g.model, "revision": model_revision(generator_model(generator)),
            "attention": getattr(generator, "attention", None),
            "reasoning": hf.reasoning.to_dict(),
            "dtype": str(getattr(next(generator_model(generator).parameters()), "dtype", "")).replace("torch.", ""),
        }
    return pipe


def generator_attention(requested: str, *, device: str) -> str | None:
    """``auto`` → FlashAttention-2 on CUDA where flash-attn is installed, else the library default.

    Example:
        >>> generator_attention("auto", device="cpu") is None, generator_attention("eager", device="cpu")
        (True, 'eager')
    """
    if requested != "auto":
        return requested
    from importlib.util import find_spec

    import torch

    on_cuda = device.startswith("cuda") or (device == "auto" and torch.cuda.is_available())
    return "flash_attention_2" if on_cuda and find_spec("flash_attn") is not None else None


def generator_model(generator: Any) -> Any:
    return getattr(generator, "model", None)


def model_revision(model: Any) -> str | None:
    """The hub commit a transformers model was loaded from (None for local/unknown)."""
    config = getattr(model, "config", None)
    return getattr(config, "_commit_hash", None) if config is not None else None


#: Pipeline builders by preset name (:data:`averitec_tools.baselines.r2vc.presets.PRESETS`).
BUILDERS: Registry[Callable[..., R2VCPipeline]] = Registry("R2VC pipeline builder")
BUILDERS.add("standard", _build_standard)
BUILDERS.add("offline-minilm", _build_offline)


def ablation_inputs(config: R2VCConfig, *, claims: Sequence[ClaimInput], progress: bool = False
                    ) -> tuple[Any, R2VCConfig, R2VCConfig, dict[str, Any], dict[str, Any] | None]:
    """What the ablation rows replay with, loading no LM: (calibrator, row config, store config, components,
    fitted values).

    A preset that fits its own models (offline) is built (small, cached) for its fitted
    values, claim-level rules and calibrator; the row configuration keeps ``config``'s ablation switches.
    Otherwise the calibrator is the configured file and the components are named from
    the configuration.
    """
    cfg = config.effective()
    cfg.check_components()
    if preset_for(cfg).fits_own_models:
        pipe = build_pipeline(config, claims=claims, progress=progress)
        return pipe.calibrator, replace(pipe.config, ablation=config.ablation), pipe.config, pipe.components, pipe.fitted
    from averitec_tools.baselines.r2vc.stages.calibration.calibrator import load_or_none

    components = {
        "retrieval": {"sparse": cfg.retrieval.sparse, "dense": cfg.retrieval.dense_model},
        "generator": {"model": cfg.generator.model} if cfg.generator.model else "ablation:nli_only",
        "verifier": {"backend": f"hf:{cfg.verifier.model}"},
    }
    return load_or_none(cfg.calibration.path), config, cfg, components, None


__all__ = ["BUILDERS", "ablation_inputs", "build_pipeline", "model_revision"]
