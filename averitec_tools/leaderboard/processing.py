"""Scoring stored submissions: a warm per-process scorer (the worker loop that feeds it
is :mod:`averitec_tools.leaderboard.worker`).

:class:`Scorer` keeps one METEOR engine per process. Each phase's gold strings are
tokenised and stemmed once (and cached on disk, keyed by the gold file's SHA-256 and the
tokenizer), and the engine's stem and WordNet-synonym caches stay warm between
submissions, so a warm worker pays only for the new prediction strings.

Each profile is scored with an explicit :class:`~averitec_tools.scoring.warm.WarmScoring`:
the warm engine and the parsed gold the scorer keeps (:class:`KeptGold`, per gold file its
current version only), lent to that profile only. Which gold strings to prepare is the profile's own answer
(``ScoringProfile.gold_strings``). Scores are identical either way (the engine's caches
hold exactly what it would compute), which ``tests/test_leaderboard_store.py`` checks.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from averitec_tools import hashing
from averitec_tools._version import __version__
from averitec_tools.cache import cache_root
from averitec_tools.errors import UserError
from averitec_tools.leaderboard.competition import Phase
from averitec_tools.leaderboard.failures import (
    SERVER_SIDE,
    Failure,
    failure_from_error,
    server_paths,
)
from averitec_tools.leaderboard.limits import SubmissionLimits, check_submission

#: Per-claim metric values are rounded to this many digits in the store (well below the
#: reproducibility tolerance of 1e-9 for the summary, which is stored exactly).
_PER_CLAIM_DIGITS = 12
#: Gold files a :class:`Scorer` keeps (:class:`KeptGold`), the least recently checked dropped
#: beyond: a competition's phases name a few; more only as an admin changes the file.
GOLD_FILES_KEPT = 16


def default_cache_dir() -> Path:
    return cache_root("leaderboard")


@dataclass
class KeptGold:
    """What a :class:`Scorer` keeps of one gold file's current version: its ``(mtime,
    size)``, its SHA-256 and the parsed gold claims the profiles fill (the ``gold_cache``
    of :class:`~averitec_tools.scoring.warm.WarmScoring`). A new version replaces it whole.
    """

    stat: tuple[float, int]
    sha256: str
    claims: dict[Any, Any] = field(default_factory=dict)


def warm_engine(*, max_pairs: int = 500_000) -> Any:
    """A :class:`~averitec_tools.metrics.meteor.MeteorEngine` that also remembers up to
    ``max_pairs`` pair scores (resubmitted evidence is looked up, not scored again)."""
    from averitec_tools.metrics.meteor import MeteorEngine

    return MeteorEngine(allow_download=True, max_pairs=max_pairs)


class Scorer:
    """Scores submission bytes for a phase with a warm engine.

    Args:
        cache_dir: Disk cache for prepared gold strings (``None``: the user cache dir;
            ``False``: no disk cache).
        n_resamples: Bootstrap resamples for the stored 95 % CIs.
        jobs: Processes per submission (``None``: the idle cores, as ``averitec score``).
            After :meth:`start_helpers` they are kept: ``jobs - 1`` helpers forked from
            the warm engine score every submission with this process.
        max_prepared: Prediction strings kept prepared (with their pair scores) between
            submissions; beyond that, all but the gold side are forgotten (memory bound).
    """

    def __init__(self, *, cache_dir: Path | None | bool = None, n_resamples: int = 1000, jobs: int | None = 1,
                 max_prepared: int = 200_000) -> None:
        self.engine = warm_engine()
        self.engine.max_prepared = max_prepared
        self.cache_dir: Path | None = None if cache_dir is False else (default_cache_dir() if cache_dir in (None, True) else Path(str(cache_dir)))
        self.n_resamples = n_resamples
        self.jobs = jobs
        self._prepared_gold: set[str] = set()
        self._gold: dict[str, KeptGold] = {}  # by path, the least recently checked first

    def gold_file(self, path: str | os.PathLike[str]) -> KeptGold:
        """The kept state of the gold file at ``path``, built again when its ``(mtime, size)``
        changed (at most :data:`GOLD_FILES_KEPT` files are kept)."""
        st = os.stat(path)
        stat = (st.st_mtime, st.st_size)
        kept = self._gold.pop(str(path), None)
        if kept is None or kept.stat != stat:
            kept = KeptGold(stat=stat, sha256=hashing.file_sha256(path))
        self._gold[str(path)] = kept
        while len(self._gold) > GOLD_FILES_KEPT:
            del self._gold[next(iter(self._gold))]
        return kept

    def start_helpers(self) -> int:
        """Fork the ``jobs - 1`` kept helper processes now (call after :meth:`prepare_gold`,
        before any other thread starts); returns the processes per submission."""
        from averitec_tools.metrics.warm_pool import WarmPool

        if self.engine.pool is None and (self.jobs or 1) > 1:
            self.engine.pool = WarmPool(engine=self.engine, processes=int(self.jobs or 1))
        return int(self.engine.pool.processes) if self.engine.pool is not None else 1

    def close(self) -> None:
        """Stop the helper processes, if any."""
        if self.engine.pool is not None:
            self.engine.pool.close()

    def reset(self) -> None:
        """After an interrupted submission: forget everything but the gold side (a stop
        may land between two cache updates) and replace the helpers (they may still be
        busy with its parts). Call with no other thread running (it forks)."""
        saved, self.engine.max_prepared = self.engine.max_prepared, 0
        try:
            self.engine.trim()  # with a bound of 0: everything not pinned goes
        finally:
            self.engine.max_prepared = saved
        if self.engine.pool is not None:
            self.engine.pool.close()
            self.engine.pool = None
            self.start_helpers()

    def prepare_gold(self, phase: Phase) -> int:
        """Tokenise and stem the phase's gold strings once; returns how many are ready."""
        from averitec_tools.metrics.tokenize import TOKENIZER_NAME

        if not Path(phase.gold).is_file():
            raise UserError(f"phase {phase.name!r}: gold file {phase.gold} not found")
        digest = self.gold_file(phase.gold).sha256
        if digest in self._prepared_gold:
            return 0
        from averitec_tools.scoring.profiles import get_profile

        strings = list(dict.fromkeys(s for p in phase.profiles for s in get_profile(p).gold_strings(phase.gold)))
        cache_file = None
        cached: dict[str, list[list[str]]] = {}
        if self.cache_dir is not None and strings:
            key = hashing.sha256_hex(f"{digest}|{TOKENIZER_NAME}|{__version__}|{self.engine.lexicon.digest}", length=32)
            cache_file = self.cache_dir / f"gold-{key}.json"
            try:
                cached = json.loads(cache_file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                cached = {}
        known = [text for text in strings if text in cached]
        missing = [text for text in strings if text not in cached]
        self.engine.prepare_many(missing)  # one batch: the gold side's sentences and words at once
        for text in missing:
            prepared = self.engine._prepared[text]
            cached[text] = [list(prepared.words), list(prepared.stems)]
        self.engine.add_analysed_many(known, [cached[t][0] for t in known], [cached[t][1] for t in known])
        if cache_file is not None and missing:
            from averitec_tools.jsonio import atomic_writer

            try:
                with atomic_writer(cache_file) as fh:
                    fh.write(json.dumps(cached))  # dumps: the C encoder (dump streams in Python)
            except OSError:
                pass  # a read-only cache only costs time
        self.engine.load()
        self.engine.pin(strings)  # the gold side survives engine.trim()
        self._prepared_gold.add(digest)
        return len(strings)

    def score(self, *, phase: Phase, content: bytes, file_name: str = "submission", limits: SubmissionLimits | None = None,
              snapshots: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
        """Score ``content`` under every profile of ``phase``; one result dict each.

        Args:
            phase: The phase.
            content: The uploaded bytes.
            file_name: The name the team uploaded it under (the only file name in
                team-visible messages).
            limits: Bounds checked before scoring (:func:`~averitec_tools.leaderboard.limits.check_submission`).
            snapshots: Per judged profile, the submission's stored judge snapshot: its
                replies are re-used (:mod:`~averitec_tools.leaderboard.judging`).

        Raises:
            Failure: the submission is malformed, past a limit or does not match the
                gold file (``team``: its team-safe message), or the phase cannot be
                scored (a failure on the server's side, not charged).
        """
        from averitec_tools.metrics._gc import paused_gc

        try:
            self.prepare_gold(phase)
        except UserError as exc:  # the phase's gold file: the server's side
            raise Failure(SERVER_SIDE, str(exc), charged=False) from None
        try:
            with paused_gc():
                return self._score(phase=phase, content=content, file_name=file_name, limits=limits, snapshots=snapshots or {})
        finally:
            self.engine.trim()

    def _score(self, *, phase: Phase, content: bytes, file_name: str, limits: SubmissionLimits | None,
               snapshots: Mapping[str, Any]) -> list[dict[str, Any]]:
        head = content.lstrip()[:1]
        suffix = ".json" if head in (b"[", b"{") and not _looks_jsonl(content) else ".jsonl"
        with tempfile.TemporaryDirectory(prefix="averitec-lb-") as tmp:
            path = Path(tmp) / f"submission{suffix}"  # never the uploaded name
            path.write_bytes(content)
            private = server_paths(tmp, phase.gold, self.cache_dir)
            try:
                if limits is not None:
                    check_submission(content, limits=limits, file_name=str(path), stats=False)
            except UserError as exc:  # refused in validation: charged, its bytes not kept
                failure = failure_from_error(exc, submission_path=str(path), display_name=file_name, private=private)
                failure.drop_content = failure.charged
                raise failure from None
            try:
                return self._score_file(phase=phase, path=path, snapshots=snapshots, limits=limits)
            except UserError as exc:
                raise failure_from_error(exc, submission_path=str(path), display_name=file_name, private=private) from None

    def _score_file(self, *, phase: Phase, path: Path, snapshots: Mapping[str, Any],
                    limits: SubmissionLimits | None = None) -> list[dict[str, Any]]:
        from averitec_tools.leaderboard.judging import judged_profile, read_snapshot, snapshot_file
        from averitec_tools.leaderboard.phase_rules import score_options
        from averitec_tools.scoring.profiles import get_profile
        from averitec_tools.scoring.warm import WarmScoring

        gold = self.gold_file(phase.gold)
        out = []
        for name in phase.profiles:
            options = score_options(profile=name, options=phase.options, judge_failures=phase.judge_failures, limits=limits)
            snapshot = snapshot_file(path.parent, name, snapshots.get(name)) if judged_profile(name) else None
            if snapshot is not None:
                options["judge_snapshot"] = str(snapshot)
            warm = WarmScoring(profile=name, engine=self.engine, gold_cache=gold.claims)  # lent to this profile alone
            jobs = 1 if self.engine.pool is not None else self.jobs  # the kept helpers do the rest
            result = get_profile(name).score(predictions=path, references=phase.gold, jobs=jobs, warm=warm,
                                             allow_download=True, **options)
            per_claim = [stored_claim(c) for c in result.per_claim]
            keys = list(result.per_claim[0].values) if result.per_claim else []
            if name == phase.profile and phase.primary_metric not in keys:
                raise UserError(
                    f"phase {phase.name!r}: primary_metric {phase.primary_metric!r} is not a per-claim metric of profile "
                    f"{name!r} (the competition file needs one of: {', '.join(keys)})"
                )
            summary = _nan_to_none(json.loads(json.dumps(dict(result.summary), default=str)))  # profiles' summaries name no input path
            out.append({"profile": name, "scorer_version": __version__, "signature": result.signature, "summary": summary,
                        "cis": self._cis(per_claim, [k for k in keys if k in phase.columns]), "per_claim": per_claim,
                        "judge_snapshot": None if snapshot is None else read_snapshot(snapshot)})
        return out

    def _cis(self, per_claim: list[dict[str, Any]], keys: list[str]) -> dict[str, list[float]]:
        """95 % bootstrap CIs of the shown metrics over the scored claims (unscored ones: ``None``, left out);
        one resampling for all of them (:func:`~averitec_tools.metrics.bootstrap.mean_cis`: the
        intervals of separate ``mean_ci`` calls)."""
        from averitec_tools.metrics.bootstrap import mean_cis

        columns = {k: values for k in keys if (values := [c["values"][k] for c in per_claim if c["values"][k] is not None])}
        cis = mean_cis(columns=columns, n_resamples=self.n_resamples, seed=0) if columns else {}
        return {k: [ci.low, ci.high] for k, ci in cis.items()}


def _nan_to_none(obj: Any) -> Any:
    """``obj`` with every NaN float as ``None`` (JSON columns take no NaN).

    Example:
        >>> _nan_to_none({"a": [float("nan"), 1.0], "b": "NaN"})
        {'a': [None, 1.0], 'b': 'NaN'}
    """
    if isinstance(obj, float):
        return None if obj != obj else obj
    if isinstance(obj, dict):
        return {k: _nan_to_none(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_nan_to_none(v) for v in obj]
    return obj


def stored_claim(c: Any) -> dict[str, Any]:
    """A :class:`~averitec_tools.scoring.profiles.base.ClaimScore` as the store keeps it:
    values rounded to 12 digits, NaN (an unscored claim's) as ``None``, and ``unscored``
    (the reason) when the claim was not scored.

    Example:
        >>> from averitec_tools.scoring.profiles.base import ClaimScore
        >>> stored_claim(ClaimScore(3, "Refuted", "Supported", {"a": 1/3, "b": float("nan")}, unscored="judge_request_failed"))
        {'id': 3, 'gold': 'Refuted', 'pred': 'Supported', 'values': {'a': 0.333333333333, 'b': None}, 'confidence': None, 'types': [], 'unscored': 'judge_request_failed'}
    """
    values = {k: None if v != v else round(float(v), _PER_CLAIM_DIGITS) for k, v in c.values.items()}
    row = {"id": c.claim_id, "gold": c.gold_label, "pred": c.pred_label, "values": values, "confidence": c.confidence,
           "types": list(c.claim_types)}
    if getattr(c, "unscored", None):
        row["unscored"] = c.unscored
    return row


def worker_jobs(jobs: int | None, *, workers: int) -> int:
    """Processes per submission for each of ``workers`` scoring workers (``None``: the
    cores shared out among them, at most 4 each).

    Example:
        >>> worker_jobs(3, workers=2), worker_jobs(None, workers=64)
        (3, 1)
    """
    if jobs is not None:
        return max(1, jobs)
    return max(1, min(4, (os.cpu_count() or 1) // max(1, workers)))


def _looks_jsonl(content: bytes) -> bool:
    first = content.lstrip().split(b"\n", 1)[0].strip()
    return first.startswith(b"{") and first.endswith(b"}") and content.strip().count(b"\n") > 0


__all__ = ["GOLD_FILES_KEPT", "KeptGold", "Scorer", "warm_engine", "worker_jobs"]
