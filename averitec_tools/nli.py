"""NLI backends: the protocol, the transformers cross-encoder, a cache, and the y_NLI verdict rule.

Shared by the R2VC verifier (``baselines/r2vc/stages/verification``) and the meta-eval
``nli-verdict`` scorer (``metrics/nli_verdict.py``), so scoring never imports a
baseline.

Pairs are always (claim, passage); a backend decides which side is the premise
(:data:`PAIR_ORDERS`; :class:`HFNLIBackend` defaults to premise = passage). Every
probability array has the columns :data:`NLI_COLUMNS` (contradiction, neutral,
entailment); :class:`HFNLIBackend` reads its model's label order from
``config.id2label`` (never assumed).
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from averitec_tools.errors import ResourceError
from averitec_tools.models import hub_offline

#: Column order of every probability array in this module.
NLI_COLUMNS: tuple[str, str, str] = ("contradiction", "neutral", "entailment")
CONTR, NEUT, ENT = 0, 1, 2

#: ``verifier.pair_order`` values: which side of an NLI pair is the premise.
PAIR_ORDERS: tuple[str, ...] = ("evidence-claim", "claim-evidence")

_LABEL_ALIASES: dict[str, int] = {
    "contradiction": CONTR,
    "contradict": CONTR,
    "contradicts": CONTR,
    "refutes": CONTR,
    "refuted": CONTR,
    "neutral": NEUT,
    "not enough info": NEUT,
    "nei": NEUT,
    "entailment": ENT,
    "entails": ENT,
    "entail": ENT,
    "supports": ENT,
    "supported": ENT,
}


@runtime_checkable
class NLIBackend(Protocol):
    """Maps (claim, passage) pairs to NLI probabilities.

    The backend decides which side is the premise (see :data:`PAIR_ORDERS`).

    ``predict`` returns an array of shape ``(len(pairs), 3)`` whose columns are
    :data:`NLI_COLUMNS` (contradiction, neutral, entailment), each row summing to 1.
    """

    name: str

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        ...


def label_order_from_id2label(id2label: dict[Any, str], *, model_id: str) -> list[int]:
    """Return, for each of :data:`NLI_COLUMNS`, the model output index holding it.

    Args:
        id2label: ``model.config.id2label``.
        model_id: For the error message.

    Raises:
        ResourceError: if the labels are generic (``LABEL_0``) or not an NLI triple.

    Example:
        >>> label_order_from_id2label({0: "entailment", 1: "neutral", 2: "contradiction"},
        ...                           model_id="m")
        [2, 1, 0]
    """
    found: dict[int, int] = {}
    for raw_index, raw_name in id2label.items():
        key = re.sub(r"[\s_\-]+", " ", str(raw_name)).strip().casefold()
        if key in _LABEL_ALIASES:
            found[_LABEL_ALIASES[key]] = int(raw_index)
    if len(id2label) != 3 or len(found) != 3:
        raise ResourceError(
            f"NLI model {model_id!r}: cannot read the label order from config.id2label "
            f"{dict(id2label)!r}",
            hint="the model must name its three labels contradiction/neutral/entailment",
        )
    return [found[CONTR], found[NEUT], found[ENT]]


def load_sequence_classifier(model_id: str, *, what: str, device: str | None = None) -> tuple[Any, Any]:
    """Load a tokenizer and sequence-classification model, failing with a clear message.

    Offline (``HF_HUB_OFFLINE=1``) only local files are tried, so a missing model fails
    at once instead of waiting on network retries.
    """
    try:
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ResourceError(
            f"{what}: transformers is not installed", hint="pip install 'averitec-tools[models]'"
        ) from exc
    local_only = hub_offline() or os.path.isdir(model_id)
    try:
        tokenizer = AutoTokenizer.from_pretrained(model_id, local_files_only=local_only)
        model = AutoModelForSequenceClassification.from_pretrained(model_id, local_files_only=local_only)
    except (OSError, ValueError) as exc:
        hint = (
            "HF_HUB_OFFLINE is set: download the model on a connected machine or pass a local "
            "directory"
            if local_only
            else "check the model id and your network connection"
        )
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ResourceError(f"{what}: cannot load model {model_id!r}: {first}", hint=hint) from None
    model.eval()
    if device:
        model.to(device)
    return tokenizer, model


class HFNLIBackend:
    """NLI probabilities from a transformers sequence-classification cross-encoder.

    Args:
        model_id: Hub id or local directory (default the paper's
            ``cross-encoder/nli-deberta-v3-large``).
        device: torch device (``"cpu"``, ``"cuda"``); ``None`` picks CUDA when available.
        batch_size: Pairs per forward pass (pairs are batched by token length).
        max_length: Tokenizer truncation length.
        pair_order: ``evidence-claim`` (premise = passage, the default and what NLI
            cross-encoders are trained on) or ``claim-evidence``.

    Example:
        >>> backend = HFNLIBackend(model_id="cross-encoder/nli-deberta-v3-large")  # doctest: +SKIP
        >>> backend.predict([("A cat sat.", "A cat is sitting.")]).shape  # doctest: +SKIP
        (1, 3)
    """

    def __init__(
        self,
        *,
        model_id: str = "cross-encoder/nli-deberta-v3-large",
        device: str | None = None,
        batch_size: int = 32,
        max_length: int = 256,
        pair_order: str = "evidence-claim",
    ) -> None:
        import torch

        if pair_order not in PAIR_ORDERS:
            raise ValueError(f"pair_order must be one of {PAIR_ORDERS}, got {pair_order!r}")
        self.pair_order = pair_order
        self.name = f"hf:{model_id}"
        self.model_id = model_id
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.batch_size = batch_size
        self.max_length = max_length
        self.tokenizer, self.model = load_sequence_classifier(
            model_id, what="verifier", device=self.device
        )
        self.order = label_order_from_id2label(dict(self.model.config.id2label), model_id=model_id)

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """Probabilities of ``pairs``, in batches of similar length (less padding), in input order."""
        import torch

        out = np.zeros((len(pairs), 3), dtype=np.float64)
        if not pairs:
            return out
        premises, hypotheses = order_pairs(pairs, pair_order=self.pair_order)
        lengths = [len(ids) for ids in self.tokenizer(premises, hypotheses, truncation=True,
                                                       max_length=self.max_length)["input_ids"]]
        order = np.argsort(lengths, kind="stable")
        for start in range(0, len(pairs), self.batch_size):
            idx = order[start : start + self.batch_size]
            enc = self.tokenizer(
                [premises[i] for i in idx],
                [hypotheses[i] for i in idx],
                truncation=True,
                max_length=self.max_length,
                padding=True,
                return_tensors="pt",
            ).to(self.device)
            with torch.inference_mode():
                logits = self.model(**enc).logits.float()
            probs = torch.softmax(logits, dim=-1).cpu().numpy()
            out[idx] = probs[:, self.order]
        return out


def order_pairs(
    pairs: Sequence[tuple[str, str]], *, pair_order: str = "evidence-claim"
) -> tuple[list[str], list[str]]:
    """Split (claim, passage) pairs into (premises, hypotheses) for ``pair_order``.

    Example:
        >>> order_pairs([("claim", "passage")])
        (['passage'], ['claim'])
        >>> order_pairs([("claim", "passage")], pair_order="claim-evidence")
        (['claim'], ['passage'])
    """
    if pair_order == "evidence-claim":
        return [p for _, p in pairs], [c for c, _ in pairs]
    if pair_order == "claim-evidence":
        return [c for c, _ in pairs], [p for _, p in pairs]
    raise ValueError(f"pair_order must be one of {PAIR_ORDERS}, got {pair_order!r}")


class CachedNLI:
    """Memoises an :class:`NLIBackend` on (claim, passage text) and batches misses.

    Example:
        >>> class Half:
        ...     name = "half"
        ...     calls = 0
        ...     def predict(self, pairs):
        ...         Half.calls += 1
        ...         return np.full((len(pairs), 3), 1 / 3)
        >>> nli = CachedNLI(Half())
        >>> _ = nli.probs("c", ["a", "b"]); _ = nli.probs("c", ["b", "a"])
        >>> Half.calls
        1
    """

    def __init__(self, backend: NLIBackend, *, max_entries: int = 200_000) -> None:
        self.backend = backend
        self.name = backend.name
        self.max_entries = max_entries
        self._cache: dict[tuple[str, str], np.ndarray] = {}
        self.hits = 0
        self.misses = 0

    def probs(self, claim: str, texts: Sequence[str]) -> np.ndarray:
        """Probabilities for ``claim`` against each text, shape ``(len(texts), 3)``."""
        missing = list(dict.fromkeys(t for t in texts if (claim, t) not in self._cache))
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            if len(self._cache) + len(missing) > self.max_entries:
                self._cache.clear()
            predicted = np.asarray(self.backend.predict([(claim, t) for t in missing]), dtype=np.float64)
            if predicted.shape != (len(missing), 3):
                raise ValueError(
                    f"NLI backend {self.backend.name!r} returned shape {predicted.shape}, "
                    f"expected {(len(missing), 3)}"
                )
            for text, row in zip(missing, predicted, strict=True):
                self._cache[(claim, text)] = row
        if not texts:
            return np.zeros((0, 3), dtype=np.float64)
        return np.stack([self._cache[(claim, t)] for t in texts])

    def prefill(self, claim: str, texts: Sequence[str], probs: np.ndarray) -> None:
        """Put known probabilities (e.g. from a candidate store) into the cache.

        Example:
            >>> nli = CachedNLI(type("B", (), {"name": "b", "predict": None})())
            >>> nli.prefill("c", ["a"], np.array([[0.1, 0.2, 0.7]]))
            >>> nli.probs("c", ["a"]).tolist()
            [[0.1, 0.2, 0.7]]
        """
        rows = np.asarray(probs, dtype=np.float64).reshape(len(texts), 3)
        if len(self._cache) + len(texts) > self.max_entries:
            self._cache.clear()
        for text, row in zip(texts, rows, strict=True):
            self._cache[(claim, text)] = row

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """:class:`NLIBackend` interface, so a cache can stand in for its backend."""
        if not pairs:
            return np.zeros((0, 3), dtype=np.float64)
        return np.concatenate([self.probs(c, [t]) for c, t in pairs])


def nli_label(*, s_ent: float, s_contr: float, t_ent: float = 0.60, t_contr: float = 0.60,
              delta: float = 0.10) -> str:
    """The verifier's own verdict y_NLI from the max entailment/contradiction signals.

    True if ``s_ent ≥ T_ent`` and ``s_ent ≥ s_contr + δ``; False if ``s_contr ≥ T_contr``
    and ``s_contr ≥ s_ent + δ``; Uncertain otherwise.

    Example:
        >>> nli_label(s_ent=0.9, s_contr=0.1), nli_label(s_ent=0.65, s_contr=0.6)
        ('True', 'Uncertain')
    """
    if s_ent >= t_ent and s_ent >= s_contr + delta:
        return "True"
    if s_contr >= t_contr and s_contr >= s_ent + delta:
        return "False"
    return "Uncertain"


def label_consistency(*, generated: str, nli: str) -> float:
    """s_cons: 1 if equal, 0 if True vs False, 0.5 if exactly one is Uncertain.

    Example:
        >>> label_consistency(generated="True", nli="False"), label_consistency(generated="True", nli="Uncertain")
        (0.0, 0.5)
    """
    if generated == nli:
        return 1.0
    if "Uncertain" in (generated, nli):
        return 0.5
    return 0.0


__all__ = [
    "CONTR", "ENT", "NEUT", "NLI_COLUMNS", "CachedNLI", "HFNLIBackend", "NLIBackend", "label_consistency",
    "label_order_from_id2label", "nli_label", "order_pairs",
]
