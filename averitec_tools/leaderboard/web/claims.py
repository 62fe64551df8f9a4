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

#: The profile whose claims the viewer shows with their images.
AVERIMATEC = "averimatec"
#: Parsed uploads kept for the image requests of a claim page.
KEPT_UPLOADS = 4


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
        if phase.profile == AVERIMATEC:
            from averitec_tools.scoring.averimatec_inputs import load_gold

            cache[phase.name] = load_gold(phase.gold)
        else:
            from averitec_tools.scoring.submission import load_gold_claims

            cache[phase.name] = load_gold_claims(phase.gold, profile=phase.profile)
    return cache[phase.name]


def _uploaded(site: Site, sid: int) -> list[Any]:
    """A submission's parsed items (the last few kept: a page asks for each of its images)."""
    from averitec_tools.leaderboard.claim_view_averimatec import uploaded_items

    cache: dict[int, list[Any]] = site.__dict__.setdefault("_claim_items", {})
    if sid not in cache:
        while len(cache) >= KEPT_UPLOADS:
            cache.pop(next(iter(cache)))
        cache[sid] = uploaded_items(site.store.content(sid))
    return cache[sid]


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


def _visible_claim(site: Site, request: Request, sid: str, claim_id: str,
                   ) -> tuple[dict[str, Any] | None, dict[str, Any] | None, Response | None]:
    """The submission's view and the claim's stored row, when the claim is visible."""
    view, refusal = _claims_of(site, request, sid)
    if view is None:
        return None, None, refusal
    number = parse_claim_id(claim_id)
    row = next((c for c in view["claims"] if number is not None and int(c["id"]) == number), None)
    if row is None:  # a claim of a split not shown yet is as unknown as one that does not exist
        return None, None, site.error(request, f"no visible claim {claim_id[:MAX_QUERY_CHARS]!r} in submission "
                                      f"{view['row']['id']}", 404)
    return view, row, None


def claim_view(site: Site, request: Request, sid: str, claim_id: str) -> tuple[dict[str, Any] | None, Response | None]:
    """One visible claim of a submission (:func:`~averitec_tools.leaderboard.claim_view.claim_detail`), or the refusal."""
    view, row, refusal = _visible_claim(site, request, sid, claim_id)
    if view is None or row is None:
        return None, refusal
    phase = view["phase"]
    if phase.profile == AVERIMATEC:
        from averitec_tools.leaderboard.claim_view_averimatec import averimatec_detail

        try:
            detail = averimatec_detail(items=_uploaded(site, int(view["row"]["id"])), row=row,
                                       gold=_gold(site, phase)[int(row["id"])], show_gold=view["gold"])
        except (UserError, ValueError) as exc:
            return None, site.error(request, str(exc)[:200], 404)
        return {**view, "detail": detail}, None
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


def claim_image(site: Site, request: Request, sid: str, claim_id: str, item: str, k: str,
                ) -> tuple[bytes | None, Response | None]:
    """An evidence image of a visible claim of an AVerImaTeC submission, re-encoded as a PNG
    (:func:`~averitec_tools.leaderboard.claim_view_averimatec.evidence_png`), or the refusal."""
    view, row, refusal = _visible_claim(site, request, sid, claim_id)
    if view is None or row is None:
        return None, refusal
    n_item, n_k = parse_claim_id(item), parse_claim_id(k)
    if view["phase"].profile != AVERIMATEC or n_item is None or n_k is None:
        return None, site.error(request, "no such image", 404)
    from averitec_tools.leaderboard.claim_view_averimatec import evidence_png

    try:
        png = evidence_png(items=_uploaded(site, int(view["row"]["id"])), claim_id=int(row["id"]), item=n_item, k=n_k,
                           limits=None)
    except (UserError, ValueError) as exc:
        return None, site.error(request, str(exc)[:200], 404)
    return png, None


__all__ = ["claim_image", "claim_list", "claim_view"]
