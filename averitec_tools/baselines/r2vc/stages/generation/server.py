"""The R2VC generator decoded through an OpenAI-compatible server (vLLM serving the trained checkpoint).

:class:`ServerGenerator` is :class:`~averitec_tools.baselines.r2vc.stages.generation.generator.HFGenerator`
with its sampling sent to a ``/v1/completions`` endpoint instead of a local ``generate``:
the same evidence subsets, the same prompt text (rendered here with the checkpoint's own
tokenizer and chat template, reasoning switch included), the same parsing. Each candidate
is one request with its own θ_i (``temperature``, ``top_p``), ``max_tokens`` (Table G.1's
160), a per-request ``seed`` derived from the claim's and ``logprobs`` (the sampled tokens'
log-probabilities; their mean is the candidate's ``mean_logprob``); identical requests
(same prompt and θ, e.g. k above the bank's size) are sent once with ``n``. All requests of
a claim, or of a batch of claims (``generate_many``), run concurrently, so the server's
continuous batching fills the GPU.

What matches local decoding and what may not:

* vLLM's V1 engine returns log-probabilities of the **raw** logits (its ``logprobs_mode``
  default ``raw_logprobs``), as local decoding records them; a server returning the
  processed (temperature/top-p) distribution gives other ``mean_logprob`` values.
* A server's random stream is not torch's: the same seed gives other candidates than
  local decoding (each is reproducible against the same server, engine and seed).

Transient failures (HTTP 408/429/5xx, a refused or reset connection, a timeout) are retried
with backoff; anything else, or a reply that is not a completion, is a one-line
:class:`~averitec_tools.errors.UserError` naming the endpoint. A reply is read up to
:data:`MAX_REPLY_BYTES`. The API key, if any, comes from an environment variable.

Example:
    >>> gen = ServerGenerator.from_tokenizer(url="http://127.0.0.1:8000/v1", model="ckpt",
    ...                                      tokenizer=tok)  # doctest: +SKIP
    >>> gen.generate("Paris is in France.", passages, k=16, seed=0).candidates[0].label  # doctest: +SKIP
    'True'
"""

from __future__ import annotations

import http.client
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from averitec_tools.baselines.r2vc.stages.generation.decoding import (
    DECODING_BANK,
    MAX_NEW_TOKENS,
    DecodingConfig,
)
from averitec_tools.baselines.r2vc.stages.generation.generator import HFGenerator, RawOutput
from averitec_tools.baselines.r2vc.stages.generation.reasoning import resolve_reasoning
from averitec_tools.baselines.r2vc.stages.generation.sampling import DEFAULT_K, SUBSET_SIZE
from averitec_tools.errors import UserError

#: The most bytes of one reply read (16 candidates × 160 tokens with log-probabilities: ~0.5 MB).
MAX_REPLY_BYTES = 8 << 20
#: Environment variable holding the server's API key (sent as a bearer token when set).
API_KEY_ENV = "AVERITEC_GENERATOR_API_KEY"
#: HTTP statuses worth another try (the server is busy or restarting).
RETRYABLE_STATUS = frozenset({408, 429, 500, 502, 503, 504})


def completions_url(url: str) -> str:
    """The completions endpoint for a base URL (``.../v1`` or the full endpoint).

    Example:
        >>> completions_url("http://127.0.0.1:8000/v1/")
        'http://127.0.0.1:8000/v1/completions'
    """
    url = url.rstrip("/")
    return url if url.endswith("/completions") else url + "/completions"


