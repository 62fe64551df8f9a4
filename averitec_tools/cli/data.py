"""``averitec data``: the official files, one verified download away.

``averitec data list`` shows every name with its source (hub repository and type,
revision), licence, recorded size and whether the package records its checksums.
``averitec data download NAME [--split S|all] [--out DIR] [--dry-run] [--json]`` shows
what it will fetch (sizes, disk needed unpacked, free space) before fetching, refuses
when it does not fit, downloads through ``huggingface_hub`` resuming interrupted files,
verifies every file by sha256, unpacks the knowledge stores and records a manifest.
Without NAME, ``--dry-run`` plans every name. Files land in ``DIR/<dataset>/`` (default:
the download root the loaders and baselines search, see ``docs/data.md``).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from averitec_tools.cli._command import add_command, add_json_flag
from averitec_tools.errors import UserError
from averitec_tools.jsonio import print_json

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgtpe]?)(?:i?b)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``"10G"`` → bytes (binary units: K, M, G, T, P, E; a plain number is bytes).

    Example:
        >>> parse_size("10G"), parse_size("512"), parse_size("1.5MiB")
        (10737418240, 512, 1572864)
    """
    match = _SIZE.match(text)
    if not match:
        raise UserError(f"--reserve {text!r}: not a size", hint="e.g. 512M, 10G, 2T or a number of bytes")
    power = " kmgtpe".index(match.group(2).lower() or " ")
    return int(float(match.group(1)) * 1024**power)


def add_parser(subparsers: Any) -> None:
    parser = add_command(subparsers, "data", help="list and download the official data files (verified)", doc=__doc__)
    sub = parser.add_subparsers(dest="data_command", metavar="COMMAND")
    sub.required = True

    ls = sub.add_parser("list", help="every downloadable name, its source, licence and size")
    ls.add_argument("--out", metavar="DIR", help="also show what is installed under DIR (default: the download root)")
    add_json_flag(ls)
    ls.set_defaults(func=run_list)

    dl = sub.add_parser("download", help="download, verify and unpack a named data set")
    dl.add_argument("name", nargs="?", metavar="NAME", help="what to fetch (see `averitec data list`)")
    dl.add_argument("--split", help="the split (or all); needed for names with several")
    dl.add_argument("--out", metavar="DIR", help="output root (default: the download root the loaders search)")
    dl.add_argument("--dry-run", action="store_true",
                    help="show sources, sizes and disk needed; fetch nothing (the hub is asked for sizes)")
    dl.add_argument("--from", dest="from_dir", metavar="DIR",
                    help="install files you already have (same checks) instead of downloading")
    dl.add_argument("--repo", metavar="OWNER/NAME", help="read from this hub repository instead (a mirror)")
    dl.add_argument("--repo-type", choices=("model", "dataset", "space"),
                    help="its type (default: the recorded one, else dataset)")
    dl.add_argument("--revision", help="branch, tag or commit (default: the commit pinned in the catalogue; "
                    "needed where none is pinned)")
    dl.add_argument("--reserve", default="0", metavar="SIZE", help="disk space to keep free, e.g. 10G (default 0)")
    dl.add_argument("--keep-archives", action="store_true", help="keep the zip archives after unpacking")
    dl.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_json_flag(dl)
    dl.set_defaults(func=run_download)


def _out(args: argparse.Namespace) -> str:
    if args.out:
        return str(args.out)
    from averitec_tools.loaders.locate import download_root

    return str(download_root())


def _source_row(s: Any, installed: dict[str, Any]) -> dict[str, Any]:
    """One ``data list`` row (the JSON form) for the source ``s``."""
    hub = s.hub
    sizes = [f.size for f in s.files]
    listing = f"{s.listing.folder}/{'|'.join(s.listing.patterns)}" if s.listing else ""
    where = {"repo": hub.repo_id, "repo_type": hub.repo_type, "revision": hub.revision, "pinned": hub.pinned} if hub \
        else {"repo": None, "repo_type": None, "revision": None, "pinned": False}
    return {
        "source": s.key, "name": s.name, "split": s.split, "title": s.title, "license": s.license, **where,
        "files": [f.path for f in s.files] or [listing],
        "listed": s.listing is not None,
        "size": None if s.listing or any(z is None for z in sizes) else sum(z or 0 for z in sizes),
        "verified": s.verified, "unpack": s.unpack.into if s.unpack else None,
        "installed": (installed.get(s.key) or {}).get("status"), "notes": list(s.notes),
    }


def _table_row(r: dict[str, Any], human: Any) -> list[str]:
    """The terminal table's cells for one JSON row."""
    revision = (r["revision"][:12] if r["pinned"] else r["revision"]) or "unpinned: --revision"
    where = f"{r['repo']} ({r['repo_type']}, {revision})" if r["repo"] else "no hub copy (--repo MIRROR)"
    size = human(r["size"]) if r["size"] is not None else ("listed" if r["listed"] else "unknown")
    checks = "recorded" if r["verified"] else "first download"
    return [r["source"], where, r["license"], size, checks, r["installed"] or "-"]


