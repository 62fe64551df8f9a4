"""What ``offline-minilm`` trains and fits on, decided from the data alone (the leak guard).

:func:`training_plan` reads the training claims and the claims to be scored and returns
exactly which training claims feed the verifier and which the calibration slice (the
slice fits T_ent, T_contr, δ, the calibrator and the gates): a training claim whose
normalised text (:func:`~averitec_tools.leakage.duplicates.normalise_claim`) equals a
scored claim's is in neither. Scored claims enter only by their *text*, never their
labels, so :meth:`TrainingPlan.digests` — the hashes of every training/fitting input —
do not move when the dev labels are shuffled (tests/test_r2vc_leak_guard.py checks it).

Example:
    >>> from averitec_tools.records.averitec import AVeriTeCClaim
    >>> train = [AVeriTeCClaim(claim="It’s red.", label="Refuted"), AVeriTeCClaim(claim="b", label="Supported")]
    >>> plan = training_plan(train=train, scored=["it's red"], n_calibration=1, seed=0)
    >>> plan.keep.tolist(), plan.leak_guard
    ([False, True], {'train_duplicates_dropped': 1})
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.offline.data import split_train, verifier_epochs
from averitec_tools.baselines.r2vc.types import Passage
from averitec_tools.leakage.duplicates import OwnEvidence, rows_digest, train_duplicates
from averitec_tools.records.averitec import AVeriTeCClaim


@dataclass(frozen=True)
class TrainingPlan:
    """Which training claims are held out for the slice and which may be used at all.

    Attributes:
        held: Mask of the calibration-slice claims (:func:`split_train`).
        keep: Mask of the claims with no normalised twin among the scored claims.
        leak_guard: ``{"train_duplicates_dropped": n}`` for the run summary.
    """

    held: np.ndarray
    keep: np.ndarray
    leak_guard: dict[str, Any]

    @property
    def verifier_use(self) -> np.ndarray:
        """Mask of the claims whose pairs fine-tune the verifier."""
        return ~self.held & self.keep

    @property
    def dropped(self) -> list[int]:
        """Indices of the dropped training claims."""
        return np.flatnonzero(~self.keep).tolist()

    def slice_claims(self, train: Sequence[AVeriTeCClaim]) -> list[ClaimInput]:
        """The labelled calibration-slice claims, in the pipeline's input form."""
        return [_claim_input(train, i) for i in map(int, np.flatnonzero(self.held & self.keep))
                if train[i].label is not None]

    def head_claims(self, train: Sequence[AVeriTeCClaim], *, n: int, seed: int) -> list[ClaimInput]:
        """``n`` labelled verifier-training claims the verdict head is also fitted on (``offline.head_extra_claims``).

        Drawn in one seeded order over all of ``train`` (a claim another run drops leaves the
        others' order unchanged); never a slice claim, a scored claim's twin, the pseudo-test, or
        a claim without a label or text (the probe has no out-of-fold row for it).

        Example:
            >>> from averitec_tools.records.averitec import AVeriTeCClaim
            >>> train = [AVeriTeCClaim(claim=t, label="Refuted") for t in "abcd"]
            >>> plan = training_plan(train=train, scored=["b"], n_calibration=1, seed=0)
            >>> [c.claim for c in plan.head_claims(train, n=5, seed=0)]
            ['a', 'd']
        """
        order = np.random.default_rng(seed).permutation(len(train))
        use = self.verifier_use
        picked = [int(i) for i in order if use[i] and train[i].label is not None and train[i].claim.strip()][:n]
        return [_claim_input(train, i) for i in picked]

    def digests(self, *, train: Sequence[AVeriTeCClaim], passages: Sequence[tuple[int, Passage]],
                epochs: int, seed: int, pair_labels: str, max_per_class: int | None) -> dict[str, str]:
        """Hashes of every training/fitting input: the verifier's pairs and the slice's claims."""
        pairs = verifier_epochs(train=train, passages=passages, use=self.verifier_use, epochs=epochs, seed=seed,
                                pair_labels=pair_labels, max_per_class=max_per_class)
        return {"verifier_pairs": rows_digest(p for epoch in pairs for p in epoch),
                "calibration_slice": rows_digest((c.claim_id, c.claim, c.gold_label_raw)
                                                 for c in self.slice_claims(train))}


def _claim_input(train: Sequence[AVeriTeCClaim], i: int) -> ClaimInput:
    """Training claim ``i`` in the pipeline's input form (id ``train:<i>``, its gold label)."""
    from averitec_tools.labels import map_label

    return ClaimInput(claim_id=f"train:{i}", claim=train[i].claim,
                      gold_label=map_label(str(train[i].label), source="averitec", target="r2vc"),
                      gold_label_raw=str(train[i].label))


