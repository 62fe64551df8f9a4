"""AVerImaTeC submissions to and from a variant with the images as files on disk.

The organisers' format embeds every evidence image as base64 in one JSON file, which is
hard to look at and to diff. ``averitec convert sub.json --to averimatec-files --out DIR``
writes ``DIR/submission.json`` (the same items, each image replaced by its path relative
to ``DIR``) and ``DIR/images/<id>-<item>-<k>.<ext>`` (the decoded bytes, unchanged);
``averitec convert DIR --to averimatec --out sub.json`` embeds them again. Both ways every
image is verified as for scoring (:mod:`averitec_tools.scoring.averimatec_images`), image
paths may not leave the folder, and a round trip gives back the same JSON values.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass
from pathlib import Path

from averitec_tools.errors import UserError
from averitec_tools.jsonio import atomic_directory, atomic_writer
from averitec_tools.outputs import check_output_file
from averitec_tools.records.averimatec import AVerImaTeCEvidence, AVerImaTeCPrediction
from averitec_tools.scoring.averimatec_images import (
    DEFAULT_LIMITS,
    ImageLimits,
    check_references,
    check_total,
    decode_image,
    safe_name,
    verify_bytes,
)
from averitec_tools.scoring.averimatec_inputs import load_predictions

PathLike = str | os.PathLike[str]
FILES_JSON = "submission.json"
IMAGES_DIR = "images"
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif", "image/bmp": "bmp"}


@dataclass(frozen=True)
class ConvertedImages:
    """What a conversion wrote: claims and images."""

    n_claims: int
    n_images: int


def to_files(source: PathLike, out: PathLike, *, limits: ImageLimits = DEFAULT_LIMITS) -> ConvertedImages:
    """The official JSON ``source`` as ``out/submission.json`` plus ``out/images/``.

    Example:
        >>> import base64, io, json, pathlib, tempfile
        >>> from PIL import Image
        >>> d = pathlib.Path(tempfile.mkdtemp()); buf = io.BytesIO(); Image.new("RGB", (2, 2)).save(buf, format="PNG")
        >>> item = {"id": 0, "questions": [], "justification": "", "verdict": "Refuted",
        ...         "evidence": [{"text": "[IMG_1]", "images": [base64.b64encode(buf.getvalue()).decode()]}]}
        >>> _ = (d / "sub.json").write_text(json.dumps([item]))
        >>> to_files(d / "sub.json", d / "dir"), json.loads((d / "dir" / "submission.json").read_text())[0]["evidence"]
        (ConvertedImages(n_claims=1, n_images=1), [{'text': '[IMG_1]', 'images': ['images/0-0-0.png']}])
        >>> _ = from_files(d / "dir", d / "back.json"); json.loads((d / "back.json").read_text()) == [item]
        True
    """
    preds = load_predictions(source)
    with atomic_directory(out) as tmp:
        (tmp / IMAGES_DIR).mkdir()
        rows, infos = [], []
        for where, p in preds:
            check_references(p, where=f"{where} (claim {p.id})")
            items = []
            for i, item in enumerate(p.evidence):
                paths = []
                for k, value in enumerate(item.images):
                    info = decode_image(value, where=f"{where} (claim {p.id}): evidence[{i}].images[{k}]", limits=limits)
                    infos.append(info)
                    rel = f"{IMAGES_DIR}/{p.id}-{i}-{k}.{EXTENSIONS[info.mime]}"
                    (tmp / rel).write_bytes(base64.b64decode(info.b64))
                    paths.append(rel)
                items.append(AVerImaTeCEvidence(item.text, tuple(paths)))
            rows.append(AVerImaTeCPrediction(p.id, p.questions, p.justification, p.verdict, tuple(items)).to_dict())
        check_total(infos, where=str(source), limits=limits)
        (tmp / FILES_JSON).write_text(json.dumps(rows, ensure_ascii=False, indent=1), encoding="utf-8")
    return ConvertedImages(len(rows), len(infos))


def _read_image(root: Path, name: str, *, where: str, limits: ImageLimits, read: list[Path]) -> str:
    path = root / safe_name(name, where=where)
    resolved, base = path.resolve(), root.resolve()
    if base not in resolved.parents:
        raise UserError(f"{where}: image path {name!r} leaves {root}")
    try:
        with open(resolved, "rb") as fh:
            data = fh.read(limits.max_bytes + 1)
    except OSError as exc:
        raise UserError(f"{where}: cannot read image {path} ({exc.strerror})") from None
    read.append(resolved)
    return verify_bytes(data, where=where, limits=limits).b64


def from_files(source: PathLike, out: PathLike, *, limits: ImageLimits = DEFAULT_LIMITS) -> ConvertedImages:
    """The on-disk variant (a folder with ``submission.json``, or that file) as the official JSON ``out``."""
    src = Path(source)
    json_path = src / FILES_JSON if src.is_dir() else src
    root = json_path.parent
    rows, n_images, total, read = [], 0, 0, [json_path]
    for where, p in load_predictions(json_path):
        check_references(p, where=f"{where} (claim {p.id})")
        items = []
        for i, item in enumerate(p.evidence):
            encoded = tuple(_read_image(root, name, where=f"{where} (claim {p.id}): evidence[{i}].images[{k}]",
                                        limits=limits, read=read) for k, name in enumerate(item.images))
            n_images += len(encoded)
            total += sum(len(e) for e in encoded) * 3 // 4
            if total > limits.max_total_bytes:
                raise UserError(f"{json_path}: more than {limits.max_total_bytes} bytes of images in all")
            items.append(AVerImaTeCEvidence(item.text, encoded))
        rows.append(AVerImaTeCPrediction(p.id, p.questions, p.justification, p.verdict, tuple(items)).to_dict())
    check_output_file(out, option="--out", inputs=read)  # the image files are inputs too
    with atomic_writer(out) as fh:
        json.dump(rows, fh, ensure_ascii=False)
    return ConvertedImages(len(rows), n_images)


__all__ = ["FILES_JSON", "IMAGES_DIR", "ConvertedImages", "from_files", "to_files"]
