"""Running Ev2R judgements: disk cache, bounded concurrency, retries with backoff, dry runs.

Every reply is stored in an SQLite file keyed by (judge model, prompt hash, claim id,
kind, reference text, predicted text, and the sampling settings of a repeat run) as it
arrives (committed at least once a second and when the run ends), so re-scoring a file, or scoring a second system that shares evidence,
sends nothing for what is known, and an interrupted run resumes where it stopped. Raw
replies are cached (parsing happens at scoring time), failures are not.

Failures follow :mod:`averitec_tools.metrics.judge_policy`. A request the judge refuses
for its content (a prompt past its context) gets the empty reply and is listed in
:attr:`RunStats.refused` in every mode: the profile scores it 0, as the organisers' scorer
does. A request that still fails on the judge's side after its retries either stops the
run (``on_failure="raise"``, the default: the requests in flight finish and are cached,
then one error names every failed claim) or, as the organisers' scorer does (its query
function swallows every exception and returns an empty reply), scores 0
(``on_failure="zero"``), counted in :attr:`RunStats.failed`; or leaves its claim unscored
(``on_failure="unscored"``: the profile excludes it from the means, counts it with the
reason, and a leaderboard marks the row incomplete), also listed there. A
:class:`~averitec_tools.metrics.judge_policy.JudgeSnapshot` given to :func:`run_judgements`
records every reply the score depends on, and its stored replies are used before the cache.
"""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from averitec_tools.cache import cache_root
from averitec_tools.errors import UserError
from averitec_tools.hashing import sha256_hex
from averitec_tools.metrics.ev2r_judges import Judge, Prompt
from averitec_tools.metrics.judge_policy import (
    JudgeContentRefused,
    JudgeSnapshot,
    RetryableJudgeError,
    RetryPolicy,
)

FAILURE_MODES = ("raise", "zero", "unscored")
CACHE_FILE = "ev2r-judgements.sqlite"


def default_cache_path() -> Path:
    """``$AVERITEC_CACHE_DIR`` or ``$XDG_CACHE_HOME/averitec-tools`` (``~/.cache``), file ``ev2r-judgements.sqlite``."""
    return cache_root(CACHE_FILE)


@dataclass(frozen=True)
class JudgeRequest:
    """One judgement to obtain: ``key`` (cache key), the rendered ``prompt`` (text, or content
    parts with images), where it is from, its seed, and its reply-length limit (``None``: the judge's)."""

    key: str
    prompt: Prompt
    where: str
    seed: int | None = None
    max_tokens: int | None = None


def sampling_tag(*, temperature: float = 0.0, seed: int | None = None, repeat: int = 0) -> str:
    """The part of a cache key that tells repeat runs apart (empty for the default run).

    Example:
        >>> sampling_tag(), sampling_tag(temperature=0.7, seed=3, repeat=1)
        ('', 't=0.7;seed=3;rep=1')
    """
    if temperature == 0 and seed is None and repeat == 0:
        return ""
    return f"t={float(temperature)!r};seed={seed};rep={repeat}"


def cache_key(
    *, model: str, prompt_sha256: str, claim_id: int | str, kind: str, reference: str, prediction: str, sampling: str = ""
) -> str:
    """SHA-256 of the judgement's identity (``sampling``: :func:`sampling_tag` of a repeat run).

    Example:
        >>> k = cache_key(model="m", prompt_sha256="p", claim_id=0, kind="qa", reference="r", prediction="x")
        >>> len(k), k == cache_key(model="m", prompt_sha256="p", claim_id=0, kind="qa", reference="r", prediction="y")
        (64, False)
    """
    parts = [model, prompt_sha256, str(claim_id), kind, reference, prediction, *([sampling] if sampling else [])]
    return sha256_hex(json.dumps(parts, ensure_ascii=False))


