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

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from averitec_tools.baselines.r2vc.prompt import ensure_chat_template, render_prompt
from averitec_tools.baselines.r2vc.types import (
    R2VC_LABELS,
    Candidate,
    GenerationResult,
    Passage,
)
from averitec_tools.errors import ResourceError, UserError


@dataclass(frozen=True)
class DecodingConfig:
    """One decoding configuration θ_i of the bank.

    Attributes:
        temperature: Softmax temperature (> 0).
        top_p: Nucleus-sampling mass in (0, 1].
    """

    temperature: float
    top_p: float


#: The fixed bank of 16 (temperature, top-p) configurations (Table G.1: "16 temperature
#: and top-p settings"; the paper does not list the values, these are ours). Ordered from
#: the most conservative, so that k < 16 (e.g. the single-candidate ablation) uses the
#: least random configurations first.
DECODING_BANK: tuple[DecodingConfig, ...] = tuple(
    DecodingConfig(temperature=t, top_p=p)
    for t in (0.3, 0.5, 0.7, 1.0)
    for p in (0.8, 0.9, 0.95, 1.0)
)

#: Passages per candidate subset (Table G.1 "Passages sampled per candidate").
SUBSET_SIZE = 16
#: Candidates per claim (Table G.1 "Rejection-sampling candidates k").
DEFAULT_K = 16
#: Table G.1 "Max new tokens".
MAX_NEW_TOKENS = 160


class MalformedOutputError(ValueError):
    """A generator output that has no recognisable R2VC label."""


# ----------------------------------------------------------------------------- parsing

_LABEL_WORDS = (
    r"true|false|uncertain|supports?|supported|refutes?|refuted|nei|"
    r"not[\s_-]+enough[\s_-]+(?:info(?:rmation)?|evidence)"
)
_LEADING_LABEL = re.compile(rf"""^\W*({_LABEL_WORDS})\b[\s.:;,!\-–—)*_"']*(.*)$""", re.I | re.S)
_KEYED_LABEL = re.compile(rf"^\W*(?:label|verdict|answer)\W*[:=]\W*({_LABEL_WORDS})\b", re.I | re.M)
_KEYED_RATIONALE = re.compile(
    r"^\W*(?:rationale|justification|explanation|reason)\W*[:=]\s*(.*?)"
    r"(?=^\W*(?:citations?|label|verdict)\W*[:=]|\Z)",
    re.I | re.M | re.S,
)
_KEYED_CITATIONS = re.compile(r"^\W*citations?\W*[:=]\s*(.*)$", re.I | re.M)
_CITATION_MARK = re.compile(r"\[\s*(\d+(?:\s*[,;]\s*\d+)*)\s*\]")
_INTEGER = re.compile(r"\d+")
_CODE_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$", re.M)
_WS = re.compile(r"\s+")


def _normalise_label(word: str) -> str | None:
    from averitec_tools.labels import map_label

    try:
        return map_label(_WS.sub(" ", word.strip()), source="ternary", target="r2vc")
    except UserError:
        return None


def _citation_numbers(text: str) -> list[int]:
    numbers: list[int] = []
    for mark in _CITATION_MARK.finditer(text):
        numbers.extend(int(n) for n in _INTEGER.findall(mark.group(1)))
    return numbers


def _clean_rationale(text: str) -> str:
    text = _CITATION_MARK.sub("", text)
    text = re.sub(r"\s+([.,;:!?])", r"\1", text)
    return _WS.sub(" ", text).strip()


