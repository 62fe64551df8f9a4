"""The claim-only probe: a verdict from the claim's words alone, no evidence at all.

The trivial reference every offline baseline table shows beside the baselines, and the
prior the offline baselines' decisions read as features: a multinomial logistic
regression on the packaged all-MiniLM-L6-v2 embedding of the claim (unit length, 384
numbers; :func:`~averitec_tools.metrics.minilm_qa_f1.embed`), trained on
AVeriTeC *training* claims minus every scored claim's normalised twin and minus the
pseudo-test (:func:`prior_training_set`). Its inverse regularisation ``C`` is chosen on
those claims alone by 5-fold cross-validation on the held-out log-likelihood
(:func:`choose_c`; the probabilities are what the decisions read). The folds keep claim
*groups* together — normalised twins, and the claims of one fact-checking article
(:func:`claim_groups`) — because a dev claim has neither among the training claims: a
fold that split them would promise more than dev gives.

:func:`out_of_fold_proba` gives each training claim probabilities from probes not fitted
on its group, the only honest prior for a decision fitted on training claims.

Example:
    >>> X = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]] * 3)
    >>> y = np.array([0, 0, 1, 1] * 3)
    >>> prior = fit_prior(vectors=X, labels=y, groups=np.arange(12), c_grid=(1.0,), folds=2)
    >>> prior.proba(np.array([[1.0, 0.0]])).argmax(axis=1).tolist(), prior.c
    ([0], 1.0)
    >>> claim_groups(["It's red", "it’s red!", "blue", "green"], ["a.org/1", None, "a.org/1", None]).tolist()
    [0, 0, 0, 1]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.errors import UserError
from averitec_tools.labels import AVERITEC_LABELS
from averitec_tools.metrics.verdict_head import softmax_rows

#: Values of ``C`` the cross-validation chooses from.
C_GRID: tuple[float, ...] = (0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0)
#: Bumped when the features, the fit or the training set's rule change.
PRIOR_VERSION = "claim-prior-v1"
_MAX_ITER = 3000
#: Intercept of a class the training set lacks (its probability underflows to 0; finite for JSON).
ABSENT = -1e30


def claim_groups(texts: Sequence[str], articles: Sequence[str | None]) -> np.ndarray:
    """Group ids: claims with one normalised text or one fact-checking article share a group.

    Union-find over both keys (:func:`~averitec_tools.leakage.duplicates.normalise_claim`,
    :func:`~averitec_tools.leakage.duplicates.page_key`); ids are numbered in order of first
    appearance.
    """
    from averitec_tools.leakage.duplicates import normalise_claim, page_key

    parent = list(range(len(texts)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[tuple[str, str], int] = {}
    for i, (text, article) in enumerate(zip(texts, articles, strict=True)):
        keys = [("text", normalise_claim(text))]
        page = page_key(article)
        if page is not None:
            keys.append(("page", page))
        for key in keys:
            j = first.setdefault(key, i)
            parent[root(i)] = root(j)
    ids: dict[int, int] = {}
    return np.array([ids.setdefault(root(i), len(ids)) for i in range(len(texts))], dtype=int)


def group_folds(groups: np.ndarray, *, folds: int, seed: int) -> np.ndarray:
    """Fold of each item: whole groups, shuffled with ``seed``, dealt round-robin by size.

    Example:
        >>> group_folds(np.array([0, 0, 1, 2, 3]), folds=2, seed=0).tolist()
        [0, 0, 1, 1, 0]
    """
    distinct = np.unique(groups)
    order = np.random.default_rng(seed).permutation(distinct)
    sizes = {g: int((groups == g).sum()) for g in distinct}
    load = np.zeros(max(folds, 1), dtype=int)
    fold_of: dict[int, int] = {}
    for g in sorted(order.tolist(), key=lambda g: -sizes[g]):  # stable: the shuffle breaks size ties
        f = int(load.argmin())
        fold_of[g] = f
        load[f] += sizes[g]
    return np.array([fold_of[g] for g in groups.tolist()], dtype=int)


@dataclass(frozen=True)
class _OneClass:
    """The fit of a training set with one label: that label, probability 1 (sklearn refuses it)."""

    label: int

    @property
    def classes_(self) -> np.ndarray:
        return np.array([self.label])

    @property
    def coef_(self) -> np.ndarray:
        return np.zeros((0, 0))

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        return np.ones((len(X), 1))


def _fit_lr(X: np.ndarray, y: np.ndarray, c: float) -> Any:
    from sklearn.linear_model import LogisticRegression

    if len(np.unique(y)) < 2:
        return _OneClass(int(y[0]))
    return LogisticRegression(C=c, max_iter=_MAX_ITER).fit(X, y)


def _full_proba(model: Any, X: np.ndarray, n_labels: int) -> np.ndarray:
    """Probabilities over all ``n_labels`` classes (a class absent from the fit gets 0)."""
    out = np.zeros((len(X), n_labels))
    out[:, model.classes_] = model.predict_proba(X)
    return out


def out_of_fold_proba(*, vectors: np.ndarray, labels: np.ndarray, groups: np.ndarray, c: float,
                      folds: int = 5, seed: int = 0, n_labels: int = len(AVERITEC_LABELS)) -> np.ndarray:
    """Each item's probabilities from a probe fitted without its fold (folds by :func:`group_folds`)."""
    fold = group_folds(groups, folds=folds, seed=seed)
    out = np.full((len(labels), n_labels), 1.0 / n_labels)  # a fold with nothing else to fit on: uniform
    for f in np.unique(fold):
        fit = fold != f
        if not fit.any():
            continue
        out[~fit] = _full_proba(_fit_lr(vectors[fit], labels[fit], c), vectors[~fit], n_labels)
    return out