class JudgementCache:
    """Judge replies on disk (SQLite; written only from the calling thread).

    Writes are committed at most ``commit_every`` seconds apart (and on :meth:`flush` and
    :meth:`close`): a commit costs an fsync (~30 ms on a network disk), which one commit
    per reply would make the bottleneck of a concurrent run. A crash loses at most that
    much of the replies, which a re-run asks for again.

    Example:
        >>> import tempfile, pathlib
        >>> cache = JudgementCache(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite")
        >>> cache.put("k", "reply"); cache.get("k"), cache.get("other")
        ('reply', None)
    """

    def __init__(self, path: str | os.PathLike[str], *, commit_every: float = 1.0) -> None:
        self.path = Path(path)
        self.commit_every = commit_every
        self._last_commit = time.monotonic()
        self._dirty = False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path))
            self._db.execute("CREATE TABLE IF NOT EXISTS judgements (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")
            self._db.commit()
        except (OSError, sqlite3.Error) as exc:
            raise UserError(f"{self.path}: cannot open the judgement cache ({exc})", hint="choose another --judge-cache") from None

    def get_many(self, keys: Sequence[str]) -> dict[str, str]:
        """The cached replies among ``keys`` (one query per 500 keys)."""
        found: dict[str, str] = {}
        unique = list(dict.fromkeys(keys))
        for i in range(0, len(unique), 500):
            chunk = unique[i : i + 500]
            marks = ",".join("?" * len(chunk))
            found.update(self._db.execute(f"SELECT key, reply FROM judgements WHERE key IN ({marks})", chunk).fetchall())
        return found

    def get(self, key: str) -> str | None:
        row = self._db.execute("SELECT reply FROM judgements WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, reply: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO judgements (key, reply) VALUES (?, ?)", (key, reply))
        self._dirty = True
        if time.monotonic() - self._last_commit >= self.commit_every:
            self.flush()

    def flush(self) -> None:
        """Commit what :meth:`put` wrote."""
        if self._dirty:
            try:
                self._db.commit()
            except sqlite3.Error as exc:
                raise UserError(f"{self.path}: cannot write the judgement cache ({exc})") from None
            self._dirty = False
        self._last_commit = time.monotonic()

    def close(self) -> None:
        self.flush()
        self._db.close()


@dataclass
class RunStats:
    """How many judgements were needed, found (in the snapshot given or the cache) and sent
    (with retries), and which were refused or failed.

    ``refused`` lists the requests the judge refused for their content (scored 0 in every
    mode, as the organisers' scorer does, never retried: :mod:`~averitec_tools.metrics.judge_policy`);
    ``failed`` those that failed on the judge's side after their retries (scored 0 under
    ``on_failure="zero"``, left unscored under ``"unscored"``); ``failure_mode`` is the mode the run used.
    """

    needed: int = 0
    cached: int = 0
    sent: int = 0
    retries: int = 0
    failed: list[JudgeRequest] = field(default_factory=list)
    failure_mode: str = "raise"
    refused: list[JudgeRequest] = field(default_factory=list)
    from_snapshot: int = 0