def _from_json(text: str) -> tuple[str, str, list[int]] | None:
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        obj = json.loads(text[start : end + 1])
    except json.JSONDecodeError:
        return None
    if not isinstance(obj, dict):
        return None
    lowered = {str(k).lower(): v for k, v in obj.items()}
    raw_label = next(
        (lowered[k] for k in ("label", "verdict", "answer") if isinstance(lowered.get(k), str)), None
    )
    label = _normalise_label(raw_label) if raw_label is not None else None
    if label is None:
        return None
    rationale = next(
        (
            str(lowered[k])
            for k in ("rationale", "justification", "explanation", "reason")
            if k in lowered
        ),
        "",
    )
    raw_cites = lowered.get("citations", lowered.get("citation", []))
    if isinstance(raw_cites, (int, str)):
        raw_cites = [raw_cites]
    numbers: list[int] = []
    if isinstance(raw_cites, list):
        for item in raw_cites:
            if isinstance(item, bool):
                continue
            if isinstance(item, int):
                numbers.append(item)
            elif isinstance(item, str):
                numbers.extend(int(n) for n in _INTEGER.findall(item))
    numbers.extend(_citation_numbers(rationale))
    return label, rationale, numbers


def _from_keyed(text: str) -> tuple[str, str, list[int]] | None:
    match = _KEYED_LABEL.search(text)
    if match is None:
        return None
    label = _normalise_label(match.group(1))
    if label is None:
        return None
    rationale_match = _KEYED_RATIONALE.search(text)
    if rationale_match:
        rationale = rationale_match.group(1)
    else:  # "Answer: True. Because …": the rationale follows the label
        rest = text[match.end() :]
        cites_line = _KEYED_CITATIONS.search(rest)
        rationale = (rest[: cites_line.start()] if cites_line else rest).lstrip(" .:;,-–—*_\"'")
    numbers = _citation_numbers(rationale)
    cites_match = _KEYED_CITATIONS.search(text)
    if cites_match:
        numbers.extend(int(n) for n in _INTEGER.findall(cites_match.group(1)))
    return label, rationale, numbers


def _from_leading_label(text: str) -> tuple[str, str, list[int]] | None:
    match = _LEADING_LABEL.match(text)
    if match is None:
        return None
    label = _normalise_label(match.group(1))
    if label is None:
        return None
    rest = match.group(2)
    return label, rest, _citation_numbers(rest)


def parse_candidate(
    text: str,
    *,
    passages: Sequence[Passage],
    mean_logprob: float | None = None,
    config_index: int = 0,
) -> Candidate:
    """Parse one generator output into a :class:`Candidate`.

    The canonical format (what the prompt asks for and SFT/DPO targets use, see
    :func:`averitec_tools.baselines.r2vc.prompt.format_response`) is
    ``"{Label}. {rationale} [1, 3]."``. Also accepted, in this order of preference:

    * a JSON object ``{"label": ..., "rationale": ..., "citations": [1, 3]}``;
    * keyed lines ``Label: … / Rationale: … / Citations: [1, 3]`` (``Verdict``,
      ``Justification``, ``Explanation`` are synonyms);
    * a leading label word (canonical format; case-insensitive).

    Labels are read case-insensitively, with FEVER-style synonyms (``SUPPORTS``,
    ``Refuted``, ``NEI``, ``Not enough info``) mapped to True/False/Uncertain.
    Citations are the 1-based passage numbers written as ``[n]``/``[n, m]`` markers
    (or listed under ``Citations:``); they are stored 0-based, de-duplicated in order
    of first mention. Numbers outside ``1..len(passages)`` cite nothing and are
    dropped (the verifier's citation score sees an uncited rationale). Citation
    markers are removed from the stored rationale.

    Args:
        text: The raw decoded output (the assistant turn only).
        passages: The evidence subset S_i the prompt numbered.
        mean_logprob: Mean token log-probability of ``text``, if known.
        config_index: Index of the decoding configuration in the bank.

    Returns:
        The parsed candidate, with ``raw_text=text``.

    Raises:
        MalformedOutputError: if no True/False/Uncertain label can be found.

    Example:
        >>> p = [Passage(doc_id=str(i), title="T", url="", text="x") for i in range(3)]
        >>> c = parse_candidate("False. Because it opened in 1932 [2, 9].", passages=p)
        >>> (c.label, c.rationale, c.citations)
        ('False', 'Because it opened in 1932.', (1,))
        >>> parse_candidate('{"label": "SUPPORTS", "rationale": "r", "citations": [1]}',
        ...                 passages=p).citations
        (0,)
    """
    stripped = _CODE_FENCE.sub("", text).strip()
    parsed = None
    if stripped:
        parsed = _from_json(stripped) or _from_keyed(stripped) or _from_leading_label(stripped)
    if parsed is None:
        preview = _WS.sub(" ", text.strip())[:80]
        raise MalformedOutputError(f"no True/False/Uncertain label in generator output {preview!r}")
    label, rationale, numbers = parsed
    assert label in R2VC_LABELS
    citations: list[int] = []
    for number in numbers:
        index = number - 1
        if 0 <= index < len(passages) and index not in citations:
            citations.append(index)
    return Candidate(
        label=label,
        rationale=_clean_rationale(rationale),
        citations=tuple(citations),
        passages=tuple(passages),
        mean_logprob=mean_logprob,
        config_index=config_index,
        raw_text=text,
    )