def choose_c(*, vectors: np.ndarray, labels: np.ndarray, groups: np.ndarray, c_grid: Sequence[float] = C_GRID,
             folds: int = 5, seed: int = 0) -> tuple[float, list[dict[str, float]]]:
    """``C`` with the best mean held-out log-likelihood, and each value's cross-validated figures."""
    from averitec_tools.metrics.label_metrics import macro_f1

    rows = []
    for c in c_grid:
        p = out_of_fold_proba(vectors=vectors, labels=labels, groups=groups, c=c, folds=folds, seed=seed)
        pred = p.argmax(axis=1)
        loglik = float(np.mean(np.log(np.clip(p[np.arange(len(labels)), labels], 1e-12, 1.0))))
        names = [str(i) for i in range(p.shape[1])]
        rows.append({"c": float(c), "log_likelihood": loglik, "accuracy": float(np.mean(pred == labels)),
                     "macro_f1": macro_f1(gold=[names[i] for i in labels], predicted=[names[i] for i in pred],
                                          labels=names)})
    best = max(rows, key=lambda r: (r["log_likelihood"], -r["c"]))
    return best["c"], rows


@dataclass(frozen=True)
class ClaimPrior:
    """A fitted claim-only probe: ``P(label | claim) = softmax(W e(claim) + b)``.

    Attributes:
        coef: ``(n_labels, 384)`` weights (rows of classes absent from the fit are 0 and
            their intercept :data:`ABSENT`: probability 0).
        intercept: ``(n_labels,)``.
        c: The chosen inverse regularisation.
        labels: Label names, in column order.
        info: How it was fitted (training set, cross-validation table).
    """

    coef: np.ndarray
    intercept: np.ndarray
    c: float
    labels: tuple[str, ...] = AVERITEC_LABELS
    info: dict[str, Any] = field(default_factory=dict, compare=False)

    def proba(self, vectors: np.ndarray) -> np.ndarray:
        """``(n, n_labels)`` probabilities of claim embeddings."""
        return np.asarray(softmax_rows(np.asarray(vectors, dtype=np.float64) @ self.coef.T + self.intercept))

    def predict_texts(self, texts: Sequence[str]) -> np.ndarray:
        """Probabilities of claim texts (embedded with the packaged MiniLM)."""
        return self.proba(embed_claims(texts))

    def save(self, path: str | Path) -> None:
        """Write the probe as JSON, atomically."""
        from averitec_tools.jsonio import atomic_writer

        with atomic_writer(path) as fh:
            json.dump({"format": PRIOR_VERSION, "labels": list(self.labels), "c": self.c,
                       "coef": self.coef.tolist(), "intercept": [float(x) for x in self.intercept],
                       "info": self.info}, fh)

    @classmethod
    def load(cls, path: str | Path) -> ClaimPrior:
        """Read a probe written by :meth:`save`."""
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
        return cls(coef=np.asarray(raw["coef"], dtype=np.float64),
                   intercept=np.asarray(raw["intercept"], dtype=np.float64), c=float(raw["c"]),
                   labels=tuple(raw["labels"]), info=raw.get("info", {}))


