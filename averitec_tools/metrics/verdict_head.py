"""A verdict model on frozen MiniLM embeddings, trained on AVeriTeC *train* claims only.

``minilm-verdict`` (:mod:`~averitec_tools.metrics.minilm_verdict`) asks whether an
evidence set decides its claim. Its model is a 4-way multinomial logistic regression on
features of the all-MiniLM-L6-v2 embeddings (the encoder ``minilm-qa-f1`` loads) of the
claim ``c`` and of its Q+A strings ``e_1..e_n``, with ``m`` their mean (0 when there are
none): ``[c, m, c*m, |c-m|, max_j c.e_j, mean_j c.e_j, n/10]`` (1539 numbers).

Training data (:func:`training_examples`): every AVeriTeC training claim whose normalised
text (:func:`averitec_tools.leakage.duplicates.normalise_claim`) is not that of a scored
claim, with its gold Q+A strings and label; and, to teach that evidence about another
claim decides nothing, the same claim with the Q+A strings of another training claim
(a fixed permutation, seed 0), labelled Not Enough Evidence. Classes are weighted
inversely to their frequency. The fitted weights ship with the package
(``data/minilm_verdict_head.npz``, its sha256 in the scorer's signature);
``benchmarks/train_verdict_head.py`` rebuilds them. Nothing is fitted on human ratings.

    >>> f = features(np.array([1.0, 0.0]), np.array([[0.0, 1.0], [1.0, 0.0]]))
    >>> f.tolist()
    [1.0, 0.0, 0.5, 0.5, 0.5, 0.0, 0.5, 0.5, 1.0, 0.5, 0.2]
    >>> softmax_rows(np.array([[0.0, 0.0]])).tolist()
    [[0.5, 0.5]]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.errors import ResourceError

LABELS: tuple[str, ...] = ("Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking")
NEE = LABELS.index("Not Enough Evidence")
HEAD_FILE = Path(__file__).resolve().parents[1] / "data" / "minilm_verdict_head.npz"
#: Bumped when :func:`features` or :func:`training_examples` change (the head must be retrained).
FEATURES_VERSION = "mean-prod-absdiff-cos-v1"


def features(claim: np.ndarray, evidence: np.ndarray) -> np.ndarray:
    """The feature vector of a claim embedding and its evidence embeddings (``n x d``, n may be 0)."""
    if len(evidence):
        mean = evidence.mean(axis=0)
        cos = evidence @ claim
        stats = [float(cos.max()), float(cos.mean()), len(evidence) / 10]
    else:
        mean = np.zeros_like(claim)
        stats = [0.0, 0.0, 0.0]
    return np.concatenate([claim, mean, claim * mean, np.abs(claim - mean), stats])


def softmax_rows(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax."""
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def training_examples(*, train: Sequence[tuple[str, str, Sequence[str]]], exclude: Iterable[str],
                      seed: int = 0) -> tuple[list[tuple[str, list[str]]], list[int], int]:
    """``(examples (claim, Q+A strings), class indices, training twins dropped)`` (see the module docstring).

    Example:
        >>> ex, y, dropped = training_examples(train=[("A.", "Refuted", ["q a"]), ("B", "Supported", ["q b"]),
        ...                                           ("C", "Refuted", ["q c"])], exclude=["a"])
        >>> dropped, y, [claim for claim, _ in ex]
        (1, [0, 1, 2, 2], ['B', 'C', 'B', 'C'])
    """
    from averitec_tools.leakage.duplicates import normalise_claim

    scored = {normalise_claim(t) for t in exclude}
    kept = [row for row in train if normalise_claim(row[0]) not in scored]
    examples = [(claim, list(ev)) for claim, _, ev in kept]
    labels = [LABELS.index(label) for _, label, _ in kept]
    if len(kept) > 1:  # a random cycle through the claims: each gets the next one's evidence, never its own
        order = np.random.default_rng(seed).permutation(len(kept))
        examples += [(kept[i][0], list(kept[j][2])) for i, j in zip(order, np.roll(order, -1), strict=True)]
        labels += [NEE] * len(kept)
    return examples, labels, len(train) - len(kept)


def fit_head(*, x: np.ndarray, y: Sequence[int], c: float = 1.0) -> dict[str, np.ndarray]:
    """Class-balanced multinomial logistic regression (scikit-learn, lbfgs): ``{coef, intercept}``."""
    try:
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        raise ResourceError("training the verdict head needs scikit-learn", hint="pip install scikit-learn") from None
    clf = LogisticRegression(C=c, max_iter=3000, class_weight="balanced").fit(x, list(y))
    if list(clf.classes_) != list(range(len(LABELS))):
        raise ResourceError("the verdict head's training data lacks a class")
    return {"coef": clf.coef_.astype(np.float64), "intercept": clf.intercept_.astype(np.float64)}


def save_head(head: Mapping[str, np.ndarray], path: Path, *, meta: Mapping[str, Any]) -> None:
    """Write the head (and its provenance as strings) to an ``.npz`` file."""
    arrays: dict[str, Any] = {"coef": head["coef"], "intercept": head["intercept"],
                              **{f"meta_{k}": np.array(str(v)) for k, v in meta.items()}}
    np.savez(path, **arrays)


@lru_cache(maxsize=2)
def load_head(path: Path = HEAD_FILE) -> dict[str, Any]:
    """The packaged head: ``coef`` (4 x 1539), ``intercept`` and ``meta`` (provenance strings)."""
    if not path.is_file():
        raise ResourceError(f"minilm-verdict: the verdict head {path} is missing",
                            hint="python benchmarks/train_verdict_head.py")
    with np.load(path) as z:
        meta = {k[5:]: str(z[k]) for k in z.files if k.startswith("meta_")}
        return {"coef": z["coef"], "intercept": z["intercept"], "meta": meta}


def predict(head: Mapping[str, Any], x: np.ndarray) -> np.ndarray:
    """Class probabilities (rows of :data:`LABELS` order) of feature rows ``x``."""
    return softmax_rows(x @ head["coef"].T + head["intercept"])


__all__ = [
    "FEATURES_VERSION", "HEAD_FILE", "LABELS", "features", "fit_head", "load_head", "predict", "save_head",
    "training_examples",
]
