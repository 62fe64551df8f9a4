"""Ev2R judge back-ends: any OpenAI-compatible chat endpoint, or a local HF transformers model.

Both answer :meth:`Judge.complete` (one prompt in, the reply text out), by default as the
organisers call their judge: one user message, temperature 0, at most 3000 tokens
(:data:`ORGANISERS_CALL`). A temperature above 0 and a per-request seed serve repeat runs
(``averitec judge-agreement``).
HTTP errors are sorted by :func:`~averitec_tools.metrics.judge_policy.classify_http_error`:
a transient failure (HTTP 408/429/5xx, a timeout, a refused connection) raises
:class:`RetryableJudgeError`, which :mod:`averitec_tools.metrics.ev2r_runner` retries with
backoff; a refusal for the request's content (413, a 400 naming the context length)
raises :class:`~averitec_tools.metrics.judge_policy.JudgeContentRefused` (scored 0, not
retried); any other failure (a wrong key, URL or model) is a
:class:`~averitec_tools.errors.UserError`. A reply is read up to :data:`MAX_REPLY_BYTES`.
API keys come from an environment variable, never from a file.
"""

from __future__ import annotations

import http.client
import json
import os
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Protocol

from averitec_tools.errors import UserError
from averitec_tools.metrics.judge_policy import (
    CONTENT,
    INFRASTRUCTURE,
    MAX_ERROR_BYTES,
    JudgeContentRefused,
    RetryableJudgeError,
    classify_http_error,
)
from averitec_tools.registry import Registry

#: The organisers' judge (FEVER-8), by its hub id (what vLLM serves it as).
DEFAULT_JUDGE_MODEL = "meta-llama/Llama-3.3-70B-Instruct"
DEFAULT_API_KEY_ENV = "AVERITEC_JUDGE_API_KEY"
#: The leaderboard scorer's judge call (Raldir/FEVER-8-Shared-Task averitec_evaluate.py,
#: ``EV2REvaluator``): the OpenAI client against llmapi.com, these request fields and nothing else.
ORGANISERS_CALL: dict[str, object] = {
    "base_url": "https://api.llmapi.com/",
    "model": "llama3.3-70b",
    "temperature": 0,
    "max_tokens": 3000,
}
DEFAULT_MAX_TOKENS = 3000
#: The most bytes of one judge reply read (a reply of 3,000 tokens is ~12 KB).
MAX_REPLY_BYTES = 1 << 20

#: What a judge is asked: one user message's text, or its content parts in the OpenAI
#: chat format (``{"type": "text", "text": ...}``, ``{"type": "image_url", "image_url": {"url": ...}}``).
Prompt = str | tuple[dict[str, Any], ...]


class Judge(Protocol):
    """What the Ev2R runner needs from a judge."""

    backend: str
    model: str
    temperature: float
    #: How many requests may run at once (1 for an in-process model).
    max_concurrency: int

    def complete(self, prompt: Prompt, *, seed: int | None = None, max_tokens: int | None = None) -> str: ...


def chat_completions_url(url: str) -> str:
    """The chat-completions endpoint for a base URL (``.../v1`` or the full endpoint).

    Example:
        >>> chat_completions_url("http://127.0.0.1:8000/v1")
        'http://127.0.0.1:8000/v1/chat/completions'
        >>> chat_completions_url("http://host/v1/chat/completions")
        'http://host/v1/chat/completions'
    """
    url = url.rstrip("/")
    return url if url.endswith("/chat/completions") else url + "/chat/completions"


