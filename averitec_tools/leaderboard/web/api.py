"""The scripts' API: ``POST /api/submissions`` (``Authorization: Bearer TEAM_TOKEN``,
checked before the body is read) and ``GET /api/submissions/{id}`` (public once on the
board, else its team's token or the admin token). Also :func:`receive_upload`, shared
with the upload form.

Example:
    >>> sorted((r.path, *r.methods) for r in router.routes)
    [('/api/submissions', 'POST'), ('/api/submissions/{sid}', 'GET')]
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response

from averitec_tools.errors import UserError
from averitec_tools.leaderboard.store import QuotaExceeded, Store
from averitec_tools.leaderboard.web.site import SiteDep, parse_id

#: Form fields of an upload that are not disclosure metadata.
UPLOAD_FIELDS = frozenset({"csrf", "token", "system", "phase", "file"})
router = APIRouter()


async def receive_upload(store: Store, team: str, form: Any) -> tuple[int, Any]:
    """Store the upload in ``form`` for ``team``: ``(200, NewSubmission)`` or ``(status, error text)``."""
    upload = form.get("file")
    if upload is None or not hasattr(upload, "read"):
        return 400, "no file uploaded"
    content = await upload.read()
    file_name = str(getattr(upload, "filename", "") or "upload")
    meta = {k: str(v) for k, v in form.multi_items() if k not in UPLOAD_FIELDS}
    try:
        new = await run_in_threadpool(
            lambda: store.submit(team=team, system=str(form.get("system", "")), phase=str(form.get("phase", "")),
                                 content=content, file_name=file_name, meta=meta)
        )
    except QuotaExceeded as exc:
        return 429, str(exc)
    except UserError as exc:
        return 400, str(exc)
    return 200, new


@router.post("/api/submissions")
async def submit_api(request: Request, site: SiteDep) -> Response:
    # the request guard checked (and counted) the bearer token, before the body is read
    team = site.team_of(request) if site.bearer(request) is not None else None
    if team is None:
        return site.error(request, "uploads need a team's token (Authorization: Bearer TEAM_TOKEN)", 403)
    refusal = site.team_post_allowed(request, team)
    if refusal is not None:
        return refusal
    form = await request.form()
    status, result = await receive_upload(site.store, team, form)
    if status != 200:
        return JSONResponse({"error": result}, status_code=status)
    return JSONResponse({"id": result.id, "created": result.created, "again": result.again, "state": result.state,
                         "url": f"/submission/{result.id}"}, status_code=201 if result.created else 200)


@router.get("/api/submissions/{sid}")
def submission_api(request: Request, sid: str, site: SiteDep) -> Response:
    store = site.store
    number = parse_id(sid)
    row = store.submission(number) if number is not None else None
    if row is None:
        return JSONResponse({"error": f"no submission {sid[:30]}"}, status_code=404)
    owner = site.bearer(request) is not None and (site.is_admin(request) or site.team_of(request) == row["team"])
    if not owner and not site.on_board(row):
        return JSONResponse({"error": "this submission's details need its team's token (Authorization: Bearer TOKEN) "
                                      "until it is on the board"}, status_code=403)
    out = {"id": row["id"], "team": row["team"], "system": row["system"], "phase": row["phase"], "state": row["state"]}
    if owner:
        out["reason"] = row["reason"]
    return JSONResponse(out)


__all__ = ["UPLOAD_FIELDS", "receive_upload", "router"]
