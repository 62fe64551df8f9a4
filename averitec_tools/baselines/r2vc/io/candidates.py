"""One decoding, every ablation row: each claim's candidates stored with their NLI probabilities.

A candidate store is one JSON-lines file, ``<dir>/candidates-<key>.jsonl``. ``key``
(:func:`store_key`) hashes what decides a claim's candidates: the retrieval settings
and corpus, the generator (model, k, subset size, token budget, dtype, seed, device),
the NLI model and how it is fed (pair order, length, batch size, device) and, for the
offline configuration, its data and training settings. It leaves out what is
recomputed from the stored data on every replay: the y_NLI thresholds, the s_ver mode
and weights, the calibrator and the gates. Per claim the store holds

* the evidence pool E(c), the passages in retrieval order;
* the NLI probabilities of every pool passage, computed in one batch in pool order
  (the pipeline always scores the whole pool first, so a stored run and a fresh one see
  the same floats);
* the generator's k candidates: label, rationale, citations, the subset S_i as indices
  into the pool, mean log-probability, decoding configuration, raw text and whether the
  output was unparseable;
* for reading only: each candidate's verifier scores and calibrator features as the
  writing run computed them.

The file is appended and fsynced claim by claim, so an interrupted run keeps what it
finished (a torn last line is dropped on reopening) and a rerun decodes only the rest.

:meth:`CandidateStore.replay` rebuilds a claim's candidates without a model: the LM
candidates are read back (the first k of them); the NLI-only generator's candidates
are re-derived from the stored probabilities and subsets with the configuration's
thresholds. With the NLI-only generator every replayed row equals a separate run
exactly. With an LM the first k of a stored decoding are not the sample a separate
k-candidate decoding draws (all candidates of a claim are sampled in one batch), so the
single-candidate row uses candidate θ_0 of the stored decoding.

Example:
    >>> import tempfile
    >>> from averitec_tools.baselines.r2vc.io.claims import ClaimInput
    >>> p = Passage("d1", "T", "u", "Paris is in France.")
    >>> c = Candidate("True", "r", (0,), (p,), -0.1, 0, "True. r")
    >>> store = CandidateStore.open(tempfile.mkdtemp(), key="k1")
    >>> store.add(claim=ClaimInput(0, "Paris is in France."), pool=[p], probs=np.array([[0.0, 0.1, 0.9]]),
    ...           candidates=[c], malformed=[False])
    >>> again = CandidateStore.open(store.path.parent, key="k1")
    >>> got = again.get(ClaimInput(0, "Paris is in France."))
    >>> got.candidates[0] == c, got.probs.tolist()
    (True, [[0.0, 0.1, 0.9]])
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from averitec_tools.baselines._run.sidecar import read_sidecar, sidecar_header, sidecar_key
from averitec_tools.baselines.r2vc.config import R2VCConfig
from averitec_tools.baselines.r2vc.io.claims import ClaimInput
from averitec_tools.baselines.r2vc.types import Candidate, Passage
from averitec_tools.errors import UserError
from averitec_tools.hashing import json_digest

STORE_FORMAT = "r2vc-candidates-v1"
_WHAT = "candidate store"


def store_key(cfg: R2VCConfig, *, components: dict[str, Any] | None = None, corpus: str | None = None,
              settings: dict[str, Any] | None = None) -> str:
    """Hash of what decides a claim's stored candidates (see the module docs).

    ``cfg`` is the configuration before its ablation switches are applied; rows that
    switch one on replay the same store. ``settings`` and ``components``: what the
    configuration's preset adds (:meth:`~averitec_tools.baselines.r2vc.presets.RunPreset.store_settings`).

    Example:
        >>> from dataclasses import replace
        >>> a = R2VCConfig()
        >>> store_key(a) == store_key(replace(a, verifier=replace(a.verifier, t_ent=0.9)))
        True
        >>> store_key(a) == store_key(replace(a, generator=replace(a.generator, k=8)))
        False
    """
    r, g, v = cfg.retrieval, cfg.generator, cfg.verifier
    retrieval = {k: val for k, val in asdict(r).items() if k != "encode_batch_size"}
    retrieval["corpus"] = corpus or r.corpus
    generator = {k: getattr(g, k) for k in ("model", "k", "subset_size", "max_new_tokens", "dtype", "seed",
                                            "device")}
    if cfg.ablation.nli_only:
        generator["model"] = None
    verifier = {k: getattr(v, k) for k in ("model", "pair_order", "max_length", "batch_size", "device")}
    described = None
    if components is not None:
        described = {"verifier": (components.get("verifier") or {}).get("backend")}
    return json_digest(STORE_FORMAT, retrieval, generator, verifier, settings, described)


@dataclass(frozen=True)
class StoredClaim:
    """One claim's stored decoding (see the module docs)."""

    claim: str
    pool: tuple[Passage, ...]
    probs: np.ndarray
    candidates: tuple[Candidate, ...]
    malformed: tuple[bool, ...]