@dataclass
class OpenAICompatibleJudge:
    """A judge behind an OpenAI-compatible ``/chat/completions`` endpoint (vLLM, llama.cpp, hosted).

    Example:
        >>> OpenAICompatibleJudge(url="http://127.0.0.1:8000/v1", model="m").endpoint
        'http://127.0.0.1:8000/v1/chat/completions'
    """

    url: str
    model: str = DEFAULT_JUDGE_MODEL
    api_key_env: str = DEFAULT_API_KEY_ENV
    timeout: float = 120.0
    max_tokens: int = DEFAULT_MAX_TOKENS
    temperature: float = 0.0
    max_concurrency: int = 1 << 16  # no cap of its own: --judge-concurrency decides
    #: Nucleus and top-k sampling sent with the request when set (``None``: not sent).
    top_p: float | None = None
    top_k: int | None = None
    backend: str = field(default="openai", init=False)

    @property
    def endpoint(self) -> str:
        return chat_completions_url(self.url)

    def request_body(self, prompt: Prompt, *, seed: int | None = None, max_tokens: int | None = None) -> dict[str, Any]:
        """The JSON body sent: the organisers' four fields, plus ``seed`` (and ``top_p``,
        ``top_k``) only when given; content parts are sent as a list, in order.

        Example:
            >>> OpenAICompatibleJudge(url="http://h/v1", model="m").request_body("hi")
            {'messages': [{'role': 'user', 'content': 'hi'}], 'model': 'm', 'temperature': 0, 'max_tokens': 3000}
            >>> OpenAICompatibleJudge(url="http://h/v1", model="m").request_body(({"type": "text", "text": "hi"},),
            ...                                                                   max_tokens=5)["messages"]
            [{'role': 'user', 'content': [{'type': 'text', 'text': 'hi'}]}]
        """
        body: dict[str, Any] = {
            "messages": [{"role": "user", "content": prompt if isinstance(prompt, str) else list(prompt)}],
            "model": self.model,
            "temperature": int(self.temperature) if float(self.temperature).is_integer() else self.temperature,
            "max_tokens": self.max_tokens if max_tokens is None else max_tokens,
        }
        for key in ("top_p", "top_k"):
            if getattr(self, key) is not None:
                body[key] = getattr(self, key)
        if seed is not None:
            body["seed"] = seed
        return body

    def complete(self, prompt: Prompt, *, seed: int | None = None, max_tokens: int | None = None) -> str:
        body = json.dumps(self.request_body(prompt, seed=seed, max_tokens=max_tokens)).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        request = urllib.request.Request(self.endpoint, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                raw = response.read(MAX_REPLY_BYTES + 1)
                if len(raw) > MAX_REPLY_BYTES:
                    raise RetryableJudgeError(f"the server's reply is longer than {MAX_REPLY_BYTES} bytes")
                payload = json.loads(raw.decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise self._http_error(exc) from None
        except TimeoutError as exc:
            raise RetryableJudgeError(f"timed out after {self.timeout:g} s ({exc})") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise RetryableJudgeError(f"timed out after {self.timeout:g} s") from None
            raise RetryableJudgeError(f"cannot reach {self.endpoint}: {exc.reason}") from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise RetryableJudgeError("the server's reply is not JSON") from None
        except (OSError, http.client.HTTPException) as exc:  # connection reset, truncated reply, ...
            raise RetryableJudgeError(f"connection to {self.endpoint} failed: {type(exc).__name__}: {exc}") from None
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise RetryableJudgeError("the server's reply has no choices[0].message.content") from None
        return content if isinstance(content, str) else ""

    def _http_error(self, exc: urllib.error.HTTPError) -> Exception:
        """The exception for an HTTP error, by :func:`~averitec_tools.metrics.judge_policy.classify_http_error`."""
        try:
            text = exc.read(MAX_ERROR_BYTES).decode("utf-8", "replace")
        except (OSError, http.client.HTTPException):
            text = ""
        kind = classify_http_error(exc.code, text)
        detail = " ".join(text.split())[:200]
        if kind == CONTENT:
            return JudgeContentRefused(f"HTTP {exc.code}: {detail or exc.reason}", status=exc.code)
        if kind == INFRASTRUCTURE:
            retry_after = exc.headers.get("Retry-After") if exc.headers else None
            return RetryableJudgeError(f"HTTP {exc.code}", retry_after=float(retry_after) if retry_after and retry_after.isdigit() else None)
        return UserError(
            f"judge {self.endpoint} refused the request: HTTP {exc.code} {exc.reason}" + (f" ({detail})" if detail else ""),
            hint=f"check --judge-model and the API key in ${self.api_key_env}" if exc.code in (401, 403, 404) else None,
        )


@dataclass
class TransformersJudge:
    """A local Hugging Face causal LM as judge (greedy decoding = temperature 0).

    ``model`` is a hub id or a local folder; the chat template is used when the tokenizer
    has one. Loading is lazy (the first :meth:`complete`).
    """

    model: str = DEFAULT_JUDGE_MODEL
    max_new_tokens: int = DEFAULT_MAX_TOKENS
    device: str | None = None
    temperature: float = 0.0
    max_concurrency: int = 1
    backend: str = field(default="transformers", init=False)
    _loaded: tuple[Any, Any] | None = field(default=None, init=False, repr=False)

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            try:
                from transformers import AutoModelForCausalLM, AutoTokenizer
            except ImportError:
                raise UserError(
                    "the transformers judge needs the 'models' extra", hint="pip install 'averitec-tools[models]'"
                ) from None
            try:
                tokenizer = AutoTokenizer.from_pretrained(self.model)
                model = AutoModelForCausalLM.from_pretrained(self.model)
            except OSError as exc:
                raise UserError(f"cannot load judge model {self.model!r}: {exc}") from None
            if self.device:
                model = model.to(self.device)  # type: ignore[arg-type]
            self._loaded = (tokenizer, model.eval())
        return self._loaded

    def complete(self, prompt: Prompt, *, seed: int | None = None, max_tokens: int | None = None) -> str:
        import torch

        if not isinstance(prompt, str):
            if any(part.get("type") != "text" for part in prompt):
                raise UserError(f"the transformers judge {self.model!r} reads text only; image ratings need a "
                                "vision-language judge behind --judge-url (an OpenAI-compatible server)")
            prompt = "".join(str(part.get("text", "")) for part in prompt)
        tokenizer, model = self._load()
        if getattr(tokenizer, "chat_template", None):
            ids = tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], add_generation_prompt=True, return_tensors="pt"
            )
        else:
            ids = tokenizer(prompt, return_tensors="pt").input_ids
        ids = ids.to(model.device)
        sampling: dict[str, Any] = {"do_sample": False}
        if self.temperature > 0:
            sampling = {"do_sample": True, "temperature": self.temperature}
            if seed is not None:
                torch.manual_seed(seed)
        with torch.no_grad():
            out = model.generate(
                ids,
                attention_mask=torch.ones_like(ids),
                max_new_tokens=self.max_new_tokens if max_tokens is None else max_tokens,
                **sampling,
                pad_token_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id,
            )
        text: str = tokenizer.decode(out[0, ids.shape[1] :], skip_special_tokens=True)
        return text