# ----------------------------------------------------------------------------- sampling


def sample_evidence_subsets(
    *, n_passages: int, k: int, seed: int, subset_size: int = SUBSET_SIZE
) -> list[tuple[int, ...]]:
    """Draw the k random evidence subsets S_i (indices into E(c)), each of size min(s, |E|).

    Each subset is an independent draw without replacement, in random order (the order
    the prompt numbers the passages in), so even when |E| ≤ s the candidates see
    different evidence orders.

    Args:
        n_passages: |E(c)|, the size of the fused evidence pool.
        k: Number of candidates.
        seed: Seed of the draw; the same seed gives the same subsets.
        subset_size: s, passages per candidate (16 in the paper).

    Returns:
        ``k`` tuples of distinct indices in ``range(n_passages)``.

    Example:
        >>> subsets = sample_evidence_subsets(n_passages=24, k=3, seed=0)
        >>> [len(s) for s in subsets]
        [16, 16, 16]
        >>> sample_evidence_subsets(n_passages=2, k=2, seed=0, subset_size=16) in (
        ...     [(0, 1), (0, 1)], [(0, 1), (1, 0)], [(1, 0), (0, 1)], [(1, 0), (1, 0)])
        True
    """
    import numpy as np

    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    if subset_size < 1:
        raise ValueError(f"subset_size must be >= 1, got {subset_size}")
    rng = np.random.default_rng(seed)
    size = min(subset_size, n_passages)
    return [
        tuple(int(i) for i in rng.choice(n_passages, size=size, replace=False)) for _ in range(k)
    ]


class PerRowTemperatureTopP:
    """Logits processor applying a different temperature and top-p to each batch row.

    Transformers' own warpers take one scalar per ``generate`` call; this one lets the
    k candidates of a claim, each with its own θ_i, share a single batched call. The
    top-p rule is the same as ``transformers.TopPLogitsWarper`` (keep the smallest set
    of tokens whose probability mass reaches ``top_p``, at least one token).

    Args:
        temperatures: One temperature per batch row (> 0).
        top_ps: One top-p per batch row, in (0, 1].

    Example:
        >>> import torch
        >>> proc = PerRowTemperatureTopP(temperatures=[1.0, 0.5], top_ps=[1.0, 0.5])
        >>> out = proc(None, torch.tensor([[2.0, 1.0, 0.0], [2.0, 1.0, 0.0]]))
        >>> out[0].tolist(), torch.isinf(out[1]).tolist()
        ([2.0, 1.0, 0.0], [False, True, True])
    """

    def __init__(self, *, temperatures: Sequence[float], top_ps: Sequence[float]) -> None:
        import torch

        if len(temperatures) != len(top_ps):
            raise ValueError("temperatures and top_ps must have the same length")
        if any(t <= 0 for t in temperatures):
            raise ValueError(f"temperatures must be > 0, got {list(temperatures)}")
        if any(not 0 < p <= 1 for p in top_ps):
            raise ValueError(f"top_ps must be in (0, 1], got {list(top_ps)}")
        self.temperatures = torch.tensor(list(temperatures), dtype=torch.float32)
        self.top_ps = torch.tensor(list(top_ps), dtype=torch.float32)

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        import torch

        temps = self.temperatures.to(device=scores.device, dtype=scores.dtype)
        top_ps = self.top_ps.to(device=scores.device, dtype=torch.float32)
        scores = scores / temps[:, None]
        sorted_logits, sorted_idx = torch.sort(scores, descending=False, dim=-1)
        cumulative = sorted_logits.float().softmax(dim=-1).cumsum(dim=-1)
        remove_sorted = cumulative <= (1 - top_ps)[:, None]
        remove_sorted[:, -1] = False
        remove = remove_sorted.scatter(1, sorted_idx, remove_sorted)
        return scores.masked_fill(remove, float("-inf"))


