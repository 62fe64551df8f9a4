"""Stage 5: the R2VC candidate generator (paper §3.3 "inference", Algorithm C.1 lines 6–9).

For each claim, k = 16 candidates are decoded by a causal LM, candidate i seeing a random
evidence subset S_i ⊆ E(c) of size min(16, |E(c)|) and using the decoding configuration
θ_i (temperature, top-p) from a fixed bank of 16. Each output is parsed into a
:class:`~averitec_tools.baselines.r2vc.types.Candidate`; outputs that do not parse are
counted in :attr:`GenerationResult.n_malformed` and kept as Uncertain candidates with
an empty rationale and no citations (as the paper treats unparseable outputs).

All k candidates of a claim are decoded in one batched ``generate`` call: per-row
temperature and top-p are applied by :class:`PerRowTemperatureTopP`, so different
decoding configurations share a batch.

``torch`` and ``transformers`` are imported lazily; importing this module is cheap.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from averitec_tools.baselines.r2vc.stages.generation.decoding import (
    DECODING_BANK,
    MAX_NEW_TOKENS,
    ChosenTokenLogprobs,
    DecodingConfig,
    PerRowTemperatureTopP,
)
from averitec_tools.baselines.r2vc.stages.generation.lm_loading import (
    load_causal_lm,
    select_device_dtype,
)
from averitec_tools.baselines.r2vc.stages.generation.parsing import (
    MalformedOutputError,
    parse_candidate,
)
from averitec_tools.baselines.r2vc.stages.generation.prompt import (
    ensure_chat_template,
    render_prompt,
)
from averitec_tools.baselines.r2vc.stages.generation.reasoning import (
    PAPER_PROMPT,
    ReasoningChoice,
    check_budget,
    resolve_reasoning,
)
from averitec_tools.baselines.r2vc.stages.generation.sampling import (
    DEFAULT_K,
    SUBSET_SIZE,
    sample_evidence_subsets,
)
from averitec_tools.baselines.r2vc.types import Candidate, GenerationResult, Passage
from averitec_tools.errors import UserError


@dataclass(frozen=True)
class RawOutput:
    """One decoded sequence: the assistant text and its mean token log-probability."""

    text: str
    mean_logprob: float | None


class HFGenerator:
    """R2VC generator backed by any Hugging Face causal LM (implements ``Generator``).

    Args:
        model: Hub id or local directory of the causal LM (the paper: an SFT+DPO
            Llama-3.1-Nemotron-Nano-8B); loaded with :func:`load_causal_lm`.
        device: ``"auto"`` (CUDA if available, else CPU), ``"cpu"``, ``"cuda"``, ...
        dtype: ``"auto"`` (bf16 on CUDA, fp32 on CPU), ``"bfloat16"``, ``"float16"``,
            ``"float32"``.
        max_new_tokens: Generation budget per candidate (Table G.1: 160).
        subset_size: Passages per candidate subset (Table G.1: 16).
        decoding_bank: The (temperature, top-p) configurations; candidate i uses
            ``decoding_bank[i % len(decoding_bank)]``.
        batch_size: Candidates decoded per ``generate`` call (k = 16 fits one call).
        local_files_only: Never download (``None``: follow ``HF_HUB_OFFLINE``).
        trust_remote_code: Passed to ``from_pretrained``.
        attn_implementation: Transformers attention implementation (``None``: the
            library's default, SDPA).
        reasoning: The reasoning mode of models that switch it in the system prompt
            (:mod:`~averitec_tools.baselines.r2vc.stages.generation.reasoning`; ``auto``: what a trained
            model recorded, else off for Llama-3.1-Nemotron-Nano, the paper's prompt for
            other models). :attr:`reasoning` holds the choice.

    Attributes:
        attention: The attention implementation the loaded model runs.

    Example:
        >>> gen = HFGenerator("meta-llama/Llama-3.1-8B-Instruct")  # doctest: +SKIP
        >>> result = gen.generate("Paris is in France.", passages, k=16, seed=0)  # doctest: +SKIP
        >>> [c.label for c in result.candidates]  # doctest: +SKIP
        ['True', 'True', ...]
    """

    def __init__(
        self,
        model: str,
        *,
        device: str = "auto",
        dtype: str = "auto",
        max_new_tokens: int = MAX_NEW_TOKENS,
        subset_size: int = SUBSET_SIZE,
        decoding_bank: Sequence[DecodingConfig] = DECODING_BANK,
        batch_size: int = DEFAULT_K,
        local_files_only: bool | None = None,
        trust_remote_code: bool = False,
        reasoning: str = "auto",
        attn_implementation: str | None = None,
    ) -> None:
        resolved_device, torch_dtype = select_device_dtype(device=device, dtype=dtype)
        lm, tokenizer = load_causal_lm(
            model,
            device=resolved_device,
            dtype=torch_dtype,
            local_files_only=local_files_only,
            trust_remote_code=trust_remote_code,
            model_kwargs={"attn_implementation": attn_implementation} if attn_implementation else None,
        )
        self._setup(
            model=lm,
            tokenizer=tokenizer,
            name=f"hf:{model}",
            max_new_tokens=max_new_tokens,
            subset_size=subset_size,
            decoding_bank=decoding_bank,
            batch_size=batch_size,
            reasoning=resolve_reasoning(model=model, requested=reasoning),
        )

    @classmethod
    def from_model(
        cls,
        *,
        model: Any,
        tokenizer: Any,
        name: str = "hf:in-memory",
        max_new_tokens: int = MAX_NEW_TOKENS,
        subset_size: int = SUBSET_SIZE,
        decoding_bank: Sequence[DecodingConfig] = DECODING_BANK,
        batch_size: int = DEFAULT_K,
        reasoning: str = "auto",
    ) -> HFGenerator:
        """Wrap an already loaded model and tokenizer (e.g. straight after training).

        Example:
            >>> gen = HFGenerator.from_model(model=lm, tokenizer=tok)  # doctest: +SKIP
        """
        self = cls.__new__(cls)
        self._setup(
            model=model,
            tokenizer=tokenizer,
            name=name,
            max_new_tokens=max_new_tokens,
            subset_size=subset_size,
            decoding_bank=decoding_bank,
            batch_size=batch_size,
            reasoning=resolve_reasoning(
                model=str(getattr(getattr(model, "config", None), "_name_or_path", "") or name), requested=reasoning
            ),
        )
        return self

    def _setup(
        self,
        *,
        model: Any,
        tokenizer: Any,
        name: str,
        max_new_tokens: int,
        subset_size: int,
        decoding_bank: Sequence[DecodingConfig],
        batch_size: int,
        reasoning: ReasoningChoice = PAPER_PROMPT,
    ) -> None:
        check_budget(reasoning, max_new_tokens=max_new_tokens)
        if not decoding_bank:
            raise ValueError("decoding_bank must not be empty")
        if max_new_tokens < 1 or subset_size < 1 or batch_size < 1:
            raise ValueError("max_new_tokens, subset_size and batch_size must be >= 1")
        self.name = name
        self.model = model
        self.tokenizer = ensure_chat_template(tokenizer)
        if self.tokenizer.pad_token is None:
            self.tokenizer.pad_token = self.tokenizer.eos_token
        self.max_new_tokens = max_new_tokens
        self.subset_size = subset_size
        self.decoding_bank = tuple(decoding_bank)
        self.batch_size = batch_size
        self.reasoning = reasoning
        self.attention = getattr(getattr(model, "config", None), "_attn_implementation", None)

    def decoding_config(self, index: int) -> DecodingConfig:
        """θ_i: the bank entry candidate ``index`` decodes with."""
        return self.decoding_bank[index % len(self.decoding_bank)]

    def generate(
        self, claim: str, evidence: Sequence[Passage], *, k: int = DEFAULT_K, seed: int = 0
    ) -> GenerationResult:
        """Decode k candidates for ``claim`` from the evidence pool E(c).

        Args:
            claim: The claim text.
            evidence: The fused evidence pool E(c) (may be empty: the prompt then says
                no evidence was retrieved).
            k: Number of candidates (16 in the paper).
            seed: Seeds the evidence subsets and the sampling; same seed, same model,
                same device → same candidates.

        Returns:
            The parsed candidates (in bank order; an unparseable output becomes an
            Uncertain candidate without rationale or citations) and the count of
            unparseable outputs.
        """
        passage_sets, prompts, configs = self._prompts(claim, evidence, k=k, seed=seed)
        return self._parse(self._sample(prompts=prompts, configs=configs, seed=seed), passage_sets)

    def generate_many(
        self, requests: Sequence[tuple[str, Sequence[Passage], int]], *, seeds: Sequence[int], batch_seed: int
    ) -> list[GenerationResult]:
        """Decode the k candidates of several claims in one batch (``requests``: claim, evidence, k).

        Each claim's evidence subsets are drawn with its own seed (``seeds``, as
        :meth:`generate` does); the sampling of the whole batch is seeded once with
        ``batch_seed``, so a claim's candidates depend on the batch it was decoded in (a
        caller that needs them reproducible keeps its batches fixed).
        """
        built = [self._prompts(claim, evidence, k=k, seed=seed)
                 for (claim, evidence, k), seed in zip(requests, seeds, strict=True)]
        prompts = [p for _, ps, _ in built for p in ps]
        configs = [c for _, _, cs in built for c in cs]
        outputs = self._sample(prompts=prompts, configs=configs, seed=batch_seed, batch_size=len(prompts))
        results, start = [], 0
        for passage_sets, ps, _ in built:
            results.append(self._parse(outputs[start:start + len(ps)], passage_sets))
            start += len(ps)
        return results

    def _prompts(self, claim: str, evidence: Sequence[Passage], *, k: int, seed: int
                 ) -> tuple[list[tuple[Passage, ...]], list[str], list[DecodingConfig]]:
        subsets = sample_evidence_subsets(n_passages=len(evidence), k=k, seed=seed, subset_size=self.subset_size)
        passage_sets = [tuple(evidence[i] for i in subset) for subset in subsets]
        prompts = [
            render_prompt(tokenizer=self.tokenizer, claim=claim, passages=ps, system=self.reasoning.system)
            for ps in passage_sets
        ]
        return passage_sets, prompts, [self.decoding_config(i) for i in range(k)]

    def _parse(self, outputs: Sequence[RawOutput], passage_sets: Sequence[tuple[Passage, ...]]) -> GenerationResult:
        candidates: list[Candidate] = []
        n_malformed = 0
        for index, (output, passages) in enumerate(zip(outputs, passage_sets, strict=True)):
            try:
                candidates.append(
                    parse_candidate(
                        output.text,
                        passages=passages,
                        mean_logprob=output.mean_logprob,
                        config_index=index % len(self.decoding_bank),
                    )
                )
            except MalformedOutputError:
                n_malformed += 1
                candidates.append(Candidate(
                    label="Uncertain", rationale="", citations=(), passages=passages,
                    mean_logprob=output.mean_logprob, config_index=index % len(self.decoding_bank),
                    raw_text=output.text,
                ))
        return GenerationResult(candidates=tuple(candidates), n_malformed=n_malformed)

    def _sample(
        self, *, prompts: Sequence[str], configs: Sequence[DecodingConfig], seed: int, batch_size: int | None = None
    ) -> list[RawOutput]:
        """Decode every prompt with its configuration, in batches (``batch_size``, default the
        generator's); seeded."""
        import torch

        device = next(self.model.parameters()).device
        devices = [device] if device.type == "cuda" else []
        outputs: list[RawOutput] = []
        with torch.random.fork_rng(devices=devices), torch.inference_mode():
            torch.manual_seed(seed)
            step = batch_size or self.batch_size
            for start in range(0, len(prompts), step):
                chunk = slice(start, start + step)
                outputs.extend(self._sample_batch(prompts[chunk], configs[chunk], device))
        return outputs

    def _sample_batch(
        self, prompts: Sequence[str], configs: Sequence[DecodingConfig], device: Any
    ) -> list[RawOutput]:
        import torch
        from transformers import GenerationConfig, LogitsProcessorList

        tok = self.tokenizer
        # Decoder-only batches are padded on the left so every row ends at the prompt.
        padding_side, tok.padding_side = tok.padding_side, "left"
        try:
            enc = tok(list(prompts), return_tensors="pt", padding=True, add_special_tokens=False)
        finally:
            tok.padding_side = padding_side
        enc = {key: value.to(device) for key, value in enc.items() if key in ("input_ids", "attention_mask")}
        eos_ids = self._eos_ids()
        generation_config = GenerationConfig(
            do_sample=True,
            temperature=1.0,
            top_p=1.0,
            top_k=0,
            max_new_tokens=self.max_new_tokens,
            pad_token_id=tok.pad_token_id,
            eos_token_id=eos_ids,
        )
        processor = PerRowTemperatureTopP(
            temperatures=[c.temperature for c in configs], top_ps=[c.top_p for c in configs]
        )
        # Raw (unwarped) logits: the model's own log-probability of what it wrote, comparable
        # across decoding configurations; recorded per step for the sampled token only.
        recorder = ChosenTokenLogprobs()
        sequences = self.model.generate(
            **enc,
            generation_config=generation_config,
            logits_processor=LogitsProcessorList([recorder, processor]),
        )
        prompt_len = enc["input_ids"].shape[1]
        generated = sequences[:, prompt_len:]
        if generated.shape[1] == 0:
            return [RawOutput(text="", mean_logprob=None) for _ in prompts]
        token_logprobs = recorder.finish(sequences).to(generated.device)
        is_eos = torch.zeros_like(generated, dtype=torch.bool)
        for eos in eos_ids:
            is_eos |= generated == eos
        # A token counts if no end-of-sequence token came before it (the EOS itself counts).
        ended_before = (is_eos.cumsum(dim=1) - is_eos.long()) > 0
        valid = ~ended_before
        results = []
        for row in range(generated.shape[0]):
            n_valid = int(valid[row].sum())
            mean = float(token_logprobs[row][valid[row]].mean()) if n_valid else None
            tokens = generated[row][valid[row] & ~is_eos[row]]
            text = tok.decode(tokens, skip_special_tokens=True).strip()
            results.append(RawOutput(text=text, mean_logprob=mean))
        return results

    def _eos_ids(self) -> list[int]:
        configured = getattr(self.model.generation_config, "eos_token_id", None)
        ids: list[int] = []
        if isinstance(configured, int):
            ids.append(configured)
        elif isinstance(configured, (list, tuple)):
            ids.extend(int(i) for i in configured)
        if self.tokenizer.eos_token_id is not None and self.tokenizer.eos_token_id not in ids:
            ids.append(int(self.tokenizer.eos_token_id))
        if not ids:
            raise UserError(f"{self.name}: the tokenizer has no end-of-sequence token")
        return ids


__all__ = [
    "DECODING_BANK",
    "DEFAULT_K",
    "MAX_NEW_TOKENS",
    "SUBSET_SIZE",
    "DecodingConfig",
    "HFGenerator",
    "MalformedOutputError",
    "PerRowTemperatureTopP",
    "RawOutput",
    "load_causal_lm",
    "parse_candidate",
    "sample_evidence_subsets",
    "select_device_dtype",
]