#: Back-end name -> judge class (``--judge-backend``).
JUDGE_BACKENDS: Registry[type] = Registry("judge back-end")
JUDGE_BACKENDS.add("openai", OpenAICompatibleJudge)
JUDGE_BACKENDS.add("transformers", TransformersJudge)


def make_judge(*, backend: str, model: str, url: str | None = None, **settings: Any) -> Judge:
    """Build the judge for ``--judge-backend`` (``url`` is required by ``openai``).

    Example:
        >>> make_judge(backend="openai", model="m", url="http://127.0.0.1:1/v1").backend
        'openai'
    """
    cls = JUDGE_BACKENDS.get(backend)
    if cls is OpenAICompatibleJudge:
        if not url:
            raise UserError(
                "scoring with a judge (fever8, averimatec) needs a judge: --judge-url URL (an OpenAI-compatible endpoint)",
                hint="or --judge-backend transformers --judge-model NAME_OR_PATH; --dry-run needs neither",
            )
        http_keys = ("api_key_env", "timeout", "max_tokens", "temperature", "top_p", "top_k")
        judge: Judge = OpenAICompatibleJudge(url=url, model=model, **{k: v for k, v in settings.items() if k in http_keys})
        return judge
    local_keys = ("max_new_tokens", "device", "temperature")
    local: Judge = cls(model=model, **{k: v for k, v in settings.items() if k in local_keys})
    return local


__all__ = [
    "DEFAULT_API_KEY_ENV", "DEFAULT_JUDGE_MODEL", "DEFAULT_MAX_TOKENS", "Judge", "Prompt", "RetryableJudgeError",
    "make_judge",
]