def fit_prior(*, vectors: np.ndarray, labels: np.ndarray, groups: np.ndarray, c_grid: Sequence[float] = C_GRID,
              folds: int = 5, seed: int = 0, names: Sequence[str] = AVERITEC_LABELS,
              info: dict[str, Any] | None = None) -> ClaimPrior:
    """Choose ``C`` by grouped cross-validation (:func:`choose_c`), then fit on every item."""
    if len(labels) == 0:
        raise UserError("the claim-only probe has no labelled training claim")
    c, table = choose_c(vectors=vectors, labels=labels, groups=groups, c_grid=c_grid, folds=folds, seed=seed)
    model = _fit_lr(vectors, labels, c)
    coef = np.zeros((len(names), vectors.shape[1]))
    intercept = np.full(len(names), ABSENT)
    if isinstance(model, _OneClass):  # every claim gets the one label seen
        intercept[model.label] = 0.0
        return ClaimPrior(coef=coef, intercept=intercept, c=c, labels=tuple(names),
                          info={**(info or {}), "n": int(len(labels)), "one_label": True})
    binary = len(model.classes_) == 2  # sklearn keeps one row: P(second) = sigmoid(w x + b)
    coef[model.classes_] = np.vstack([np.zeros_like(model.coef_), model.coef_]) if binary else model.coef_
    intercept[model.classes_] = [0.0, model.intercept_[0]] if binary else model.intercept_
    cv = {"folds": folds, "seed": seed, "criterion": "held-out log-likelihood", "grid": table}
    return ClaimPrior(coef=coef, intercept=intercept, c=c, labels=tuple(names),
                      info={**(info or {}), "n": int(len(labels)), "cross_validation": cv})


@dataclass(frozen=True)
class PriorTraining:
    """The probe's training claims: texts, label indices, groups, indices in the training
    file, and what was left out (``info``)."""

    texts: list[str]
    labels: np.ndarray
    groups: np.ndarray
    index: list[int]
    info: dict[str, Any]


def prior_training_set(records: Sequence[Any], *, scored: Sequence[str], pseudo_test: np.ndarray | None = None,
                       names: Sequence[str] = AVERITEC_LABELS) -> PriorTraining:
    """The labelled training ``records`` (AVeriTeC claims) minus every scored claim's normalised
    twin and minus the ``pseudo_test`` mask's claims.

    Example:
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> recs = [AVeriTeCClaim(claim="A!", label="Refuted"), AVeriTeCClaim(claim="b", label="Supported"),
        ...         AVeriTeCClaim(claim="c", label="Refuted")]
        >>> t = prior_training_set(recs, scored=["a"], pseudo_test=np.array([False, False, True]))
        >>> t.texts, t.labels.tolist(), t.info
        (['b'], [0], {'claims': 1, 'train_duplicates_dropped': 1, 'pseudo_test_held_out': 1})
    """
    from averitec_tools.leakage.duplicates import train_duplicates

    dropped = set(train_duplicates(train=[r.claim for r in records], scored=scored))
    held = np.zeros(len(records), dtype=bool) if pseudo_test is None else np.asarray(pseudo_test, dtype=bool)
    index = [i for i, r in enumerate(records)
             if r.label in names and r.claim.strip() and i not in dropped and not held[i]]
    texts = [records[i].claim for i in index]
    info = {"claims": len(index), "train_duplicates_dropped": len(dropped)}
    if held.any():
        info["pseudo_test_held_out"] = int(held.sum())
    return PriorTraining(texts=texts, labels=np.array([list(names).index(records[i].label) for i in index], dtype=int),
                         groups=claim_groups(texts, [records[i].fact_checking_article for i in index]),
                         index=index, info=info)


