"""``averitec leaderboard ...``: host a leaderboard (store, score, rank, serve).

Every command takes ``--db URL`` (default ``$AVERITEC_LEADERBOARD_DB`` or
``sqlite:///leaderboard.db``; PostgreSQL: ``postgresql+psycopg://user@host/db``)::

    averitec leaderboard init examples/leaderboard/averitec-dev.yaml
    averitec leaderboard team add blue              # prints the team's token once
    averitec leaderboard team rotate-token blue     # a new token; the old one and its sessions stop working
    averitec leaderboard team remove blue           # no access any more; its submissions cancelled (kept)
    averitec leaderboard secret rotate              # a new session secret: every session ends
    averitec leaderboard submit preds.json --team blue --system bm25 --phase dev --meta model=bloom-7b1
    averitec leaderboard status                     # submissions, queue and worker health
    averitec leaderboard cancel 17                  # take a submission out of the queue or off the board
    averitec leaderboard show --phase dev
    averitec leaderboard export --phase dev --format md|html|json|csv|latex
    averitec leaderboard rescore                    # after a scorer version change
    averitec leaderboard reveal --phase test        # end a phase: private scores shown
    averitec leaderboard serve --port 8000 --workers 1
    averitec leaderboard work                       # a scoring worker without the web server
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from averitec_tools.argtypes import NON_NEGATIVE, PORT, POSITIVE, SECONDS
from averitec_tools.cli._command import add_command, add_json_flag, emit
from averitec_tools.cli._leaderboard_access import add_access_parsers, add_secret_option
from averitec_tools.cli._leaderboard_jobs import add_job_parsers
from averitec_tools.cli._leaderboard_store import (
    _db_default,
    _need_extra,
    _store,
    check_secret_file,
    closing_stores,
)
from averitec_tools.errors import UserError
from averitec_tools.jsonio import print_json

EXPORT_FORMATS = ("md", "html", "json", "csv", "latex")
HEADER_TIMEOUT, MAX_CONNECTIONS = 10.0, 500  # leaderboard.web.connections' defaults (not imported: `averitec` stays light)


def add_parser(subparsers: Any) -> None:
    parser = add_command(subparsers, "leaderboard", doc=__doc__,
                         help="host a leaderboard: store, score, rank (CIs, tiers) and serve submissions")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--db", default=None, help="database URL (default: $AVERITEC_LEADERBOARD_DB or sqlite:///leaderboard.db)")
    add_json_flag(common)
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sub.required = True

    p = sub.add_parser("init", parents=[common], help="create the database and load a competition YAML")
    p.add_argument("competition", metavar="COMPETITION.yaml")
    add_secret_option(p)
    p.set_defaults(func=_init)
    add_access_parsers(sub, common)

    _add_submit_parser(sub, common)

    add_job_parsers(sub, common)

    p = sub.add_parser("show", parents=[common], help="print the ranked leaderboard of a phase")
    p.add_argument("--phase", required=True)
    p.set_defaults(func=_show)

    p = sub.add_parser("export", parents=[common], help="export the ranked leaderboard")
    p.add_argument("--phase", required=True)
    p.add_argument("--format", choices=EXPORT_FORMATS, default="md")
    p.add_argument("--out", help="write to this file instead of stdout")
    p.set_defaults(func=_export)

    p = sub.add_parser("reveal", parents=[common], help="end a phase: show private/hidden scores")
    p.add_argument("--phase", required=True)
    p.set_defaults(func=_reveal)

    p = sub.add_parser("serve", parents=[common], help="run the web app (and scoring workers)")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=PORT, default=8000)
    p.add_argument("--workers", type=NON_NEGATIVE, default=1, help="scoring worker processes (0: none)")
    p.add_argument("--lease-seconds", type=SECONDS, default=120.0, help="a running submission whose worker is silent this long is scored again")
    p.add_argument("--poll-seconds", type=SECONDS, default=0.5, help="how often idle workers look for new submissions (an upload to this server also wakes them at once)")
    p.add_argument("--jobs", type=_jobs, default=1, help="processes per submission, forked once per worker and kept warm: N or 'auto' (the cores "
                   "shared out among the workers, at most 4 each); default 1")
    add_secret_option(p)
    p.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDRESS", help="a reverse proxy whose X-Forwarded-For / "
                   "-Proto headers are believed (repeatable; default none: the connection's address is the client's)")
    p.add_argument("--header-timeout", type=SECONDS, default=HEADER_TIMEOUT, help="seconds a request may take to send its headers "
                   f"(default {HEADER_TIMEOUT:g})")
    p.add_argument("--max-connections", type=POSITIVE, default=MAX_CONNECTIONS, help=f"open connections at most (default {MAX_CONNECTIONS})")
    p.set_defaults(func=_serve)

    p = sub.add_parser("work", parents=[common], help="run a scoring worker without the web server (e.g. on another machine "
                       "against the same PostgreSQL database; run it under a process supervisor such as systemd)")
    p.add_argument("--once", action="store_true", help="stop when no submission is pending")
    p.add_argument("--lease-seconds", type=SECONDS, default=120.0)
    p.add_argument("--poll-seconds", type=SECONDS, default=0.5)
    p.add_argument("--jobs", type=_jobs, default=1, help="processes per submission, kept warm: N or 'auto' (the cores, at most 4)")
    p.set_defaults(func=_work)
    for action in sub.choices.values():
        action.set_defaults(func=closing_stores(action.get_default("func")))


def _add_submit_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("submit", parents=[common], help="store (and score) a submission file (admin path)")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--team", required=True)
    p.add_argument("--system", required=True)
    p.add_argument("--phase", required=True)
    p.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE", help="disclosure metadata (repeatable)")
    p.add_argument("--training-data", metavar="TEXT", help="the team's declaration: its training data (at most 500 characters)")
    p.add_argument("--dev-claims-used", choices=("yes", "no"), help="the team's declaration: whether any dev claim was used")
    p.add_argument("--no-score", action="store_true", help="leave it pending for the server's workers")
    p.set_defaults(func=_submit)


def _jobs(value: str) -> int | None:
    if value == "auto":
        return None
    if not value.isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError("expected a positive integer or 'auto'")
    return int(value)


def _init(args: argparse.Namespace) -> int:
    from averitec_tools.leaderboard.competition import load_competition
    from averitec_tools.leaderboard.secret import ensure_secret, secret_path

    path = Path(args.competition)
    comp = load_competition(path)
    inputs = (path, *(p.gold for p in comp.phases))
    check_secret_file(args, inputs=inputs)
    store = _store(args, create=True, inputs=inputs)
    token = store.init(path.read_text(encoding="utf-8"), where=str(path))
    secret = secret_path(store.url, args.secret_file)
    ensure_secret(secret)
    missing = [p.gold for p in comp.phases if not Path(p.gold).is_file()]
    out = {"db": store.url, "competition": comp.name, "phases": [p.name for p in comp.phases], "admin_token": token, "missing_gold": missing,
           "secret_file": str(secret)}
    if args.json:
        print_json(out)
    else:
        print(f"competition {comp.name!r} stored in {store.url} (phases: {', '.join(out['phases'])})")
        if token:
            print(f"admin token (shown once): {token}")
        for g in missing:
            print(f"warning: gold file {g} not found")
    return 0


def _parse_meta(items: list[str]) -> dict[str, str]:
    meta = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UserError(f"--meta {item!r}: expected KEY=VALUE")
        meta[key.strip()] = value.strip()
    return meta


def _submit(args: argparse.Namespace) -> int:
    """The web upload's path from the command line: the same checks (empty file, names,
    disclosure keys, quota), the same scoring; a failure is one line on stderr naming the
    file, exit 2."""
    from averitec_tools.leaderboard.processing import Scorer
    from averitec_tools.leaderboard.worker import process_one

    path = Path(args.file)
    try:
        content = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: cannot read the submission ({exc.strerror})") from None
    if not content.strip():
        raise UserError(f"{path}: the file is empty")
    from averitec_tools.leaderboard.audit_flags import check_declaration

    declaration = check_declaration(training_data=args.training_data, dev_claims_used=args.dev_claims_used)
    store = _store(args, inputs=(path,))
    new = store.submit(team=args.team, system=args.system, phase=args.phase, content=content, file_name=path.name,
                       meta=_parse_meta(args.meta), declaration=declaration)
    if new.created and not args.no_score:
        process_one(store, Scorer(n_resamples=store.competition().n_resamples), submission_id=new.id)
    row = store.submission(new.id)
    if row["state"] == "failed" and not row["charged"]:  # the server's side: the organiser running this sees the cause
        raise UserError(f"{path}: submission {new.id} was not scored because of a problem on the server's side: "
                        f"{server_cause(row['server_reason'])}")
    if row["state"] == "failed":
        reason, shown = row["reason"], row["file_name"]
        reason = f"{path}{reason[len(shown):]}" if reason.startswith(shown) else f"{path}: {reason}"
        raise UserError(f"{reason} (submission {new.id} failed)")
    out = {"id": new.id, "created": new.created, "again": new.again, "state": row["state"], "reason": row["reason"]}
    if row["state"] == "finished":
        res = store.results([new.id])[new.id][0]
        out["signature"] = res["signature"]
        out["metrics"] = {k: v for k, v in res["summary"].items() if k not in ("signature", "profile")}
    if args.json:
        print_json(out)
    else:
        how = "stored again (the same file had failed)" if new.again else "stored" if new.created else "already stored (same file)"
        print(f"submission {new.id}: {how}; state {row['state']}")
    return 0


def server_cause(text: str | None) -> str:
    """The organisers' failure reason on one line (a traceback: its last line).

    Example:
        >>> server_cause("Traceback (most recent call last):\\n  File ...\\nRuntimeError: boom\\n")
        'RuntimeError: boom'
    """
    lines = [line.strip() for line in (text or "unknown").strip().splitlines() if line.strip()]
    return lines[-1] if lines and lines[0].startswith("Traceback") else " ".join(lines)


def _ranked(store: Any, phase_name: str) -> tuple[Any, Any, Any]:
    from averitec_tools.leaderboard.ranking import rank_board

    comp = store.competition()
    phase = comp.phase(phase_name)
    return comp, phase, rank_board(store, phase.name)


def _show(args: argparse.Namespace) -> int:
    from averitec_tools.leaderboard.export import export

    comp, phase, board = _ranked(_store(args), args.phase)
    if args.json:
        import json

        print_json(json.loads(export(board.entries, competition=comp, phase=phase, fmt="json", floor=board.floor)))
        return 0
    from rich.console import Console

    from averitec_tools.cli._leaderboard_tables import terminal_tables
    from averitec_tools.leaderboard.export import floor_note

    console = Console()
    for table in terminal_tables(board.entries, competition=comp, phase=phase, width=console.width):
        console.print(table)
    console.print(floor_note(board.floor, fmt="text").strip(), markup=False, highlight=False)
    console.print("signature:")  # then the signature, folded at the terminal's width (no spaces in it)
    console.print(board.signature, markup=False, highlight=False, overflow="fold")
    return 0


def _export(args: argparse.Namespace) -> int:
    from averitec_tools.jsonio import atomic_writer
    from averitec_tools.leaderboard.export import export

    store = None
    if args.out:
        from averitec_tools.leaderboard.db import database_files
        from averitec_tools.outputs import check_output_file

        check_output_file(args.out, option="--out", protected=database_files(args.db or _db_default()))
        store = _store(args)
        check_output_file(args.out, option="--out", protected=store.protected_files())  # the gold files too
    comp, phase, board = _ranked(store or _store(args), args.phase)
    text = export(board.entries, competition=comp, phase=phase, fmt=args.format, floor=board.floor)
    if args.out:
        with atomic_writer(args.out) as fh:
            fh.write(text)
        if args.json:
            print_json({"out": args.out, "format": args.format, "rows": len(board.entries)})
    elif args.json and args.format != "json":
        print_json({"format": args.format, "text": text})
    else:
        print(text, end="")
    return 0


def _reveal(args: argparse.Namespace) -> int:
    store = _store(args)
    store.reveal(args.phase)
    return emit(args, {"phase": args.phase, "revealed": True}, f"phase {args.phase!r} revealed")


def _serve(args: argparse.Namespace) -> int:
    _need_extra("sqlalchemy", "alembic", "fastapi", "uvicorn", "jinja2", "multipart")
    from averitec_tools.leaderboard.web.server import serve

    store = _store(args)
    check_secret_file(args, store=store)
    store.close()
    serve(url=args.db or _db_default(), host=args.host, port=args.port, workers=args.workers, lease_seconds=args.lease_seconds,
          poll_seconds=args.poll_seconds, jobs=args.jobs, json_out=args.json, secret_file=args.secret_file,
          trusted_proxies=tuple(args.trusted_proxy), header_timeout=args.header_timeout, max_connections=args.max_connections)
    return 0


def _work(args: argparse.Namespace) -> int:
    from averitec_tools.leaderboard.health import worker_name
    from averitec_tools.leaderboard.processing import worker_jobs
    from averitec_tools.leaderboard.worker import configure_logging, run_worker

    store = _store(args)
    store.competition()
    store.close()
    configure_logging()
    done = run_worker(args.db or _db_default(), lease_seconds=args.lease_seconds, poll_seconds=args.poll_seconds, once=args.once,
                      jobs=worker_jobs(args.jobs, workers=1), name=worker_name("work", server_pid=os.getpid()),
                      hard_exit=True)
    if args.json:
        print_json({"scored": done})
    return 0
