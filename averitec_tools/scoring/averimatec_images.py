"""AVerImaTeC images: decoded, verified and bounded before anything is sent to a judge.

A submission's images are base64 strings (the organisers' format); gold images are files
under the dataset's ``images/`` folder. Every image is checked the same way, and a bad one
is a :class:`~averitec_tools.errors.UserError` naming the claim and the field (exit 2):

* base64 that decodes (a ``data:image/...;base64,`` prefix is accepted, as the organisers'
  image loader accepts it), at most :attr:`ImageLimits.max_bytes` bytes once decoded;
* a format in :data:`FORMATS`, read by Pillow;
* at most :attr:`ImageLimits.max_pixels` pixels, read from the header *before* decoding (a
  decompression bomb is refused without being expanded), and no side longer than
  :attr:`ImageLimits.max_side`;
* fully decoded once (a truncated or corrupt file is refused here; the organisers' code
  would catch the exception during the rating call and score the pair as a match);
* per claim at most :attr:`ImageLimits.max_images_per_claim` images, and every ``[IMG_k]``
  of an item's text refers to one of its images (``1 <= k <= len(images)``).

Pillow is imported only when an image is checked (``averitec score`` stays light).
"""

from __future__ import annotations

import base64
import binascii
import io
import os
from collections.abc import Iterable
from pathlib import Path, PurePosixPath

from averitec_tools.errors import UserError
from averitec_tools.images import (
    DEFAULT_LIMITS,
    FORMATS,
    ImageInfo,
    ImageLimits,
    read_bounded,
    verify_bytes,
)
from averitec_tools.records.averimatec import AVerImaTeCPrediction, image_refs

_DATA_URL = "data:image/"


def _raw_base64(value: str) -> str:
    if value.startswith(_DATA_URL) and "," in value[:100]:
        return value.split(",", 1)[1]
    return value


def decode_image(value: str, *, where: str, limits: ImageLimits = DEFAULT_LIMITS) -> ImageInfo:
    """Decode and verify one submitted base64 image.

    Example:
        >>> decode_image("%%%", where="sub.json (claim 2): evidence[0].images[0]")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: sub.json (claim 2): evidence[0].images[0]: not base64 (Only base64 data is allowed)
    """
    raw = _raw_base64(value)
    if len(raw) > (limits.max_bytes + 2) // 3 * 4 + 4:
        raise UserError(f"{where}: image of more than {limits.max_bytes} bytes (at most that many are accepted)")
    try:
        data = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise UserError(f"{where}: not base64 ({str(exc)[:80]})") from None
    return verify_bytes(data, where=where, limits=limits, b64=raw)


def check_references(prediction: AVerImaTeCPrediction, *, where: str) -> None:
    """Every ``[IMG_k]`` of an item's text names one of that item's images.

    Example:
        >>> from averitec_tools.records.averimatec import AVerImaTeCEvidence
        >>> p = AVerImaTeCPrediction(3, (), "", "Refuted", (AVerImaTeCEvidence("see [IMG_2]", ("aGk=",)),))
        >>> check_references(p, where="sub.json (claim 3)")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: sub.json (claim 3): evidence[0].text: [IMG_2] but the item has 1 image(s)
    """
    for i, item in enumerate(prediction.evidence):
        for k in image_refs(item.text):
            if not 1 <= k <= len(item.images):
                raise UserError(f"{where}: evidence[{i}].text: [IMG_{k}] but the item has {len(item.images)} image(s)")


def verify_prediction(prediction: AVerImaTeCPrediction, *, where: str, limits: ImageLimits = DEFAULT_LIMITS,
                      ) -> tuple[tuple[ImageInfo, ...], ...]:
    """The verified images of each evidence item of one claim (references checked first)."""
    check_references(prediction, where=where)
    count = sum(len(item.images) for item in prediction.evidence)
    if count > limits.max_images_per_claim:
        raise UserError(f"{where}: {count} evidence images (at most {limits.max_images_per_claim} a claim are accepted)")
    return tuple(
        tuple(decode_image(img, where=f"{where}: evidence[{i}].images[{k}]", limits=limits)
              for k, img in enumerate(item.images))
        for i, item in enumerate(prediction.evidence)
    )


