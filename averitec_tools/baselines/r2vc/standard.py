"""The ``standard`` preset's pipeline: every model is the one the configuration names.

:func:`build_standard` loads the retriever over the corpus (building missing indexes), the
HF NLI verifier, the calibrator file and the generator (an HF causal LM, or the NLI-only
fallback under ``ablation.nli_only``), names each in the components (model ids and the
hub revisions they were loaded from) and builds the pipeline whole. With ``request.models``
the retriever, NLI model and generator are lent by a
:class:`~averitec_tools.baselines._run.memory.ResidentModels` (one load for every pipeline
of the same settings) instead of loaded here.

Example:
    >>> generator_attention("auto", device="cpu") is None, generator_attention("eager", device="cpu")
    (True, 'eager')
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from averitec_tools.baselines._run.memory import ResidentModels
from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
from averitec_tools.baselines.r2vc.reporting import describe_components
from averitec_tools.baselines.r2vc.request import BuildRequest, whole_pipeline
from averitec_tools.baselines.r2vc.stages.questions import QuestionWriter
from averitec_tools.baselines.r2vc.stages.verification.verifier import (
    Verifier,
    verifier_from_config,
)
from averitec_tools.baselines.r2vc.types import Generator, Retriever
from averitec_tools.errors import UserError


def _lent(models: ResidentModels | None, kind: str, key: Any, load: Callable[[], Any], label: str = "") -> Any:
    """``load()``, or the resident model of ``kind`` built from ``key`` when ``models`` lends them."""
    return load() if models is None else models.get(kind, key, load, label=label)


def lent_retriever(cfg: R2VCConfig, *, corpus: str, models: ResidentModels | None = None, rebuild: bool = False,
                   progress: bool = False, engine: Any = None) -> Retriever:
    """The retriever of ``cfg.retrieval`` over ``corpus`` (its indexes under ``retrieval.index_dir`` or
    ``<corpus>/indexes``, built where missing), lent by ``models`` when given: one per corpus and settings
    for a whole run."""
    from averitec_tools.baselines.r2vc.stages.retrieval.configured import retriever_from_config

    index_dir = cfg.retrieval.index_dir or str(Path(corpus) / "indexes")
    return _lent(models, "retriever", (corpus, index_dir, repr(cfg.retrieval)), lambda: retriever_from_config(  # type: ignore[no-any-return]
        cfg.retrieval, corpus=corpus, index_dir=index_dir, rebuild=rebuild, show_progress=progress, engine=engine),
        label=str(corpus))


def _retriever(cfg: R2VCConfig, request: BuildRequest) -> Retriever | None:
    """The configured retriever over the corpus (None with given evidence and no corpus)."""
    corpus_dir = request.corpus or cfg.retrieval.corpus
    if corpus_dir is None and request.evidence != "given":
        raise UserError(f"config {cfg.name!r}: no corpus given", hint="pass --corpus DIR or set retrieval.corpus")
    if corpus_dir is not None and not Path(corpus_dir).is_dir():
        raise UserError(f"{corpus_dir}: corpus directory not found")
    if request.evidence == "given" or corpus_dir is None:
        return None
    return lent_retriever(cfg, corpus=corpus_dir, models=request.models, rebuild=request.rebuild_index,
                          progress=request.progress, engine=request.engine)


def _generator(cfg: R2VCConfig, verifier: Verifier, models: ResidentModels | None = None
               ) -> tuple[Generator, QuestionWriter | None, dict[str, Any] | None]:
    """The generator, the LM question writer (where asked for) and the generator's component entry."""
    from averitec_tools.baselines.r2vc.stages.generation.nli_fallback import NLIFallbackGenerator

    g, v = cfg.generator, cfg.verifier
    if g.model is None:  # only reachable with ablation.nli_only (check_components)
        return NLIFallbackGenerator(nli=verifier.nli, subset_size=g.subset_size, t_ent=v.t_ent, t_contr=v.t_contr,
                                    delta=v.delta), None, None
    if g.server is not None:
        return _server_generator(cfg), None, {"model": g.model, "server": g.server}
    from averitec_tools.baselines.r2vc.stages.generation.generator import HFGenerator
    from averitec_tools.baselines.r2vc.stages.questions import LMQuestionWriter

    attention = generator_attention(g.attn_implementation, device=g.device)
    model_id: str = g.model
    hf = _lent(models, "generator", (model_id, g.device, g.dtype, g.max_new_tokens, g.subset_size, g.reasoning,
                                     attention),
               lambda: HFGenerator(model_id, device=g.device, dtype=g.dtype, max_new_tokens=g.max_new_tokens,
                                   subset_size=g.subset_size, reasoning=g.reasoning, attn_implementation=attention),
               label=model_id)
    writer = None
    if g.question_writer == "lm":  # asked for: the generator was never trained to write questions
        writer = LMQuestionWriter(model=hf.model, tokenizer=hf.tokenizer, system=hf.reasoning.system)
    entry = {"model": g.model, "revision": model_revision(hf.model), "attention": getattr(hf, "attention", None),
             "reasoning": hf.reasoning.to_dict(),
             "dtype": str(getattr(next(hf.model.parameters()), "dtype", "")).replace("torch.", "")}
    return hf, writer, entry