# ----------------------------------------------------------------------------- loading


def _offline_env() -> bool:
    return any(
        os.environ.get(var, "").lower() in {"1", "true", "yes", "on"}
        for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
    )


def select_device_dtype(*, device: str = "auto", dtype: str = "auto") -> tuple[str, Any]:
    """Resolve ``"auto"``: CUDA with bf16 when available, CPU with fp32 otherwise.

    Args:
        device: ``"auto"``, ``"cpu"``, ``"cuda"``, ``"cuda:1"``, ...
        dtype: ``"auto"``, ``"bfloat16"``, ``"float16"`` or ``"float32"``.

    Returns:
        ``(device, torch.dtype)``.

    Raises:
        UserError: for an unknown dtype, or CUDA requested where none is available.

    Example:
        >>> import torch
        >>> select_device_dtype(device="cpu", dtype="auto") == ("cpu", torch.float32)
        True
    """
    import torch

    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise UserError(f"device {device!r} requested but CUDA is not available", hint="use --device cpu")
    dtypes = {"bfloat16": torch.bfloat16, "float16": torch.float16, "float32": torch.float32}
    if dtype == "auto":
        return device, (torch.bfloat16 if device.startswith("cuda") else torch.float32)
    if dtype not in dtypes:
        raise UserError(f"unknown dtype {dtype!r}", hint=f"use one of: auto, {', '.join(dtypes)}")
    return device, dtypes[dtype]


def load_causal_lm(
    model_id: str,
    *,
    device: str | None = "cpu",
    dtype: Any = None,
    local_files_only: bool | None = None,
    trust_remote_code: bool = False,
    model_kwargs: dict[str, Any] | None = None,
) -> tuple[Any, Any]:
    """Load a causal LM and its tokenizer from a local path or hub id, failing clearly offline.

    Local files (a directory, or the hub cache) are tried first with
    ``local_files_only=True``, which never touches the network. Only if that fails and
    downloads are allowed (``local_files_only`` false, or ``None`` with neither
    ``HF_HUB_OFFLINE`` nor ``TRANSFORMERS_OFFLINE`` set) is the hub tried.

    Args:
        model_id: Hub id (``nvidia/Llama-3.1-Nemotron-Nano-8B-v1``) or local directory.
        device: Torch device to move the model to (``None``: leave it where it loads).
        dtype: Torch dtype of the weights (``None``: the checkpoint's).
        local_files_only: Never download (``None``: follow the offline env variables).
        trust_remote_code: Passed to ``from_pretrained``.
        model_kwargs: Extra ``from_pretrained`` arguments (e.g. ``attn_implementation``).

    Returns:
        ``(model, tokenizer)``, the model in eval mode.

    Raises:
        ResourceError: if the model cannot be found or loaded, saying how to fix it.

    Example:
        >>> try:
        ...     load_causal_lm("/nonexistent/model", local_files_only=True)
        ... except ResourceError as exc:
        ...     print(str(exc).split(":")[0])
        cannot load causal LM '/nonexistent/model'
    """
    from transformers import AutoModelForCausalLM, AutoTokenizer

    offline = _offline_env() if local_files_only is None else local_files_only
    path = Path(model_id).expanduser()
    looks_local = path.exists() or model_id.startswith((".", "/", "~"))
    if looks_local and not (path / "config.json").exists():
        raise ResourceError(
            f"cannot load causal LM {model_id!r}: no config.json in that directory",
            hint="pass a directory saved with save_pretrained() or a hub id",
        )
    kwargs: dict[str, Any] = {"trust_remote_code": trust_remote_code}
    source = str(path) if looks_local else model_id
    attempts = [True] if (offline or looks_local) else [True, False]
    last_error: Exception | None = None
    for local_only in attempts:
        try:
            tokenizer = AutoTokenizer.from_pretrained(source, local_files_only=local_only, **kwargs)
            model: Any = AutoModelForCausalLM.from_pretrained(
                source, local_files_only=local_only, dtype=dtype, **kwargs, **(model_kwargs or {})
            )
        except (OSError, ValueError, KeyError) as exc:
            last_error = exc
            continue
        if device is not None:
            model.to(device)
        model.eval()
        return model, tokenizer
    reason = str(last_error).splitlines()[0] if last_error else "unknown error"
    hint = (
        "download it first on a machine with internet (huggingface-cli download ID) or "
        "pass a local directory; offline mode is on (HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE "
        "or local_files_only)"
        if offline
        else "check the model id and your network / HF token"
    )
    raise ResourceError(f"cannot load causal LM {model_id!r}: {reason}", hint=hint)