def training_plan(*, train: Sequence[AVeriTeCClaim], scored: Sequence[str], n_calibration: int,
                  seed: int, pseudo_test: np.ndarray | None = None) -> TrainingPlan:
    """Split the training claims (slice / verifier) and drop the scored claims' normalised twins.

    ``pseudo_test`` (a mask over ``train``, :mod:`averitec_tools.leakage.pseudo_test`)
    marks claims held out from the start: they are in neither side, and the slice is
    drawn from the other claims.
    """
    texts = [c.claim for c in train]
    dropped = train_duplicates(train=texts, scored=scored)
    keep = np.ones(len(train), dtype=bool)
    keep[dropped] = False
    guard: dict[str, Any] = {"train_duplicates_dropped": len(dropped)}
    held = np.zeros(len(train), dtype=bool)
    rest = np.arange(len(train))
    if pseudo_test is not None and pseudo_test.any():
        keep &= ~pseudo_test
        rest = np.flatnonzero(~pseudo_test)
        guard["pseudo_test_held_out"] = int(pseudo_test.sum())
    held[rest] = split_train([texts[i] for i in rest], n_calibration=n_calibration, seed=seed)
    return TrainingPlan(held=held, keep=keep, leak_guard=guard)


def offline_plan(*, train: Sequence[AVeriTeCClaim], dev: Sequence[AVeriTeCClaim], scored: Sequence[str],
                 n_calibration: int, seed: int, pseudo_test: np.ndarray | None = None) -> TrainingPlan:
    """The plan ``offline-minilm`` trains by: every dev claim and every run claim is scored.

    Only the dev claims' *texts* are read (their labels never reach a fit).

    Example:
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> p = offline_plan(train=[AVeriTeCClaim(claim="x!")], dev=[AVeriTeCClaim(claim="X", label="Refuted")],
        ...                  scored=[], n_calibration=0, seed=0)
        >>> p.dropped
        [0]
    """
    return training_plan(train=train, scored=[c.claim for c in dev] + list(scored),
                         n_calibration=n_calibration, seed=seed, pseudo_test=pseudo_test)


def own_evidence(splits: Sequence[tuple[Sequence[AVeriTeCClaim], Sequence[tuple[int, Passage]]]]) -> OwnEvidence:
    """Each claim's own answers over the corpus' answer passages of every (claims, passages) split.

    Example:
        >>> from averitec_tools.records.averitec import AVeriTeCClaim
        >>> from averitec_tools.baselines.r2vc.corpus.averitec_answers import answer_passages
        >>> tr = [AVeriTeCClaim.from_dict({"claim": "It’s red", "questions": [{"question": "q", "answers": [
        ...     {"answer": "Red.", "source_url": "https://a.org/1"}]}]}, where="t")]
        >>> dv = [AVeriTeCClaim(claim="it's red"), AVeriTeCClaim(claim="z", fact_checking_article="https://a.org/1/")]
        >>> ev = own_evidence([(tr, answer_passages(tr, split="train")), (dv, [])])
        >>> sorted(ev.own("it's red")), sorted(ev.own("z"))
        (['averitec-train-0-q0-a0'], ['averitec-train-0-q0-a0'])
    """
    return OwnEvidence.build(
        answers=[(claims[ci].claim, p.doc_id, p.url) for claims, passages in splits for ci, p in passages],
        claims=[(c.claim, c.fact_checking_article) for claims, _ in splits for c in claims])


class ExcludeOwnRetriever:
    """Drops each query's own answers from the results.

    ``own`` maps a query to the doc ids it may not see: a dict (exact query text) or an
    :class:`~averitec_tools.leakage.duplicates.OwnEvidence` (normalised text, and the
    claim's own fact-checking article).

    Example:
        >>> from averitec_tools.baselines.r2vc.types import Passage, ScoredPassage
        >>> class R:
        ...     name = "r"
        ...     def search(self, queries, *, k):
        ...         return [[ScoredPassage(Passage(d, "", "", d), 1.0) for d in "abc"][:k] for _ in queries]
        >>> ex = ExcludeOwnRetriever(base=R(), own={"q": {"a"}})
        >>> [h.passage.doc_id for h in ex.search(["q"], k=2)[0]]
        ['b', 'c']
    """

    def __init__(self, *, base: Any, own: Any) -> None:
        self.base = base
        self.own = own
        self._lookup = own.own if hasattr(own, "own") else (lambda q: own.get(q, set()))
        self.name = f"{base.name}+exclude_own_evidence"
        self.n_removed = 0

    def search(self, queries: Sequence[str], *, k: int) -> list[list[Any]]:
        owns = [self._lookup(q) for q in queries]
        extra = max((len(o) for o in owns), default=0)
        out = []
        for own, hits in zip(owns, self.base.search(queries, k=k + extra), strict=True):
            kept = [h for h in hits if h.passage.doc_id not in own]
            self.n_removed += len(hits) - len(kept)
            out.append(kept[:k])
        return out


__all__ = ["ExcludeOwnRetriever", "TrainingPlan", "offline_plan", "own_evidence", "training_plan"]