@dataclass(frozen=True)
class PriorFit:
    """A fitted probe and, for each of its training claims (by index in the training file),
    its out-of-fold probabilities (:func:`out_of_fold_proba`, the fold count and seed of
    the ``C`` choice)."""

    prior: ClaimPrior
    oof: dict[int, np.ndarray]

    def training_proba(self, index: Sequence[int]) -> np.ndarray:
        """Out-of-fold probabilities of training claims (a claim the probe did not train on:
        the probe's own)."""
        return np.stack([self.oof[i] if i in self.oof else self._own(i) for i in index]) if len(index) else \
            np.zeros((0, len(self.prior.labels)))

    def _own(self, i: int) -> np.ndarray:
        raise KeyError(f"training claim {i} is not among the probe's training claims")


def fitted_prior(*, train_path: str | Path, scored: Sequence[str], pseudo_test_claims: int = 0, folds: int = 5,
                 seed: int = 0, cache_dir: str | Path | None = None) -> PriorFit:
    """The probe trained on ``train_path`` (fitted once, then read back from the cache).

    Left out of training: the normalised twins of ``scored`` and the pseudo-test
    (``pseudo_test_claims`` of AVeriTeC's ``train.json``, :mod:`averitec_tools.leakage.pseudo_test`).
    """
    from averitec_tools.cache import cache_root
    from averitec_tools.hashing import file_sha256, json_digest
    from averitec_tools.jsonio import load_json
    from averitec_tools.leakage.pseudo_test import pseudo_test_mask, pseudo_test_size
    from averitec_tools.metrics.minilm_qa_f1 import weights_sha256
    from averitec_tools.records.averitec import AVeriTeCClaim

    raw = load_json(train_path)
    records = [AVeriTeCClaim.from_dict(r, where=f"{train_path}[{i}]", claim_id=i) for i, r in enumerate(raw)]
    sha = file_sha256(train_path)
    mask = pseudo_test_mask([r.claim for r in records], n=pseudo_test_size(pseudo_test_claims, train_sha256=sha))
    data = prior_training_set(records, scored=scored, pseudo_test=mask)
    key = json_digest(PRIOR_VERSION, sha, data.index, C_GRID, folds, seed, weights_sha256())
    path = Path(cache_dir or cache_root("claim-prior")) / f"prior-{key}.json"
    if path.is_file():
        prior = ClaimPrior.load(path)
    else:
        vectors = embed_claims(data.texts)
        prior = fit_prior(vectors=vectors, labels=data.labels, groups=data.groups, folds=folds, seed=seed,
                          info={**data.info, "train": str(train_path), "train_sha256": sha})
        oof = out_of_fold_proba(vectors=vectors, labels=data.labels, groups=data.groups, c=prior.c, folds=folds,
                                seed=seed)
        prior.info["out_of_fold"] = {str(i): [float(x) for x in row] for i, row in zip(data.index, oof, strict=True)}
        prior.save(path)
    oof_rows = prior.info.get("out_of_fold", {})
    return PriorFit(prior=prior, oof={int(i): np.asarray(v) for i, v in oof_rows.items()})


def embed_claims(texts: Sequence[str]) -> np.ndarray:
    """``(n, 384)`` unit-length MiniLM embeddings of ``texts`` (cached under the cache root)."""
    from averitec_tools.cache import cache_root
    from averitec_tools.metrics.minilm_qa_f1 import embed_cached

    if not texts:
        return np.zeros((0, 384))
    vec = embed_cached(list(texts), cache_dir=cache_root("claim-prior", "embeddings"))
    return np.stack([vec[t] for t in texts])


__all__ = ["ABSENT", "C_GRID", "PRIOR_VERSION", "ClaimPrior", "PriorFit", "PriorTraining", "fitted_prior",
           "prior_training_set", "choose_c", "claim_groups", "embed_claims", "fit_prior",
           "group_folds", "out_of_fold_proba"]