class ServerGenerator(HFGenerator):
    """R2VC candidates decoded by an OpenAI-compatible server (module docs).

    Args:
        url: The server's base URL (``http://host:8000/v1``) or its ``/completions`` endpoint.
        model: The served model name (vLLM: the checkpoint path it was started with, or
            ``--served-model-name``); also where the tokenizer is loaded from unless ``tokenizer``
            names another place.
        tokenizer: Hub id or directory of the checkpoint's tokenizer (default: ``model``).
        concurrency: Requests in flight at once.
        timeout: Seconds one request may take.
        retries: Further tries of a transient failure (backoff ``backoff``, doubling).
        backoff: Seconds before the first retry.
        max_new_tokens, subset_size, decoding_bank, batch_size, reasoning: as
            :class:`~averitec_tools.baselines.r2vc.stages.generation.generator.HFGenerator`.
    """

    def __init__(self, *, url: str, model: str, tokenizer: str | None = None, concurrency: int = 64,
                 timeout: float = 300.0, retries: int = 3, backoff: float = 2.0,
                 max_new_tokens: int = MAX_NEW_TOKENS, subset_size: int = SUBSET_SIZE,
                 decoding_bank: Sequence[DecodingConfig] = DECODING_BANK, batch_size: int = DEFAULT_K,
                 reasoning: str = "auto", local_files_only: bool | None = None) -> None:
        from averitec_tools.baselines.r2vc.stages.generation.lm_loading import load_tokenizer

        self._connect(url=url, model=model, concurrency=concurrency, timeout=timeout, retries=retries,
                      backoff=backoff)
        self._setup(model=None, tokenizer=load_tokenizer(tokenizer or model, local_files_only=local_files_only),
                    name=f"server:{model}", max_new_tokens=max_new_tokens, subset_size=subset_size,
                    decoding_bank=decoding_bank, batch_size=batch_size,
                    reasoning=resolve_reasoning(model=model, requested=reasoning))

    @classmethod
    def from_tokenizer(cls, *, url: str, model: str, tokenizer: Any, reasoning: str = "auto",
                       max_new_tokens: int = MAX_NEW_TOKENS, subset_size: int = SUBSET_SIZE,
                       decoding_bank: Sequence[DecodingConfig] = DECODING_BANK, **connection: Any) -> ServerGenerator:
        """A server generator with an already loaded tokenizer (``connection``: ``concurrency``,
        ``timeout``, ``retries``, ``backoff``)."""
        self = cls.__new__(cls)
        self._connect(url=url, model=model, **connection)
        self._setup(model=None, tokenizer=tokenizer, name=f"server:{model}", max_new_tokens=max_new_tokens,
                    subset_size=subset_size, decoding_bank=decoding_bank, batch_size=DEFAULT_K,
                    reasoning=resolve_reasoning(model=model, requested=reasoning))
        return self

    def _connect(self, *, url: str, model: str, concurrency: int = 64, timeout: float = 300.0, retries: int = 3,
                 backoff: float = 2.0) -> None:
        if concurrency < 1 or retries < 0 or timeout <= 0 or backoff < 0:
            raise ValueError("concurrency must be >= 1, retries >= 0, timeout > 0 and backoff >= 0")
        self.endpoint, self.served_model = completions_url(url), model
        self.concurrency, self.timeout, self.retries, self.backoff = concurrency, timeout, retries, backoff
        self.n_requests = 0

    def request_body(self, prompt: str, config: DecodingConfig, *, n: int, seed: int) -> dict[str, Any]:
        """The JSON body of one request.

        Example:
            >>> gen = ServerGenerator.__new__(ServerGenerator)
            >>> gen._connect(url="http://h/v1", model="m"); gen.max_new_tokens = 160
            >>> body = gen.request_body("P", DecodingConfig(temperature=0.3, top_p=0.9), n=2, seed=7)
            >>> [body[k] for k in ("n", "temperature", "top_p", "max_tokens", "logprobs", "seed")]
            [2, 0.3, 0.9, 160, 1, 7]
        """
        return {"model": self.served_model, "prompt": prompt, "n": n, "temperature": config.temperature,
                "top_p": config.top_p, "top_k": -1, "max_tokens": self.max_new_tokens, "logprobs": 1, "seed": seed,
                "skip_special_tokens": True}

    def _sample(self, *, prompts: Sequence[str], configs: Sequence[DecodingConfig], seed: int,
                batch_size: int | None = None) -> list[RawOutput]:
        """Every prompt decoded with its configuration, identical requests merged into one with ``n``."""
        groups: dict[tuple[str, DecodingConfig], list[int]] = {}
        for index, key in enumerate(zip(prompts, configs, strict=True)):
            groups.setdefault(key, []).append(index)
        # a group's seed: the claim's (or the batch's) and its first candidate's index
        bodies = [self.request_body(prompt, config, n=len(rows), seed=(seed * 1_000_003 + rows[0]) % 2**31)
                  for (prompt, config), rows in groups.items()]
        outputs: list[RawOutput] = [RawOutput(text="", mean_logprob=None)] * len(prompts)
        with ThreadPoolExecutor(max_workers=min(self.concurrency, max(len(bodies), 1))) as pool:
            replies = pool.map(lambda body: self._complete(body, n=body["n"]), bodies)
            for rows, choices in zip(groups.values(), replies, strict=True):
                for row, output in zip(rows, choices, strict=True):
                    outputs[row] = output
        return outputs

    def _complete(self, body: dict[str, Any], *, n: int) -> list[RawOutput]:
        """One request's ``n`` completions, retried while the failure is transient."""
        wait = self.backoff
        for attempt in range(self.retries + 1):
            try:
                return _choices(self._post(body), n=n, endpoint=self.endpoint)
            except _Transient as exc:
                if attempt == self.retries:
                    raise UserError(f"decoding server {self.endpoint}: {exc} (after {attempt + 1} tries)",
                                    hint="is the server up and serving the model? (vllm serve CHECKPOINT)") from None
                time.sleep(wait)
                wait *= 2
        raise AssertionError("unreachable")  # pragma: no cover

    def _post(self, body: dict[str, Any]) -> Any:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(API_KEY_ENV)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.endpoint, data=json.dumps(body).encode("utf-8"), headers=headers,
                                         method="POST")
        self.n_requests += 1
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read(MAX_REPLY_BYTES + 1)
        except urllib.error.HTTPError as exc:
            detail = " ".join(exc.read(2000).decode("utf-8", "replace").split())[:200]
            if exc.code in RETRYABLE_STATUS:
                raise _Transient(f"HTTP {exc.code}") from None
            raise UserError(f"decoding server {self.endpoint} refused the request: HTTP {exc.code} {exc.reason}"
                            + (f" ({detail})" if detail else ""),
                            hint=f"check generator.model (the served name) and ${API_KEY_ENV}") from None
        except (TimeoutError, urllib.error.URLError, OSError, http.client.HTTPException) as exc:
            raise _Transient(f"{type(exc).__name__}: {getattr(exc, 'reason', exc)}") from None
        if len(raw) > MAX_REPLY_BYTES:
            raise UserError(f"decoding server {self.endpoint}: reply longer than {MAX_REPLY_BYTES} bytes")
        try:
            return json.loads(raw.decode("utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise UserError(f"decoding server {self.endpoint}: the reply is not JSON") from None


class _Transient(Exception):
    """A failure worth another try."""


def _choices(payload: Any, *, n: int, endpoint: str) -> list[RawOutput]:
    """The ``n`` completions of a reply, in ``index`` order, with their mean token log-probability.

    Example:
        >>> _choices({"choices": [{"index": 0, "text": " True. Yes [1].",
        ...                        "logprobs": {"token_logprobs": [-0.5, -1.5, None]}}]}, n=1, endpoint="e")
        [RawOutput(text='True. Yes [1].', mean_logprob=-1.0)]
    """
    choices = payload.get("choices") if isinstance(payload, dict) else None
    if not isinstance(choices, list) or len(choices) != n or not all(isinstance(c, dict) for c in choices):
        raise UserError(f"decoding server {endpoint}: expected {n} choices in the reply, got "
                        f"{len(choices) if isinstance(choices, list) else 'none'}")
    out = []
    for choice in sorted(choices, key=lambda c: c.get("index", 0) if isinstance(c.get("index"), int) else 0):
        text = choice.get("text")
        if not isinstance(text, str):
            raise UserError(f"decoding server {endpoint}: a choice has no text")
        logprobs = (choice.get("logprobs") or {}).get("token_logprobs") if isinstance(choice.get("logprobs"),
                                                                                       (dict, type(None))) else None
        values = [float(v) for v in logprobs or [] if isinstance(v, (int, float)) and not isinstance(v, bool)]
        out.append(RawOutput(text=text.strip(), mean_logprob=sum(values) / len(values) if values else None))
    return out


__all__ = ["API_KEY_ENV", "MAX_REPLY_BYTES", "ServerGenerator", "completions_url"]
