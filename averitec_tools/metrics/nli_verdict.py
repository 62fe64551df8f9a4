"""``nli-verdict``: does the submitted evidence decide the claim as the gold label (or the reference) does?

The model is the R2VC offline verifier: all-MiniLM-L6-v2 fine-tuned as a 3-way NLI
cross-encoder (contradiction / neutral / entailment) on (evidence, claim) pairs of
**AVeriTeC train claims only** (``averitec baseline r2vc --config offline-minilm`` trains
and caches it; ``model=DIR`` names another directory). Each Q+A string of a side is paired
with the claim (premise = the string); a side's verdict distribution is
:func:`side_verdict` of its probabilities (max contradiction, ``1 - max(max ent, max
contr)``, max entailment, normalised). ``mode`` picks the score of an item:

* ``gold`` (default, as ``minilm-verdict``'s) — ``d_submitted[class of the gold label]``
  (Supported → entailment, Refuted → contradiction, the other two → neutral, as the
  verifier's training labels): does the submitted evidence lead to the gold verdict?
* ``agree`` — ``1 - TV(d_submitted, d_reference)``: one minus the total variation distance
  of the two sides' verdict distributions;
* ``label`` — :func:`label_consistency` of the two sides' y_NLI verdicts (R2VC §3.4 rule,
  T_ent = T_contr = 0.60, δ = 0.10): 1 equal, 0.5 one Uncertain, 0 True vs False.

``coverage`` (0 to 1) mixes in ``minilm-qa-f1``: ``(1 - coverage) * verdict + coverage * F1``
(a fixed weight; nothing is fitted on the ratings). Offline, CPU, never an official default;
Spearman 0.293 with the human verdict agreement of the Ev2R study (docs/meta_eval.md).

    >>> d = side_verdict(np.array([[0.5, 0.4, 0.1], [0.1, 0.2, 0.7]]))
    >>> [round(float(x), 4) for x in d]
    [0.3333, 0.2, 0.4667]
    >>> round(item_score(pred=d, ref=np.array([0.0, 0.0, 1.0]), gold="Supported", mode="agree", f1=0.0,
    ...                  coverage=0.0), 4)
    0.4667
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

import numpy as np

from averitec_tools.errors import ResourceError, UserError
from averitec_tools.metrics.base import register_metric
from averitec_tools.metrics.evidence_scorer import (
    EvidenceScorer,
    check_coverage,
    qa_strings,
)
from averitec_tools.records.rated import RatedItem

MODES = ("gold", "agree", "label")
VERIFIER_NAME = "r2vc-offline-verifier(all-MiniLM-L6-v2)"
WEIGHT_FILES = ("model.safetensors", "pytorch_model.bin")
#: What a hub snapshot needs (no ONNX, TF or Flax copies).
HUB_FILES = ["*.json", "*.safetensors", "pytorch_model.bin", "*.model", "*.txt"]
CONTR, NEUT, ENT = 0, 1, 2
#: Gold label → NLI class (the R2VC offline verifier's training labels, ``offline.data.VERDICT_TO_NLI``).
GOLD_CLASS = {"Supported": ENT, "Refuted": CONTR, "Not Enough Evidence": NEUT,
              "Conflicting Evidence/Cherrypicking": NEUT}


def side_verdict(probs: np.ndarray) -> np.ndarray:
    """A side's verdict distribution (contr, neutral, ent) from its strings' NLI rows; no strings → neutral.

    Example:
        >>> side_verdict(np.zeros((0, 3))).tolist()
        [0.0, 1.0, 0.0]
    """
    if len(probs) == 0:
        return np.array([0.0, 1.0, 0.0])
    s_contr, s_ent = float(probs[:, CONTR].max()), float(probs[:, ENT].max())
    d = np.array([s_contr, max(0.0, 1.0 - max(s_ent, s_contr)), s_ent])
    return d / d.sum()


def item_score(*, pred: np.ndarray, ref: np.ndarray, gold: str, mode: str, f1: float, coverage: float,
               y_pred: str = "", y_ref: str = "") -> float:
    """One item's ``nli-verdict`` from the two sides' verdict distributions (see the module docstring)."""
    from averitec_tools.nli import label_consistency

    if mode == "agree":
        verdict = 1.0 - 0.5 * float(np.abs(pred - ref).sum())
    elif mode == "gold":
        verdict = float(pred[GOLD_CLASS[gold]])
    else:
        verdict = label_consistency(generated=y_pred, nli=y_ref)
    return round((1 - coverage) * verdict + coverage * f1, 12)


def side_signals(probs: np.ndarray) -> tuple[np.ndarray, str]:
    """(verdict distribution, y_NLI) of one side's NLI rows."""
    from averitec_tools.nli import nli_label

    if len(probs) == 0:
        return side_verdict(probs), "Uncertain"
    return side_verdict(probs), nli_label(s_ent=float(probs[:, ENT].max()), s_contr=float(probs[:, CONTR].max()))


