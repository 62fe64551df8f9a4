"""The scripts' API: ``POST /api/submissions`` (``Authorization: Bearer TEAM_TOKEN``,
checked before the body is read) and ``GET /api/submissions/{id}`` (public once on the
board, else its team's token or the admin token; ``?wait=SECONDS`` answers when the
submission has its outcome, :mod:`~averitec_tools.leaderboard.web.waits`); ``GET /api/submissions/{id}/claims``
(a page of its visible claims) and ``/claims/{claim_id}`` (one claim, as the per-claim
viewer shows it: ``matrix``, ``assignment``, ``scores``, ...). Also :func:`receive_upload`, shared
with the upload form.

Example:
    >>> sorted((r.path, *r.methods) for r in router.routes)  # doctest: +NORMALIZE_WHITESPACE
    [('/api/status', 'GET'), ('/api/submissions', 'POST'), ('/api/submissions/{sid}', 'GET'),
     ('/api/submissions/{sid}/claims', 'GET'), ('/api/submissions/{sid}/claims/{claim_id}', 'GET')]
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response

from averitec_tools.errors import UserError
from averitec_tools.leaderboard.audit_flags import check_declaration
from averitec_tools.leaderboard.store import PhaseClosed, QuotaExceeded, Store, StoreUnavailable
from averitec_tools.leaderboard.web.site import SiteDep, parse_id
from averitec_tools.leaderboard.web.waits import wait_seconds

#: Form fields of an upload that are not disclosure metadata.
UPLOAD_FIELDS = frozenset({"csrf", "token", "system", "phase", "file", "training_data", "dev_claims_used"})
#: What a team sees when the database cannot store an upload (the details go to the log).
STORE_UNAVAILABLE = ("the server could not store the submission because of a problem on the server's side "
                     "(it does not count against your quota); try again later")
router = APIRouter()
logger = logging.getLogger("averitec.leaderboard")


def upload_fields(form: Any) -> tuple[Any, dict[str, str]] | str:
    """The one uploaded file and the text fields of an upload form, or why it is refused:
    no file, more than one ``file`` part, a file in a text field, a text field sent twice
    (a browser never sends any of these; the last part must not win silently).

    Example:
        >>> from starlette.datastructures import FormData, UploadFile
        >>> import io
        >>> f = UploadFile(io.BytesIO(b"[]"), filename="p.json")
        >>> upload_fields(FormData([("file", f), ("system", "s")]))[1]
        {'system': 's'}
        >>> upload_fields(FormData([("file", f), ("file", f)]))
        "more than one file uploaded (send one 'file' part)"
        >>> upload_fields(FormData([("file", f), ("model", f)]))
        "field 'model' must be text, not a file"
    """
    files = [v for k, v in form.multi_items() if k == "file"]
    if len(files) > 1:
        return "more than one file uploaded (send one 'file' part)"
    if not files or not hasattr(files[0], "read"):
        return "no file uploaded"
    text: dict[str, str] = {}
    for key, value in form.multi_items():
        if key == "file":
            continue
        if not isinstance(value, str):
            return f"field {str(key)[:40]!r} must be text, not a file"
        if key in text:
            return f"field {str(key)[:40]!r} sent more than once"
        text[key] = value
    return files[0], text


async def receive_upload(store: Store, team: str, form: Any) -> tuple[int, Any]:
    """Store the upload in ``form`` for ``team``: ``(200, NewSubmission)`` or ``(status, error text)``
    (a malformed form: 400, :func:`upload_fields`; the database failing: 503, a neutral line)."""
    fields = upload_fields(form)
    if isinstance(fields, str):
        return 400, fields
    upload, text = fields
    content = await upload.read()
    file_name = str(getattr(upload, "filename", "") or "upload")
    meta = {k: v for k, v in text.items() if k not in UPLOAD_FIELDS}
    try:
        declaration = check_declaration(training_data=text.get("training_data"), dev_claims_used=text.get("dev_claims_used"))
        new = await run_in_threadpool(
            lambda: store.submit(team=team, system=text.get("system", ""), phase=text.get("phase", ""),
                                 content=content, file_name=file_name, meta=meta, declaration=declaration)
        )
    except StoreUnavailable as exc:  # disk full, database gone: no path or server detail to the team
        logger.error("upload of team %s not stored: %s", team, exc)
        return 503, STORE_UNAVAILABLE
    except QuotaExceeded as exc:
        return 429, str(exc)
    except PhaseClosed as exc:
        return 403, str(exc)
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
    form, refusal = await site.read_upload(request, team, request.form)
    if refusal is not None:
        return refusal
    status, result = await receive_upload(site.store, team, form)
    if status != 200:
        return JSONResponse({"error": result}, status_code=status)
    return JSONResponse({"id": result.id, "created": result.created, "again": result.again, "state": result.state,
                         "url": f"/submission/{result.id}"}, status_code=201 if result.created else 200)


@router.get("/api/submissions/{sid}")
async def submission_api(request: Request, sid: str, site: SiteDep) -> Response:
    """The submission's state (and, for its team and the organisers, its reason and events);
    with ``?wait=SECONDS`` (at most 30) a pending or running submission is answered once it
    has an outcome or the time is up (:mod:`~averitec_tools.leaderboard.web.waits`)."""
    wait = wait_seconds(request.query_params.get("wait"))
    if isinstance(wait, str):
        return JSONResponse({"error": wait}, status_code=400)
    response, unsettled = await run_in_threadpool(_submission_view, request, sid, site)
    if unsettled is not None and wait:
        await site.outcomes.wait(unsettled, wait)
        response, _ = await run_in_threadpool(_submission_view, request, sid, site)
    return response


def _submission_view(request: Request, sid: str, site: Any) -> tuple[Response, int | None]:
    """The answer of :func:`submission_api`, and the submission's id when the caller may
    wait for its outcome (it is pending or running and the caller may see it)."""
    store = site.store
    number = parse_id(sid)
    row = store.submission(number) if number is not None else None
    if row is None:
        return JSONResponse({"error": f"no submission {sid[:30]}"}, status_code=404), None
    owner = site.bearer(request) is not None and (site.is_admin(request) or site.team_of(request) == row["team"])
    if not owner and not site.on_board(row):
        return JSONResponse({"error": "this submission's details need its team's token (Authorization: Bearer TOKEN) "
                                      "until it is on the board"}, status_code=403), None
    out = {"id": row["id"], "team": row["team"], "system": row["system"], "phase": row["phase"], "state": row["state"],
           "late": bool(row.get("late")), "declaration": row["declaration"], "audit_url": f"/api/submissions/{row['id']}/audit"}
    if owner:
        out["reason"] = row["reason"]
        out["events"] = [{"at": e["at"].isoformat() + "Z", "state": e["state"],
                          "note": e["note"] if site.is_admin(request) or e["state"] != "running" else None}
                         for e in store.events(row["id"])]
    return JSONResponse(out), (int(row["id"]) if row["state"] in ("pending", "running") else None)


@router.get("/api/status")
def status_api(site: SiteDep) -> Response:
    """The public status (:meth:`~averitec_tools.leaderboard.events.SubmissionEvents.queue_health`): counts and ages only."""
    return JSONResponse(site.store.queue_health())


@router.get("/api/submissions/{sid}/claims")
def claims_api(request: Request, sid: str, site: SiteDep) -> Response:
    """A page of the submission's visible claims (``?page=N&q=CLAIM_ID``)."""
    from averitec_tools.leaderboard.web.claims import claim_list

    view, refusal = claim_list(site, request, sid)
    if view is None:
        return refusal  # type: ignore[return-value]
    return JSONResponse({"submission_id": view["row"]["id"], **view["listing"]})


@router.get("/api/submissions/{sid}/claims/{claim_id}")
def claim_api(request: Request, sid: str, claim_id: str, site: SiteDep) -> Response:
    """One visible claim: ``matrix``, ``assignment``, ``scores`` and the rest of
    :func:`~averitec_tools.leaderboard.claim_view.claim_detail`."""
    from averitec_tools.leaderboard.web.claims import claim_view

    view, refusal = claim_view(site, request, sid, claim_id)
    if view is None:
        return refusal  # type: ignore[return-value]
    return JSONResponse({"submission_id": view["row"]["id"], **view["detail"]})


__all__ = ["receive_upload", "router"]