def _server_generator(cfg: R2VCConfig) -> Generator:
    """``generator.server``'s decoding of ``generator.model`` (its tokenizer read here)."""
    from averitec_tools.baselines.r2vc.stages.generation.server import ServerGenerator

    g = cfg.generator
    assert g.server is not None and g.model is not None  # the caller's and check_components'
    return ServerGenerator(url=g.server, model=g.model, max_new_tokens=g.max_new_tokens, subset_size=g.subset_size,
                           reasoning=g.reasoning)


def build_standard(cfg: R2VCConfig, request: BuildRequest) -> R2VCPipeline:
    """The pipeline of ``cfg`` (effective: ablation switches applied) with the models it names.

    With ``request.evidence == "given"`` no retriever is built and no corpus is needed.

    Raises:
        UserError / ResourceError: no corpus, a missing or corrupt index, a model that
            cannot be loaded (offline: at once, never waiting on the network).
    """
    from averitec_tools.baselines.r2vc.stages.calibration.calibrator import load_or_none
    from averitec_tools.nli import HFNLIBackend

    retriever = _retriever(cfg, request)
    calibrator = load_or_none(cfg.calibration.path)  # the pipeline drops it under ablation.no_calibration
    v = cfg.verifier
    backend = _lent(request.models, "verifier", (v.model, v.device, v.batch_size, v.max_length, v.pair_order),
                    lambda: HFNLIBackend(model_id=v.model, device=v.device, batch_size=v.batch_size,
                                         max_length=v.max_length, pair_order=v.pair_order), label=v.model)
    verifier = verifier_from_config(backend=backend, config=v)
    generator, writer, generator_entry = _generator(cfg, verifier, request.models)
    described = describe_components(cfg, retriever=retriever, generator=generator, verifier=verifier,
                                    calibrator=calibrator, question_writer=writer)
    described["verifier"] = {**described["verifier"], "revision": model_revision(backend.model)}
    if generator_entry is not None:
        described["generator"] = generator_entry
    return whole_pipeline(request, config=cfg, described=described, retriever=retriever, generator=generator,
                          verifier=verifier, calibrator=calibrator, question_writer=writer)


def generator_attention(requested: str, *, device: str) -> str | None:
    """``auto`` → FlashAttention-2 on CUDA where flash-attn is installed, else the library default."""
    if requested != "auto":
        return requested
    from importlib.util import find_spec

    import torch

    on_cuda = device.startswith("cuda") or (device == "auto" and torch.cuda.is_available())
    return "flash_attention_2" if on_cuda and find_spec("flash_attn") is not None else None


def model_revision(model: Any) -> str | None:
    """The hub commit a transformers model was loaded from (None for local/unknown)."""
    config = getattr(model, "config", None)
    return getattr(config, "_commit_hash", None) if config is not None else None


__all__ = ["build_standard", "lent_retriever"]
