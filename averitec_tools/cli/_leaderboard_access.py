"""``averitec leaderboard team add|remove|rotate-token NAME`` and ``secret rotate``: who
may use the leaderboard (the work is in :mod:`averitec_tools.leaderboard.teams` and
:mod:`averitec_tools.leaderboard.secret`)."""

from __future__ import annotations

import argparse
from typing import Any

from averitec_tools.cli._command import emit

TEAM_ACTIONS = ("add", "remove", "rotate-token")


def add_access_parsers(sub: Any, common: argparse.ArgumentParser) -> None:
    """The ``team`` and ``secret`` subcommands."""
    p = sub.add_parser("team", parents=[common], help="manage teams: add one (prints its token once), remove one (its token "
                       "and sessions stop working, its submissions are cancelled), or give one a new token (the old one stops working)")
    p.add_argument("team_action", choices=TEAM_ACTIONS)
    p.add_argument("name", metavar="NAME")
    p.set_defaults(func=_team)

    p = sub.add_parser("secret", parents=[common], help="the secret file that signs session cookies: rotate it (every session ends)")
    p.add_argument("secret_action", choices=["rotate"])
    add_secret_option(p)
    p.set_defaults(func=_secret)


def add_secret_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--secret-file", default=None, help="the session secret (default: $AVERITEC_LEADERBOARD_SECRET_FILE, else "
                        "DB.secret next to a SQLite database, else one under ~/.config/averitec-tools/); created 0600 if absent")


def _team(args: argparse.Namespace) -> int:
    from averitec_tools.cli._leaderboard_store import _store
    from averitec_tools.leaderboard.teams import remove_team, rotate_token

    store = _store(args)
    store.competition()
    if args.team_action == "remove":
        out = remove_team(store, name=args.name)
        text = f"team {out['team']!r} removed: its token and sessions no longer work; {out['submissions_cancelled']} submission(s) cancelled"
    elif args.team_action == "rotate-token":
        token = rotate_token(store, name=args.name)
        out = {"team": store.team(args.name)["name"], "token": token}
        text = f"team {out['team']!r}: new token (shown once): {token}; the old token and its sessions no longer work"
    else:
        token = store.add_team(args.name)
        out = {"team": store.team(args.name)["name"], "token": token}
        text = f"team {out['team']!r} added; token (shown once): {token}"
    return emit(args, out, text)


def _secret(args: argparse.Namespace) -> int:
    from averitec_tools.cli._leaderboard_store import _db_default, _store, check_secret_file
    from averitec_tools.leaderboard.secret import rotate_secret, secret_path

    store = _store(args)
    store.competition()  # the database exists
    check_secret_file(args, store=store)
    path = secret_path(args.db or _db_default(), args.secret_file)
    rotate_secret(path)
    return emit(args, {"secret_file": str(path), "rotated": True},
                f"session secret {path} replaced: every session has ended (running servers read it again)")


__all__ = ["add_access_parsers", "add_secret_option"]