def run_list(args: argparse.Namespace) -> int:
    import averitec_tools.loaders.catalogue  # noqa: F401  (registers the sources)
    from averitec_tools.downloads import all_sources, human, manifest

    out = _out(args)
    installed = manifest.load(out)["sources"] if Path(out).is_dir() else {}
    rows = [_source_row(s, installed) for s in all_sources()]
    if args.json:
        print_json({"out": out, "sources": rows})
        return 0
    from averitec_tools.cli._tables import print_rows

    print_rows(title=f"data sources (installed under {out})",
               header=["name/split", "hub source (type, revision)", "licence", "size", "checksums", "installed"],
               rows=[_table_row(r, human) for r in rows])  # fits the terminal: columns wrap, or one block per source
    return 0


def _sources(args: argparse.Namespace) -> list[Any]:
    import averitec_tools.loaders.catalogue  # noqa: F401  (registers the sources)
    from averitec_tools.downloads import all_sources, get_sources

    if args.name is None:
        if not args.dry_run:
            raise UserError("NAME is required (only --dry-run plans every name)", hint="averitec data list shows them")
        return all_sources()
    return get_sources(args.name, args.split)


def _repo(args: argparse.Namespace, sources: list[Any]) -> Any:
    from averitec_tools.downloads import HubLocation

    if args.repo is None:
        if args.repo_type or args.revision:
            # the first location with revisions (a plain HTTPS folder, as fever.ai's, has none)
            base = next((s.hub for s in sources[0].locations() if s.hub is not None and not s.hub.unversioned), None)
            if base is None:
                raise UserError("--repo-type/--revision need --repo: this name has no recorded hub copy")
            return HubLocation(base.repo_id, repo_type=args.repo_type or base.repo_type,
                               revision=args.revision or base.revision)
        return None
    if not re.fullmatch(r"[A-Za-z0-9][\w.-]*/[\w.-]+", args.repo):
        raise UserError(f"--repo {args.repo!r}: expected OWNER/NAME")
    base = sources[0].hub
    return HubLocation(args.repo, repo_type=args.repo_type or (base.repo_type if base else "dataset"),
                       revision=args.revision or "main")


def _print_plan(report: Any) -> None:
    from averitec_tools.cli._wrap import wrapped_output

    with wrapped_output():
        _plan_lines(report)


def _plan_lines(report: Any) -> None:
    from averitec_tools.downloads import human

    d = report.plan.to_dict()
    src = f"{d['repo']} ({d['repo_type']}, {d['revision']})" if d["repo"] else "no hub copy known (--repo MIRROR)"
    verdict = "sha256 recorded in the package" if d["verified"] else "no checksum recorded: unverified"
    print(f"{d['source']}: {d['title']} [{d['license']}]")
    print(f"  from: {src}; {verdict}")
    if d["files_listed_at_download"]:
        print("  files: listed from the hub when the download runs (offline now)")
    for f in d["files"]:
        state = "installed" if f["present"] else (f"{human(f['partial_bytes'])} already here" if f["partial_bytes"]
                                                  else "to fetch")
        unpacked = ""
        if f["archive"]:
            how = "measured" if f["unpacked_measured"] else "recorded"
            unpacked = (f", unpacked {human(f['unpacked_size'])} ({how})" if f["unpacked_size"] is not None
                        else ", unpacked size read from the archive's directory when online")
        print(f"  {f['path']}: {human(f['size'])}{unpacked} - {state}")
    print(f"  to {d['unpack_into'] or d['out']}: download {human(d['download_bytes'])}, disk needed "
          f"{human(d['disk_needed'])}, free {human(d['free_bytes'])}")
    for note in d["notes"]:
        print(f"  note: {note}")


def run_download(args: argparse.Namespace) -> int:
    from averitec_tools.downloads import DownloadReport, download_all
    from averitec_tools.outputs import check_output_dir

    reserve = parse_size(args.reserve)
    sources = _sources(args)
    repo = _repo(args, sources)
    out = _out(args)
    if args.from_dir is not None and not Path(args.from_dir).is_dir():
        raise UserError(f"--from {args.from_dir}: not a directory")
    if not args.dry_run:
        check_output_dir(out, option="--out", inputs=[args.from_dir] if args.from_dir else [])
    progress = not args.no_progress and not args.json and sys.stderr.isatty()

    def show(plans: list[Any]) -> None:  # before anything is fetched
        if not args.json:
            for p in plans:
                _print_plan(DownloadReport(plan=p, dry_run=True))

    reports = download_all(sources, out=out, dry_run=args.dry_run, reserve=reserve, progress=progress,
                           from_dir=args.from_dir, keep_archives=args.keep_archives, repo=repo, on_plan=show)
    if args.json:
        print_json({"out": out, "dry_run": args.dry_run, "sources": [r.to_dict() for r in reports]})
        return 0
    for r in reports:
        if r.dry_run:
            continue
        for f in r.files:
            what = f"{f.status} (sha256 {f.sha256[:12]}…" + (", matches the hub's hash" if f.hub_hash_match else "")
            print(f"{r.plan.source.key}: {f.action} {f.dest}: {what})" + (f"; {f.contents}" if f.contents else ""))
        if r.unpacked is not None:
            print(f"{r.plan.source.key}: unpacked {r.unpacked.files} files into {r.unpacked.into}")
        if r.manifest:
            print(f"{r.plan.source.key}: recorded in {r.manifest}")
    return 0
