"""The per-claim viewer's data for the routes in :mod:`pages` (HTML) and :mod:`api` (JSON):
one visible claim of a submission, and the paginated, searchable list of its visible
claims. Visibility is :func:`~averitec_tools.leaderboard.web.views.submission_view`'s
(who may see the submission; which claims the board counts now; whether gold is shown).
"""

from __future__ import annotations

from typing import Any

from fastapi import Request
from fastapi.responses import Response

from averitec_tools.errors import ResourceError, UserError
from averitec_tools.leaderboard.claim_view import (
    HU_METEOR_PROFILES,
    MAX_QUERY_CHARS,
    claim_detail,
    claim_page,
)
from averitec_tools.leaderboard.web.site import Site


def _claims_of(site: Site, request: Request, sid: str) -> tuple[dict[str, Any] | None, Response | None]:
    from averitec_tools.leaderboard.web.views import submission_view

    view, refusal = submission_view(site, request, sid)
    if view is None:
        return None, refusal
    if view["current"] is None:
        return None, site.error(request, f"submission {view['row']['id']} has no scores yet", 404)
    if view["claims"] is None:
        return None, site.error(request, "the claims of this phase are hidden until the organisers reveal it", 404)
    if not view["per_claim"]:
        from averitec_tools.leaderboard.web.views import PER_CLAIM_HIDDEN

        return None, site.error(request, PER_CLAIM_HIDDEN, 403)
    return view, None


def claim_list(site: Site, request: Request, sid: str) -> tuple[dict[str, Any] | None, Response | None]:
    """The page of visible claims asked for (``?page=N&q=CLAIM_ID``), or the refusal."""
    view, refusal = _claims_of(site, request, sid)
    if view is None:
        return None, refusal
    try:
        listing = claim_page(view["claims"], page=request.query_params.get("page"), query=request.query_params.get("q"))
    except UserError as exc:
        return None, site.error(request, str(exc), 400)
    return {**view, "listing": listing}, None


def _gold(site: Site, phase: Any) -> list[Any]:
    cache: dict[str, list[Any]] = site.__dict__.setdefault("_claim_gold", {})
    if phase.name not in cache:
        from averitec_tools.scoring.submission import load_gold_claims

        cache[phase.name] = load_gold_claims(phase.gold, profile=phase.profile)
    return cache[phase.name]


def _engine(site: Site) -> Any:
    if "_claim_engine" not in site.__dict__:
        from averitec_tools.metrics.meteor import MeteorEngine

        site.__dict__["_claim_engine"] = MeteorEngine(allow_download=False)
    return site.__dict__["_claim_engine"]


def parse_claim_id(text: str) -> int | None:
    """A claim id from a URL (``None``: not one; never an exception).

    Example:
        >>> parse_claim_id("7"), parse_claim_id("-1"), parse_claim_id("9" * 5000), parse_claim_id("٣")
        (7, None, None, None)
    """
    return int(text) if text.isascii() and text.isdigit() and len(text) <= MAX_QUERY_CHARS else None


def claim_view(site: Site, request: Request, sid: str, claim_id: str) -> tuple[dict[str, Any] | None, Response | None]:
    """One visible claim of a submission (:func:`~averitec_tools.leaderboard.claim_view.claim_detail`), or the refusal."""
    view, refusal = _claims_of(site, request, sid)
    if view is None:
        return None, refusal
    number = parse_claim_id(claim_id)
    row = next((c for c in view["claims"] if number is not None and int(c["id"]) == number), None)
    if row is None:  # a claim of a split not shown yet is as unknown as one that does not exist
        return None, site.error(request, f"no visible claim {claim_id[:MAX_QUERY_CHARS]!r} in submission {view['row']['id']}", 404)
    phase = view["phase"]
    if phase.profile not in HU_METEOR_PROFILES:
        return None, site.error(request, f"the per-claim viewer shows phases scored with {', '.join(HU_METEOR_PROFILES)}; "
                                f"this phase ranks by {phase.profile}", 404)
    try:
        gold = _gold(site, phase)
        detail = claim_detail(profile=phase.profile, content=site.store.content(view["row"]["id"]), row=row,
                              gold=gold[int(row["id"])], show_gold=view["gold"], engine=lambda: _engine(site))
    except ResourceError as exc:  # the server's NLTK data: the organisers' problem, said once
        return None, site.error(request, f"the claim cannot be shown now: {exc}", 503)
    except UserError as exc:
        return None, site.error(request, str(exc), 404)
    return {**view, "detail": detail}, None


__all__ = ["claim_list", "claim_view"]