def _passage_row(p: Passage) -> list[str]:
    return [p.doc_id, p.title, p.url, p.text]


def _candidate_row(c: Candidate, index: dict[int, int], malformed: bool) -> dict[str, Any]:
    return {"label": c.label, "rationale": c.rationale, "citations": list(c.citations),
            "subset": [index[id(p)] for p in c.passages], "mean_logprob": c.mean_logprob,
            "config_index": c.config_index, "raw_text": c.raw_text, "malformed": malformed}


class CandidateStore:
    """A resumable store of every claim's candidates (see the module docs).

    Use :meth:`open`; :meth:`get` returns a claim's :class:`StoredClaim` or ``None``;
    :meth:`add` appends one. ``replay_only`` stores refuse to decode a missing claim
    (the ablation rows are computed from stored candidates only).
    """

    def __init__(self, path: Path, *, key: str, done: dict[str, Any], replay_only: bool = False) -> None:
        self.path = path
        self.key = key
        self._done = done
        self.replay_only = replay_only
        self.n_added = 0
        self.n_replayed = 0

    @classmethod
    def open(cls, directory: str | os.PathLike[str], *, key: str, replay_only: bool = False,
             meta: dict[str, Any] | None = None) -> CandidateStore:
        """Open (creating if needed) the store for ``key`` under ``directory``.

        Raises:
            UserError: ``directory`` is a file, or (``replay_only``) no store for this
                configuration exists there.
        """
        root = Path(directory)
        if root.exists() and not root.is_dir():
            raise UserError(f"{root}: --candidates must be a directory")
        path = root / f"candidates-{key}.jsonl"
        header = sidecar_header("r2vc", config=key, format=STORE_FORMAT)
        if path.exists():
            done = read_sidecar(path, header, what=_WHAT)
        elif replay_only:
            found = sorted(p.name for p in root.glob("candidates-*.jsonl")) if root.is_dir() else []
            raise UserError(
                f"{root}: no candidate store for this configuration (candidates-{key}.jsonl"
                + (f"; found {', '.join(found)}" if found else "") + ")",
                hint="write it first with `averitec baseline r2vc --candidates DIR` and the same configuration",
            )
        else:
            root.mkdir(parents=True, exist_ok=True)
            with path.open("w", encoding="utf-8") as fh:
                fh.write(json.dumps(header | {"meta": meta or {}}) + "\n")
            done = {}
        return cls(path, key=key, done=done, replay_only=replay_only)

    def __len__(self) -> int:
        return len(self._done)

    def get(self, claim: ClaimInput) -> StoredClaim | None:
        """The stored decoding of ``claim`` (None if absent; an error if its text differs)."""
        rec = self._done.get(sidecar_key(claim.claim_id))
        if rec is None:
            return None
        if rec["claim"] != claim.claim:
            raise UserError(f"{self.path}: claim {claim.claim_id!r} was stored with another text",
                            hint="use a separate --candidates directory for each claims file")
        pool = tuple(Passage(*row) for row in rec["pool"])
        cands = tuple(
            Candidate(label=c["label"], rationale=c["rationale"], citations=tuple(c["citations"]),
                      passages=tuple(pool[i] for i in c["subset"]), mean_logprob=c["mean_logprob"],
                      config_index=c["config_index"], raw_text=c["raw_text"])
            for c in rec["candidates"]
        )
        probs = np.asarray(rec["probs"], dtype=np.float64).reshape(len(pool), 3)
        return StoredClaim(claim=rec["claim"], pool=pool, probs=probs, candidates=cands,
                           malformed=tuple(bool(c["malformed"]) for c in rec["candidates"]))

    def add(self, *, claim: ClaimInput, pool: Sequence[Passage], probs: np.ndarray,
            candidates: Sequence[Candidate], malformed: Sequence[bool],
            scores: Sequence[dict[str, Any]] | None = None, features: np.ndarray | None = None) -> None:
        """Append one claim's decoding (fsynced)."""
        index = {id(p): i for i, p in enumerate(pool)}
        for c in candidates:  # a candidate's passages are pool objects; fall back to equality
            for p in c.passages:
                if id(p) not in index:
                    index[id(p)] = list(pool).index(p)
        record = {
            "claim": claim.claim,
            "pool": [_passage_row(p) for p in pool],
            "probs": np.asarray(probs, dtype=np.float64).reshape(len(pool), 3).tolist(),
            "candidates": [_candidate_row(c, index, m) for c, m in zip(candidates, malformed, strict=True)],
            "scores": list(scores or []),
            "features": [] if features is None else np.asarray(features).tolist(),
        }
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps({"key": sidecar_key(claim.claim_id), "record": record}) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        self._done[sidecar_key(claim.claim_id)] = record
        self.n_added += 1

    def describe(self) -> dict[str, Any]:
        """For run summaries: where the store is and how it was used in this run."""
        return {"path": str(self.path), "key": self.key, "claims": len(self), "added": self.n_added,
                "replayed": self.n_replayed}


