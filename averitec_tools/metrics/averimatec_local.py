"""A local vision-language judge for the ``averimatec`` profile (``--judge-backend transformers``).

The organisers run ``Gemma3ForConditionalGeneration`` with its ``AutoProcessor`` in
process: one user message whose content is text and image items in order, the processor's
chat template with the generation prompt, ``generate(max_new_tokens=...)`` and the new
tokens decoded without special tokens (``ref_eval.py``, ``qa_to_evidence.py``). This judge
does the same with any image-text-to-text model (``AutoModelForImageTextToText``): the
OpenAI-style content parts it is given become the processor's items, each image passed as
the base64 string it arrived as (the processor loads it as it loads theirs). Greedy
decoding at temperature 0; above it, sampling with the preset's top-p and top-k.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.metrics.ev2r_judges import Prompt, TransformersJudge


def require_models(module: str) -> Any:
    """Import ``module`` of the ``models`` extra, or say how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UserError("the transformers judge needs the 'models' extra", hint="pip install 'averitec-tools[models]'") from None


def processor_messages(prompt: Prompt) -> list[dict[str, Any]]:
    """The processor's message for a prompt: text items and image items (base64), in order.

    Example:
        >>> processor_messages(({"type": "text", "text": "Rate:"},
        ...                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGk="}}))
        [{'role': 'user', 'content': [{'type': 'text', 'text': 'Rate:'}, {'type': 'image', 'image': 'aGk='}]}]
    """
    parts: tuple[dict[str, Any], ...] = ({"type": "text", "text": prompt},) if isinstance(prompt, str) else prompt
    content: list[dict[str, Any]] = []
    for part in parts:
        if part.get("type") == "text":
            content.append({"type": "text", "text": str(part.get("text", ""))})
        elif part.get("type") == "image_url":
            image: Any = part.get("image_url") or {}
            url = str(image.get("url", "")) if isinstance(image, dict) else ""
            content.append({"type": "image", "image": url.split(",", 1)[1] if url.startswith("data:") else url})
        else:
            raise ValueError(f"unknown content part type {part.get('type')!r}")
    return [{"role": "user", "content": content}]


@dataclass
class TransformersVLMJudge(TransformersJudge):
    """A local image-text-to-text model and its processor as judge (loaded on first use)."""

    max_new_tokens: int = 1024
    top_p: float | None = None
    top_k: int | None = None

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            torch = require_models("torch")
            transformers = require_models("transformers")
            try:
                processor = transformers.AutoProcessor.from_pretrained(self.model)
                model = transformers.AutoModelForImageTextToText.from_pretrained(self.model, dtype="auto")
            except (OSError, ValueError) as exc:
                raise UserError(f"cannot load judge model {self.model!r} as an image-text-to-text model: {exc}"
                                [:400]) from None
            device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
            self._loaded = (processor, model.to(device).eval())
        return self._loaded

    def complete(self, prompt: Prompt, *, seed: int | None = None, max_tokens: int | None = None) -> str:
        import torch

        processor, model = self._load()
        inputs = processor.apply_chat_template(processor_messages(prompt), add_generation_prompt=True, tokenize=True,
                                               return_dict=True, return_tensors="pt").to(model.device)
        sampling: dict[str, Any] = {"do_sample": False}
        if self.temperature > 0:
            sampling = {"do_sample": True, "temperature": self.temperature,
                        **{k: v for k, v in (("top_p", self.top_p), ("top_k", self.top_k)) if v is not None}}
            if seed is not None:
                torch.manual_seed(seed)
        with torch.no_grad():
            out = model.generate(**inputs, max_new_tokens=self.max_new_tokens if max_tokens is None else max_tokens,
                                 **sampling)
        new = out[:, inputs["input_ids"].shape[1]:]
        return str(processor.batch_decode(new, skip_special_tokens=True)[0])


__all__ = ["TransformersVLMJudge", "processor_messages"]
