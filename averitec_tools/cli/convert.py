"""``averitec convert FILE --to 2023|2024|evalai|fever8 --out F``: convert a submission.

Examples::

    averitec convert preds.json --to 2023 --out preds_2023.json
    averitec convert preds.json --to fever8 --out submission.csv
    averitec convert sub.jsonl --to 2024 --out preds.json --references dev.json   # EvalAI lines hold no claim text
    averitec convert sub.json --to averimatec-files --out sub_dir       # AVerImaTeC: images as files on disk
    averitec convert sub_dir --to averimatec --out sub.json            # and back (base64 in the JSON)
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from averitec_tools.cli._command import add_json_flag, emit

FORMAT_CHOICES = ("2023", "2024", "evalai", "fever8")
#: AVerImaTeC: the organisers' JSON (base64 images) and the variant with image files on disk.
AVERIMATEC_CHOICES = ("averimatec", "averimatec-files")


def add_parser(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "convert",
        help="convert a submission between the 2023, 2024, EvalAI and FEVER-8 formats",
        description="Convert a submission between the 2023 (eval.py), 2024 (shared task), EvalAI line and "
        "FEVER-8 CSV formats. Everything a scorer reads is carried over or the conversion stops with an error; "
        "data the target cannot hold and no scorer reads (URLs, confidences) is dropped and counted.",
    )
    parser.add_argument("file", metavar="FILE", help="submission (.json, .jsonl, or FEVER-8 .csv)")
    parser.add_argument("--to", required=True, choices=FORMAT_CHOICES + AVERIMATEC_CHOICES,
                        help="target format (averimatec-files: a folder with submission.json and images/; "
                        "averimatec: the organisers' JSON, from such a folder)")
    parser.add_argument("--out", required=True, metavar="F", help="output file (written atomically)")
    parser.add_argument("--from", dest="source_format", choices=FORMAT_CHOICES, default=None,
                        help="source format (default: recognised from the file)")
    parser.add_argument("--references", metavar="GOLD", default=None,
                        help="gold dev.json: claim texts for formats that lack them (EvalAI lines)")
    add_json_flag(parser)
    parser.set_defaults(func=run)


def _run_averimatec(args: argparse.Namespace) -> int:
    from averitec_tools.errors import UserError
    from averitec_tools.outputs import check_output_dir, check_output_file
    from averitec_tools.scoring import averimatec_convert as conv

    if args.source_format or args.references:
        raise UserError(f"--to {args.to} takes neither --from nor --references")
    if args.to == "averimatec-files":
        check_output_dir(args.out, option="--out", inputs=[args.file], files=[conv.FILES_JSON, conv.IMAGES_DIR])
        done, source = conv.to_files(args.file, args.out), "averimatec"
    else:
        check_output_file(args.out, option="--out", inputs=[args.file])
        done, source = conv.from_files(args.file, args.out), "averimatec-files"
    emit(args, {"from": source, "to": args.to, "n_claims": done.n_claims, "n_images": done.n_images, "out": args.out,
                "dropped": {}},
         f"{args.file} ({source}) -> {args.out} ({args.to}): {done.n_claims} claims, {done.n_images} images")
    return 0


def run(args: argparse.Namespace) -> int:
    from averitec_tools.outputs import check_output_file
    from averitec_tools.scoring.convert import convert

    if args.to in AVERIMATEC_CHOICES:
        return _run_averimatec(args)

    check_output_file(args.out, option="--out", inputs=[args.file, args.references])
    result = convert(
        source=args.file,
        target_format=args.to,
        out=args.out,
        references=args.references,
        source_format=args.source_format,
    )
    dropped = dict(result.dropped)
    emit(args, {"from": result.source_format, "to": result.target_format, "n_claims": result.n_claims,
                "out": args.out, "dropped": dropped},
         f"{args.file} ({result.source_format}) -> {args.out} ({result.target_format}): {result.n_claims} claims")
    for name, count in dropped.items():
        print(f"averitec convert: note: dropped {name} on {count} item(s) (the {args.to} format has no place for it)",
              file=sys.stderr)
    return 0


__all__ = ["add_parser", "run"]