class JudgeFailure(Exception):
    """A request that failed after its retries (or was refused); ``message`` says why."""

    def __init__(self, message: str, *, refused: UserError | None = None, content: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.refused = refused
        self.content = content


def estimate_tokens(text: str) -> int:
    """Rough prompt-token estimate used by ``--dry-run``: characters / 4, rounded up.

    Example:
        >>> estimate_tokens("abcdefgh"), estimate_tokens("abcde")
        (2, 2)
    """
    return -(-len(text) // 4)


def _ask(judge: Judge, request: JudgeRequest, policy: RetryPolicy) -> tuple[str, int]:
    attempt = 0
    while True:
        try:
            if request.max_tokens is None:
                return judge.complete(request.prompt, seed=request.seed), attempt
            return judge.complete(request.prompt, seed=request.seed, max_tokens=request.max_tokens), attempt
        except RetryableJudgeError as exc:
            if attempt >= policy.retries:
                raise JudgeFailure(f"{exc} after {attempt + 1} attempt(s)") from None
            time.sleep(policy.wait(attempt, retry_after=exc.retry_after))
            attempt += 1
        except JudgeContentRefused as exc:  # the same content is refused again: no retry
            raise JudgeFailure(exc.message, content=True) from None
        except UserError as exc:  # refused (e.g. HTTP 401): retrying cannot help
            raise JudgeFailure(exc.message, refused=exc) from None


def _failure_error(failures: list[tuple[JudgeRequest, JudgeFailure]]) -> UserError:
    refused = next((f.refused for _, f in failures if f.refused is not None), None)
    if refused is not None and len(failures) == 1:
        return refused
    shown = ", ".join(r.where for r, _ in failures[:5]) + (f" and {len(failures) - 5} more" if len(failures) > 5 else "")
    return UserError(
        f"the judge failed for {len(failures)} request(s): {shown} (last error: {failures[-1][1].message})",
        hint="re-run to resume: finished judgements are cached; --official-failure-mode scores failures 0 as the organisers do",
    )


def _known(requests: Sequence[JudgeRequest], cache: JudgementCache, snapshot: JudgeSnapshot | None,
           stats: RunStats) -> tuple[dict[str, str], dict[str, JudgeRequest]]:
    """Replies already known (the snapshot's first, then the cache's) and the requests still to send;
    requests the snapshot records as refused are refused again without being sent."""
    replies: dict[str, str] = {}
    if snapshot is not None:
        for r in requests:
            if r.key in replies:
                continue
            if r.key in snapshot.replies:
                replies[r.key] = snapshot.replies[r.key]
            elif r.key in snapshot.refused:
                replies[r.key] = ""
                stats.refused.append(r)
        stats.from_snapshot = len(replies)
    found = cache.get_many([r.key for r in requests if r.key not in replies])
    stats.cached = len(found)
    replies.update(found)
    return replies, {r.key: r for r in requests if r.key not in replies}


def run_judgements(
    requests: Sequence[JudgeRequest],
    *,
    judge: Judge,
    cache: JudgementCache,
    concurrency: int = 4,
    retries: int = 5,
    backoff: float = 1.0,
    progress: bool = False,
    on_failure: str = "raise",
    snapshot: JudgeSnapshot | None = None,
) -> tuple[dict[str, str], RunStats]:
    """Replies for every request (``key -> reply``), from the snapshot, the cache or the judge.

    At most ``concurrency`` requests (and never more than the judge allows) are in flight; a
    transient failure is retried up to ``retries`` times, waiting ``backoff * 2**k`` seconds
    (or ``Retry-After``). Each reply is cached as it arrives and recorded in ``snapshot``
    (whose replies and refusals are re-used first). A request refused for its content gets
    the empty reply, listed in ``stats.refused``, in every mode. One that still fails on the
    judge's side stops the run (``on_failure="raise"``: what is in flight finishes, one
    :class:`UserError` names every failed request) or gets the empty reply, listed in
    ``stats.failed`` (``"zero"``, the organisers' behaviour, or ``"unscored"``).
    """
    if on_failure not in FAILURE_MODES:
        raise ValueError(f"on_failure must be one of {FAILURE_MODES}")
    stats = RunStats(needed=len({r.key for r in requests}), failure_mode=on_failure)
    replies, todo = _known(requests, cache, snapshot, stats)
    failures: list[tuple[JudgeRequest, JudgeFailure]] = []
    bar = _bar(len(todo)) if progress and todo else None
    try:
        for r, outcome in _send(list(todo.values()), judge=judge, policy=RetryPolicy(retries, backoff),
                                workers=max(1, min(concurrency, judge.max_concurrency)),
                                stop=lambda: bool(failures) and on_failure == "raise"):
            if isinstance(outcome, JudgeFailure):
                replies[r.key] = ""
                if outcome.content:
                    stats.refused.append(r)
                    if snapshot is not None:
                        snapshot.refused[r.key] = outcome.message
                    continue
                failures.append((r, outcome))
                stats.failed.append(r)
                continue
            reply, n_retries = outcome
            cache.put(r.key, reply)
            replies[r.key] = reply
            stats.sent += 1
            stats.retries += n_retries
            if bar is not None:
                bar.update(1)
    finally:
        cache.flush()
        if bar is not None:
            bar.close()
    if failures and on_failure == "raise":
        raise _failure_error(failures)
    if snapshot is not None:
        failed = {r.key for r in stats.failed}
        snapshot.replies.update({k: v for k, v in replies.items() if k not in failed and k not in snapshot.refused})
    return replies, stats


def _send(todo: list[JudgeRequest], *, judge: Judge, policy: RetryPolicy, workers: int,
          stop: Any) -> Iterator[tuple[JudgeRequest, tuple[str, int] | JudgeFailure]]:
    """Each request's outcome as it completes, at most ``workers`` in flight; none is started once ``stop()``."""
    with ThreadPoolExecutor(max_workers=workers) as pool:
        pending: dict[Future[tuple[str, int]], JudgeRequest] = {}
        queue = deque(todo)
        while queue or pending:
            while queue and len(pending) < workers and not stop():
                r = queue.popleft()
                pending[pool.submit(_ask, judge, r, policy)] = r
            if not pending:
                break
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                r = pending.pop(fut)
                try:
                    yield r, fut.result()
                except JudgeFailure as exc:
                    yield r, exc


def _bar(total: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc="Ev2R judge", unit="call", file=sys.stderr, leave=False)


__all__ = [
    "CACHE_FILE", "JudgeRequest", "JudgementCache", "cache_key", "default_cache_path", "estimate_tokens",
    "run_judgements", "sampling_tag",
]