def default_model_dir() -> Path:
    """The newest R2VC offline verifier in the cache, or a ResourceError saying how to build one."""
    from averitec_tools.cache import cache_root

    root = cache_root("r2vc-offline")
    found = sorted(root.glob("verifier-*/config.json"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise ResourceError(f"nli-verdict: no R2VC offline verifier under {root}",
                            hint="train it on AVeriTeC train: averitec baseline r2vc --config offline-minilm "
                                 "--limit 1 --out /tmp/x.json (builds the offline models; the verifier's fit "
                                 "alone took 432 CPU-s here), or pass nli-verdict(model=DIR)")
    return found[-1].parent


def model_files(model_dir: Path) -> Path:
    """The weights file of a model directory, or a ResourceError naming what is missing."""
    weights = [model_dir / name for name in WEIGHT_FILES if (model_dir / name).is_file()]
    if not (model_dir / "config.json").is_file() or not weights:
        raise ResourceError(f"nli-verdict: {model_dir} is not a model directory (config.json, "
                            f"{' or '.join(WEIGHT_FILES)})")
    return weights[0]


def _download(repo_id: str) -> Path:
    """A hub model's snapshot (config, tokenizer, weights), fetched by ``huggingface_hub`` from ``$HF_ENDPOINT``."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.utils import HfHubHTTPError

    from averitec_tools.downloads.hub import endpoint, is_network_error

    try:
        return Path(snapshot_download(repo_id, allow_patterns=HUB_FILES))
    except Exception as exc:  # classified: hub and connection errors are the user's to fix
        if not (isinstance(exc, HfHubHTTPError) or is_network_error(exc)):
            raise
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise ResourceError(f"nli-verdict: cannot download model {repo_id!r} from {endpoint()}: {first}") from None


def resolve_model_dir(model: str) -> tuple[Path, str]:
    """(local directory, the name the signature records) of ``model=``.

    ``""`` is the cached R2VC offline verifier; otherwise a local model directory or a hub
    id (e.g. the R2VC paper's ``cross-encoder/nli-deberta-v3-large``), taken from the
    Hugging Face cache or else downloaded. A hub model is named ``id@commit``; a local
    directory by its name, or as the R2VC verifier when it holds that verifier's
    ``training.json``.

    Example:
        >>> resolve_model_dir("/nonexistent/verifier")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.ResourceError: model '/nonexistent/verifier': no such local directory
    """
    if not model:
        return default_model_dir(), VERIFIER_NAME
    from averitec_tools.models import resolve_model

    local = Path(model).expanduser()
    if local.is_dir():
        model_files(local)
        return local, VERIFIER_NAME if (local / "training.json").is_file() else f"local:{local.resolve().name}"
    resolved = resolve_model(model=model)
    path = Path(resolved.location)
    if not path.is_dir():
        path = _download(resolved.model_id)
    return path, f"{resolved.model_id}@{path.name[:12]}"


@lru_cache(maxsize=2)
def _weights_sha(path: str) -> str:
    from averitec_tools.hashing import file_sha256

    return file_sha256(path)


class MemoNLI:
    """An NLI backend memoised on (claim, evidence) pairs, the misses run in one batched call.

    Example:
        >>> class Third:
        ...     calls = 0
        ...     def predict(self, pairs):
        ...         Third.calls += 1
        ...         return np.full((len(pairs), 3), 1 / 3)
        >>> m = MemoNLI(Third())
        >>> _ = m.predict([("c", "a")]); _ = m.predict([("c", "a")]); Third.calls
        1
    """

    def __init__(self, backend: Any) -> None:
        self.backend = backend
        self._rows: dict[tuple[str, str], np.ndarray] = {}

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        missing = [p for p in dict.fromkeys(pairs) if p not in self._rows]
        if missing:
            self._rows.update(zip(missing, self.backend.predict(missing), strict=True))
        return np.array([self._rows[p] for p in pairs]).reshape(-1, 3)


@lru_cache(maxsize=2)
def _backend(model_dir: str, max_length: int, batch_size: int) -> MemoNLI:
    """The verifier, loaded once per process, its pairs shared by every ``nli-verdict`` variant."""
    from averitec_tools.nli import HFNLIBackend

    return MemoNLI(HFNLIBackend(model_id=model_dir, device="cpu", batch_size=batch_size, max_length=max_length,
                                pair_order="evidence-claim"))


def pair_probabilities(*, backend: Any, claims: Sequence[str], groups: Sequence[Sequence[str]]) -> list[np.ndarray]:
    """NLI rows (contr, neutral, ent) of each claim's strings; each distinct (claim, string) run once."""
    pairs = sorted({(c, s) for c, g in zip(claims, groups, strict=True) for s in g})
    probs = backend.predict(pairs) if pairs else np.zeros((0, 3))
    row = {p: probs[i] for i, p in enumerate(pairs)}
    return [np.array([row[(c, s)] for s in g]).reshape(-1, 3) for c, g in zip(claims, groups, strict=True)]


@register_metric
class NLIVerdict(
    EvidenceScorer, name="nli-verdict", higher_is_better=True,
    description="agreement of the verdicts an NLI cross-encoder (the R2VC offline verifier, trained on AVeriTeC "
    "train) draws from the predicted evidence and the gold label or reference (offline, CPU; never official)",
):
    """The NLI verdict-agreement scorer (see the module docstring).

    Its signature: ``metric:nli-verdict|mode:..|coverage:..|model:..|weights:sha256.<16 hex>|trained:..|``
    ``max_length:..|pair_order:evidence-claim``.
    """

    mode: str = "gold"
    coverage: float = 0.0
    model: str = ""
    max_length: int = 128
    batch_size: int = 32
    choices: ClassVar[Mapping[str, tuple[Any, ...]]] = {"mode": MODES}

    def validate(self) -> None:
        check_coverage(self.name, self.coverage)

    def model_dir(self) -> Path:
        return self._resolved()[0]

    def _resolved(self) -> tuple[Path, str]:
        resolved: tuple[Path, str] | None = self.__dict__.get("_model")
        if resolved is None:  # resolved (and downloaded) once per scorer
            resolved = resolve_model_dir(self.model)
            object.__setattr__(self, "_model", resolved)
        return resolved

    def signature_fields(self) -> list[tuple[str, Any]]:
        d, name = self._resolved()
        weights = model_files(d)
        meta_file = d / "training.json"
        meta = json.loads(meta_file.read_text()) if meta_file.is_file() else {}
        trained = (f"averitec-train-{meta['train_claims']}-claims-{meta.get('pairs', '?')}-pairs-"
                   f"{meta.get('pair_labels', '?')}" if "train_claims" in meta else "unknown")
        return [("mode", self.mode), ("coverage", f"{self.coverage:g}"), ("model", name),
                ("weights", f"sha256.{_weights_sha(str(weights))[:16]}"), ("trained", trained),
                ("max_length", self.max_length), ("pair_order", "evidence-claim")]

    def score_claims(self, *, claims: Sequence[str], labels: Sequence[str] | None, predicted: Sequence[Sequence[str]],
                     references: Sequence[Sequence[str]], backend: Any = None) -> list[float]:
        """Scores of claims given as text, gold label (``mode=gold`` only) and lists of Q+A strings."""
        if self.mode == "gold":
            bad = [(i, lab) for i, lab in enumerate(labels or [None] * len(claims)) if lab not in GOLD_CLASS]
            if bad:
                raise UserError(f"nli-verdict: claim {bad[0][0]}: gold label {bad[0][1]!r} is not an AVeriTeC label")
        if backend is None:
            d = self.model_dir()
            model_files(d)
            backend = _backend(str(d), self.max_length, self.batch_size)
        pp = pair_probabilities(backend=backend, claims=claims, groups=predicted)
        pr = pair_probabilities(backend=backend, claims=claims, groups=references)
        f1 = [0.0] * len(claims)
        if self.coverage:
            from averitec_tools.metrics.minilm_qa_f1 import MiniLMQAF1

            f1 = MiniLMQAF1(max_length=self.max_length).score_strings(predicted=predicted, references=references)
        out = []
        for i in range(len(claims)):
            (dp, yp), (dr, yr) = side_signals(pp[i]), side_signals(pr[i])
            out.append(item_score(pred=dp, ref=dr, gold=labels[i] if labels else "", mode=self.mode, f1=f1[i],
                                  coverage=self.coverage, y_pred=yp, y_ref=yr))
        return out

    def score_strings(self, *, predicted: Sequence[Sequence[str]], references: Sequence[Sequence[str]],
                      claims: Sequence[str] | None = None, labels: Sequence[str] | None = None) -> list[float]:
        """``averitec score --evidence-scorer``: needs each claim's text (and gold label for ``mode=gold``)."""
        if claims is None:
            raise UserError("nli-verdict needs each claim's text")
        return self.score_claims(claims=claims, labels=labels, predicted=predicted, references=references)

    def score(self, *, items: Sequence[RatedItem]) -> list[float | None]:
        t0 = time.process_time()
        out = self.score_claims(claims=[it.claim for it in items], labels=[it.gold for it in items],
                                predicted=[qa_strings(it.predicted) for it in items],
                                references=[qa_strings(it.reference) for it in items])
        object.__setattr__(self, "_cpu_s", time.process_time() - t0)
        return list(out)

    def details(self) -> dict[str, Any]:
        info: dict[str, Any] = {"signature": self.signature()}
        if hasattr(self, "_cpu_s"):
            info["cpu_seconds"] = round(self._cpu_s, 2)
        return info


__all__ = [
    "GOLD_CLASS", "MODES", "MemoNLI", "NLIVerdict", "default_model_dir", "item_score", "pair_probabilities",
    "side_verdict",
]
