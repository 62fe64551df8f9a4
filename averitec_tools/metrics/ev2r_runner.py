"""Running Ev2R judgements: disk cache, bounded concurrency, retries with backoff, dry runs.

Every reply is stored in an SQLite file keyed by (judge model, prompt hash, claim id,
kind, reference text, predicted text) as soon as it arrives, so re-scoring a file, or
scoring a second system that shares evidence, sends nothing for what is known, and an
interrupted run resumes where it stopped. Raw replies are cached (parsing happens at
scoring time), failures are not.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.metrics.ev2r_judges import Judge, RetryableJudgeError


def default_cache_path() -> Path:
    """``$AVERITEC_CACHE_DIR`` or ``$XDG_CACHE_HOME/averitec-tools`` (``~/.cache``), file ``ev2r-judgements.sqlite``."""
    base = os.environ.get("AVERITEC_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "averitec-tools"
    )
    return Path(base) / "ev2r-judgements.sqlite"


@dataclass(frozen=True)
class JudgeRequest:
    """One judgement to obtain: ``key`` (cache key), the rendered ``prompt`` and where it is from."""

    key: str
    prompt: str
    where: str


def cache_key(*, model: str, prompt_sha256: str, claim_id: int | str, kind: str, reference: str, prediction: str) -> str:
    """SHA-256 of the judgement's identity.

    Example:
        >>> k = cache_key(model="m", prompt_sha256="p", claim_id=0, kind="qa", reference="r", prediction="x")
        >>> len(k), k == cache_key(model="m", prompt_sha256="p", claim_id=0, kind="qa", reference="r", prediction="y")
        (64, False)
    """
    ident = json.dumps([model, prompt_sha256, str(claim_id), kind, reference, prediction], ensure_ascii=False)
    return hashlib.sha256(ident.encode("utf-8")).hexdigest()


class JudgementCache:
    """Judge replies on disk (SQLite; written only from the calling thread).

    Example:
        >>> import tempfile, pathlib
        >>> cache = JudgementCache(pathlib.Path(tempfile.mkdtemp()) / "c.sqlite")
        >>> cache.put("k", "reply"); cache.get("k"), cache.get("other")
        ('reply', None)
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path))
            self._db.execute("CREATE TABLE IF NOT EXISTS judgements (key TEXT PRIMARY KEY, reply TEXT NOT NULL)")
            self._db.commit()
        except (OSError, sqlite3.Error) as exc:
            raise UserError(f"{self.path}: cannot open the judgement cache ({exc})", hint="choose another --judge-cache") from None

    def get(self, key: str) -> str | None:
        row = self._db.execute("SELECT reply FROM judgements WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, reply: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO judgements (key, reply) VALUES (?, ?)", (key, reply))
        self._db.commit()

    def close(self) -> None:
        self._db.close()


@dataclass
class RunStats:
    """How many judgements were needed, found in the cache and sent (with retries)."""

    needed: int = 0
    cached: int = 0
    sent: int = 0
    retries: int = 0


def estimate_tokens(text: str) -> int:
    """Rough prompt-token estimate used by ``--dry-run``: characters / 4, rounded up.

    Example:
        >>> estimate_tokens("abcdefgh"), estimate_tokens("abcde")
        (2, 2)
    """
    return -(-len(text) // 4)


def _ask(judge: Judge, request: JudgeRequest, retries: int, backoff: float) -> tuple[str, int]:
    attempt = 0
    while True:
        try:
            return judge.complete(request.prompt), attempt
        except RetryableJudgeError as exc:
            if attempt >= retries:
                raise UserError(
                    f"{request.where}: the judge failed {attempt + 1} times (last: {exc})",
                    hint="re-run to resume: finished judgements are cached",
                ) from None
            delay = exc.retry_after if exc.retry_after is not None else backoff * 2**attempt
            time.sleep(min(delay, 60.0))
            attempt += 1


def run_judgements(
    requests: Sequence[JudgeRequest],
    *,
    judge: Judge,
    cache: JudgementCache,
    concurrency: int = 4,
    retries: int = 5,
    backoff: float = 1.0,
    progress: bool = False,
) -> tuple[dict[str, str], RunStats]:
    """Replies for every request (``key -> reply``), from the cache or from the judge.

    At most ``concurrency`` requests (and never more than the judge allows) are in flight;
    a transient failure is retried up to ``retries`` times, waiting ``backoff * 2**k``
    seconds (or the server's ``Retry-After``). Each reply is cached as it arrives.
    """
    stats = RunStats(needed=len({r.key for r in requests}))
    replies: dict[str, str] = {}
    todo: dict[str, JudgeRequest] = {}
    for r in requests:
        if r.key in replies or r.key in todo:
            continue
        hit = cache.get(r.key)
        if hit is None:
            todo[r.key] = r
        else:
            replies[r.key] = hit
    stats.cached = len(replies)
    bar = _bar(len(todo)) if progress and todo else None
    workers = max(1, min(concurrency, judge.max_concurrency))
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            pending: dict[Future[tuple[str, int]], JudgeRequest] = {}
            queue = list(todo.values())
            while queue or pending:
                while queue and len(pending) < workers:
                    r = queue.pop(0)
                    pending[pool.submit(_ask, judge, r, retries, backoff)] = r
                done, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in done:
                    r = pending.pop(fut)
                    try:
                        reply, n_retries = fut.result()
                    except BaseException:
                        _keep_finished(pending, cache)  # what is in flight is still worth caching
                        raise
                    cache.put(r.key, reply)
                    replies[r.key] = reply
                    stats.sent += 1
                    stats.retries += n_retries
                    if bar is not None:
                        bar.update(1)
    finally:
        if bar is not None:
            bar.close()
    return replies, stats


def _keep_finished(pending: dict[Future[tuple[str, int]], JudgeRequest], cache: JudgementCache) -> None:
    for fut, r in pending.items():
        if fut.cancel():
            continue
        try:
            reply, _ = fut.result()
        except BaseException:  # noqa: BLE001, S112 - the first failure is the one reported
            continue
        cache.put(r.key, reply)


def _bar(total: int) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc="Ev2R judge", unit="call", file=sys.stderr, leave=False)


__all__ = [
    "JudgeRequest",
    "JudgementCache",
    "RunStats",
    "cache_key",
    "default_cache_path",
    "estimate_tokens",
    "run_judgements",
]