def open_store(directory: str | os.PathLike[str], *, config: R2VCConfig, components: dict[str, Any],
               settings: dict[str, Any] | None = None, described: dict[str, Any] | None = None,
               corpus: str | None = None, replay_only: bool = False) -> CandidateStore:
    """The store of ``config`` (effective, ablation switches applied) under ``directory``.

    ``settings`` and ``described``: what enters the key beyond the model settings, as the
    configuration's preset gives them
    (:meth:`~averitec_tools.baselines.r2vc.presets.RunPreset.store_settings`: the offline
    configuration's data and training settings, and its trained verifier through its
    ``components``, whose name carries the training hash).
    """
    key = store_key(config, components=described, corpus=corpus, settings=settings)
    meta = {"config": config.name, "components": components, "corpus": corpus or config.retrieval.corpus}
    return CandidateStore.open(directory, key=key, replay_only=replay_only, meta=json.loads(json.dumps(meta, default=str)))


class StoredNLI:
    """An NLI backend that only knows the store's probabilities (replays never run a model)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def predict(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        if not pairs:
            return np.zeros((0, 3))
        claim, text = pairs[0]
        raise UserError(f"candidate store: no NLI probability stored for claim {claim[:60]!r} and passage "
                        f"{text[:60]!r}", hint="the store was written by another configuration")


class StoredGenerator:
    """Stands in for the LM generator when every candidate comes from the store."""

    def __init__(self, name: str) -> None:
        self.name = name

    def generate(self, claim: str, evidence: Sequence[Passage], *, k: int, seed: int) -> Any:
        raise UserError(f"candidate store: claim {claim[:60]!r} is not in the store",
                        hint="write the store first with `averitec baseline r2vc --candidates DIR`")


__all__ = ["CandidateStore", "StoredClaim", "StoredGenerator", "StoredNLI", "open_store", "store_key"]
