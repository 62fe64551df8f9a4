"""``ev2r(url=...,model=...)``: Ev2R Q+A recall from any OpenAI-compatible judge, through its cache.

The fever8 profile's judge code does the work: the packaged Ev2R prompt (``qa`` section),
:func:`~averitec_tools.metrics.ev2r_runner.run_judgements` with its SQLite cache (keyed by
model, prompt hash, claim id, texts), retries and bounded concurrency, and the organisers'
reply parser. Unlike the organisers' scorer, a request that fails after its retries and a
reply that cannot be parsed are *not* scored 0: they are counted (``details()``) and the
item is left out of the correlations. When every request fails the run is an error.

    >>> str(Ev2RScorer(url="http://127.0.0.1:1/v1", model="m"))
    'ev2r(url=http://127.0.0.1:1/v1,model=m)'
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from averitec_tools.errors import UserError
from averitec_tools.metrics.base import register_metric
from averitec_tools.metrics.evidence_scorer import EvidenceScorer
from averitec_tools.records.rated import RatedItem

_DESCRIPTION = ("Ev2R Q+A recall from one OpenAI-compatible judge, through its cache; failed requests and "
                "unparseable replies are left out (None), never scored 0")


@register_metric
class Ev2RScorer(EvidenceScorer, name="ev2r", higher_is_better=True, description=_DESCRIPTION,
                 citation="Akhtar et al. (2024), Ev2R"):
    """Ev2R recall (share of reference facts the predicted evidence supports) from one judge."""

    llm: ClassVar[bool] = True
    url: str = ""
    model: str = "meta-llama/Llama-3.3-70B-Instruct"
    api_key_env: str = "OPENAI_API_KEY"
    cache: str = ""
    concurrency: int = 4
    retries: int = 2
    timeout: float = 120.0

    def check_ready(self) -> None:
        if not self.url:
            raise UserError("scorer ev2r needs url=BASE_URL (an OpenAI-compatible endpoint), e.g. "
                            "ev2r(url=http://127.0.0.1:8000/v1,model=NAME)")

    def score(self, *, items: Sequence[RatedItem]) -> list[float | None]:
        from averitec_tools.metrics.ev2r import JudgePrompt, parse_judgement
        from averitec_tools.metrics.ev2r_judges import make_judge
        from averitec_tools.metrics.ev2r_runner import (
            JudgementCache,
            JudgeRequest,
            cache_key,
            default_cache_path,
            run_judgements,
        )

        prompt = JudgePrompt.load()
        judge = make_judge(backend="openai", model=self.model, url=self.url, api_key_env=self.api_key_env,
                           timeout=self.timeout)
        requests = []
        for it in items:
            text = prompt.render("qa", claim=it.claim, reference=it.reference, prediction=it.predicted)
            key = cache_key(model=self.model, prompt_sha256=prompt.sha256, claim_id=f"meta-eval:{it.claim_id}",
                            kind="qa", reference=it.reference, prediction=it.predicted)
            requests.append(JudgeRequest(key=key, prompt=text, where=f"claim {it.claim_id} ({it.team})"))
        cache = JudgementCache(self.cache or default_cache_path())
        try:
            replies, stats = run_judgements(requests, judge=judge, cache=cache, concurrency=self.concurrency,
                                            retries=self.retries, on_failure="zero")
        finally:
            cache.close()
        failed = {r.key for r in stats.failed}
        if requests and len(failed) == len({r.key for r in requests}):
            raise UserError(f"judge {self.url}: every request failed ({len(failed)}); nothing to correlate",
                            hint="check the judge URL and model; finished judgements are cached")
        out: list[float | None] = []
        unparseable = 0
        for r in requests:
            if r.key in failed:
                out.append(None)
                continue
            j = parse_judgement(replies[r.key], "qa")
            if not j.parsed:
                unparseable += 1
            out.append(j.recall if j.parsed else None)
        counts = {"failed": sum(r.key in failed for r in requests), "unparseable": unparseable, "sent": stats.sent,
                  "cached": stats.cached}
        object.__setattr__(self, "_counts", counts)  # the run's facts, not a parameter
        return out

    def details(self) -> dict[str, Any]:
        return {"judge": {"url": self.url, "model": self.model, **self.__dict__.get("_counts", {})}}


__all__ = ["Ev2RScorer"]