def check_total(infos: Iterable[ImageInfo], *, where: str, limits: ImageLimits = DEFAULT_LIMITS) -> None:
    """The submission's decoded image bytes stay within :attr:`ImageLimits.max_total_bytes`."""
    total = sum(i.nbytes for i in infos)
    if total > limits.max_total_bytes:
        raise UserError(f"{where}: {total} bytes of images in all (at most {limits.max_total_bytes} are accepted)")


def png_preview(info: ImageInfo, *, max_side: int = 512) -> bytes:
    """A verified image re-encoded as a PNG of at most ``max_side`` pixels a side: new bytes
    with no metadata, never the uploaded ones (what a leaderboard page may show).

    Example:
        >>> import base64, io
        >>> from PIL import Image
        >>> buf = io.BytesIO(); Image.new("RGB", (1000, 10), (9, 9, 9)).save(buf, format="JPEG")
        >>> png = png_preview(decode_image(base64.b64encode(buf.getvalue()).decode(), where="x"), max_side=100)
        >>> png[:4] == bytes([137, 80, 78, 71]), Image.open(io.BytesIO(png)).size
        (True, (100, 1))
    """
    from PIL import Image

    with Image.open(io.BytesIO(base64.b64decode(info.b64)), formats=list(FORMATS)) as img:
        img.seek(0)
        frame = img.convert("RGBA" if "A" in img.getbands() or img.mode == "P" else "RGB")
    frame.thumbnail((max_side, max_side))
    buf = io.BytesIO()
    frame.save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def safe_name(name: str, *, where: str) -> PurePosixPath:
    """A gold image name as a relative path inside the images folder (no ``..``, not absolute).

    Example:
        >>> safe_name("67a9#INPUT#0#0.jpg", where="x").as_posix()
        '67a9#INPUT#0#0.jpg'
        >>> safe_name("../secret.png", where="val.json[0]")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: val.json[0]: image name '../secret.png' leaves the images folder
    """
    path = PurePosixPath(name.replace("\\", "/"))
    if not name or path.is_absolute() or ".." in path.parts:
        raise UserError(f"{where}: image name {name!r} leaves the images folder")
    return path


class GoldImages:
    """The gold images folder, each file read, verified and kept once.

    Example:
        >>> GoldImages("/nonexistent").get("a.jpg", where="val.json[0].questions[0]")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: val.json[0].questions[0]: gold image /nonexistent/a.jpg not found (give the dataset's images folder with --gold-images DIR)
    """

    def __init__(self, root: str | os.PathLike[str], *, limits: ImageLimits = DEFAULT_LIMITS) -> None:
        self.root = Path(root)
        self.limits = limits
        self._seen: dict[str, ImageInfo] = {}

    def get(self, name: str, *, where: str) -> ImageInfo:
        if name not in self._seen:
            path = self.root / safe_name(name, where=where)
            try:
                data = read_bounded(path, limits=self.limits)
            except FileNotFoundError:
                raise UserError(f"{where}: gold image {path} not found",
                                hint="give the dataset's images folder with --gold-images DIR") from None
            except OSError as exc:
                raise UserError(f"{where}: cannot read gold image {path} ({exc.strerror})") from None
            self._seen[name] = verify_bytes(data, where=f"{where}: gold image {name}", limits=self.limits)
        return self._seen[name]


def default_gold_images(references: str | os.PathLike[str]) -> Path:
    """Where the gold images are when ``--gold-images`` is not given: ``images/`` beside the
    gold file, or beside its folder (``test_data/test.json`` -> ``images/``)."""
    ref = Path(references).resolve().parent
    for candidate in (ref / "images", ref.parent / "images"):
        if candidate.is_dir():
            return candidate
    return ref / "images"


__all__ = [
    "DEFAULT_LIMITS",
    "FORMATS",
    "GoldImages",
    "ImageInfo",
    "ImageLimits",
    "check_references",
    "check_total",
    "decode_image",
    "default_gold_images",
    "png_preview",
    "safe_name",
    "verify_bytes",
    "verify_prediction",
]
