"""``averitec leaderboard status|cancel|rescore``: the organisers' view of the queue and what
they do with a job (the work is in :mod:`averitec_tools.leaderboard.queue` and
:mod:`averitec_tools.leaderboard.events`): every submission with its state-change times, the
queue's health and the workers; cancel one; score again every one, a phase's, the
incomplete ones or one (``--submission ID``: also a stuck or failed job), re-using the stored
judge replies unless ``--fresh-judge``."""

from __future__ import annotations

import argparse
from typing import Any

from averitec_tools.cli._command import emit
from averitec_tools.cli._leaderboard_store import _store
from averitec_tools.errors import UserError
from averitec_tools.jsonio import print_json


def submission_id(value: str) -> int:
    if not value.isdigit() or not 1 <= int(value) < 2**31:  # the id column is a 32-bit INTEGER on PostgreSQL
        raise argparse.ArgumentTypeError(f"expected a submission id (a positive integer), found {value[:30]!r}")
    return int(value)


def add_job_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """The ``status``, ``cancel`` and ``rescore`` subcommands."""
    p = sub.add_parser("status", parents=[common], help="list submissions and their states, the queue and the workers")
    p.add_argument("--phase")
    p.add_argument("--team")
    p.set_defaults(func=_status)

    p = sub.add_parser("cancel", parents=[common], help="cancel a submission: out of the queue (its worker stops) or off the board; "
                       "it does not count against the team's quota")
    p.add_argument("id", type=submission_id, metavar="ID")
    p.set_defaults(func=_cancel)

    p = sub.add_parser("rescore", parents=[common], help="score submissions again (old results are kept): every one, a phase's, "
                       "one (--submission ID: also a stuck or failed one) or the incomplete ones")
    p.add_argument("--phase")
    p.add_argument("--submission", type=submission_id, metavar="ID", help="only this submission (also when it is stuck running or failed)")
    p.add_argument("--incomplete", action="store_true", help="only those whose result is incomplete (claims waiting for the judge)")
    p.add_argument("--fresh-judge", action="store_true", help="ask the judge again instead of re-using the stored replies")
    p.add_argument("--no-score", action="store_true", help="only queue them for the server's workers")
    p.set_defaults(func=_rescore)


def _cancel(args: argparse.Namespace) -> int:
    store = _store(args)
    store.competition()
    was = store.cancel(args.id)
    return emit(args, {"id": args.id, "state": "cancelled", "was": was}, f"submission {args.id} cancelled (was {was})")


def _status(args: argparse.Namespace) -> int:
    from averitec_tools.leaderboard.health import queue, workers

    store = _store(args)
    store.competition()
    items = [_status_item(r) for r in store.submissions(phase=args.phase, team=args.team)]
    for item in items:  # every state change with its time (the organisers' view: worker names included)
        item["events"] = [{"at": str(e["at"]), "state": e["state"], "note": e["note"]} for e in store.events(item["id"])]
    health = [{k: (str(v) if k in ("started_at", "last_seen") and v is not None else v) for k, v in w.items() if k != "id"}
              for w in workers(store)]
    counts = queue(store)
    overview = store.queue_health()
    if args.json:
        print_json({"submissions": items, "queue": counts, "queue_health": overview, "workers": health})
        return 0
    _print_status(items, counts, health)
    oldest = overview["oldest_waiting_seconds"]
    print(f"oldest waiting job: {'none' if oldest is None else f'{oldest:.0f} s'}; workers heard from in the last 90 s: "
          f"{overview['workers_alive']}; watchdog: running jobs fail {overview['time_limit_seconds']:g} + "
          f"{overview['watchdog_grace_seconds']:g} s after they start")
    return 0


def _status_item(row: dict[str, Any]) -> dict[str, Any]:
    """A submission row as ``status`` prints it: timestamps as text, the audit as its
    counts over every claim (the organisers' view; ``audit_flags``)."""
    from averitec_tools.leaderboard.audit_flags import visible_audit
    from averitec_tools.leaderboard.export import audit_cell

    item = {k: (str(v) if k.endswith("_at") and v is not None else v) for k, v in row.items()
            if k not in ("content_hash", "lease_until", "audit")}
    audit = visible_audit(row.get("audit"), visible_ids=None)
    item["audit_flags"] = None if audit is None else {"status": audit["status"], **audit["counts"]}
    item["audit_text"] = audit_cell(audit)
    return item


def _print_status(items: list[dict[str, Any]], counts: dict[str, int], health: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    def add_table(title: str, cols: tuple[str, ...], rows: list[dict[str, Any]]) -> None:
        table = Table(title=title)
        for col in cols:
            table.add_column(col.replace("_", " ") if title == "workers" else col, overflow="fold")
        for r in rows:
            table.add_row(*(escape(str(r[c] if r[c] is not None else "")) for c in cols))
        console.print(table)

    console = Console()
    add_table("submissions", ("id", "team", "system", "phase", "state", "created_at", "reason", "audit_text"), items)
    console.print("queue: " + ", ".join(f"{n} {state}" for state, n in counts.items()))
    if health:
        add_table("workers", ("name", "pid", "state", "alive", "submission_id", "restarts", "last_exit"), health)


def _rescore(args: argparse.Namespace) -> int:
    from averitec_tools.leaderboard.processing import Scorer
    from averitec_tools.leaderboard.worker import process_one

    store = _store(args)
    comp = store.competition()
    if args.phase:
        comp.phase(args.phase)
    if args.submission is not None and store.submission(args.submission) is None:
        raise UserError(f"no submission {args.submission}")
    queued = store.requeue(phase=args.phase, submission_id=args.submission, fresh_judge=args.fresh_judge, incomplete=args.incomplete)
    if args.submission is not None and not queued:
        raise UserError(f"submission {args.submission} cannot be scored again (state {store.submission(args.submission)['state']}; "
                        "a cancelled one, one already queued, or a refused file whose bytes were dropped)")
    done = 0
    if not args.no_score:
        scorer = Scorer(n_resamples=comp.n_resamples)
        pending = store.submissions(phase=args.phase, state="pending", submission_id=args.submission)
        for row in pending:
            if process_one(store, scorer, submission_id=int(row["id"])) is not None:
                done += 1
    return emit(args, {"queued": queued, "scored": done}, f"{queued} submission(s) queued, {done} scored")


__all__ = ["add_job_parsers", "submission_id"]