# ----------------------------------------------------------------------------- generator


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
    ) -> None:
        resolved_device, torch_dtype = select_device_dtype(device=device, dtype=dtype)
        lm, tokenizer = load_causal_lm(
            model,
            device=resolved_device,
            dtype=torch_dtype,
            local_files_only=local_files_only,
            trust_remote_code=trust_remote_code,
        )
        self._setup(
            model=lm,
            tokenizer=tokenizer,
            name=f"hf:{model}",
            max_new_tokens=max_new_tokens,
            subset_size=subset_size,
            decoding_bank=decoding_bank,
            batch_size=batch_size,
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
    ) -> None:
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
        subsets = sample_evidence_subsets(
            n_passages=len(evidence), k=k, seed=seed, subset_size=self.subset_size
        )
        passage_sets = [tuple(evidence[i] for i in subset) for subset in subsets]
        prompts = [
            render_prompt(tokenizer=self.tokenizer, claim=claim, passages=ps)
            for ps in passage_sets
        ]
        configs = [self.decoding_config(i) for i in range(k)]
        outputs = self._sample(prompts=prompts, configs=configs, seed=seed)
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
        self, *, prompts: Sequence[str], configs: Sequence[DecodingConfig], seed: int
    ) -> list[RawOutput]:
        """Decode every prompt with its configuration, in batches; seeded."""
        import torch

        device = next(self.model.parameters()).device
        devices = [device] if device.type == "cuda" else []
        outputs: list[RawOutput] = []
        with torch.random.fork_rng(devices=devices), torch.inference_mode():
            torch.manual_seed(seed)
            for start in range(0, len(prompts), self.batch_size):
                chunk = slice(start, start + self.batch_size)
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
            return_dict_in_generate=True,
            output_logits=True,
        )
        processor = PerRowTemperatureTopP(
            temperatures=[c.temperature for c in configs], top_ps=[c.top_p for c in configs]
        )
        out = self.model.generate(
            **enc,
            generation_config=generation_config,
            logits_processor=LogitsProcessorList([processor]),
        )
        prompt_len = enc["input_ids"].shape[1]
        generated = out.sequences[:, prompt_len:]
        if generated.shape[1] == 0:
            return [RawOutput(text="", mean_logprob=None) for _ in prompts]
        # Raw (unwarped) logits: the model's own log-probability of what it wrote,
        # comparable across decoding configurations.
        logits = torch.stack(out.logits, dim=1).float()
        token_logprobs = logits.log_softmax(dim=-1).gather(-1, generated[..., None])[..., 0]
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
