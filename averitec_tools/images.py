"""Images checked once, the same way everywhere: format, pixels from the header, a full decode.

An image is refused (a :class:`~averitec_tools.errors.UserError` naming where it is) when it is
larger than :attr:`ImageLimits.max_bytes`, not a format in :data:`FORMATS` that Pillow reads,
larger than :attr:`ImageLimits.max_pixels` or :attr:`ImageLimits.max_side` (read from the header
*before* decoding, so a decompression bomb is refused without being expanded), or truncated or
corrupt (it is fully decoded once). The AVerImaTeC scorer checks submitted and gold images with
it (:mod:`averitec_tools.scoring.averimatec_images`), the loaders the images an export embeds.
Pillow is imported only when an image is checked.

Example:
    >>> verify_file("/nonexistent.jpg", where="claim 3")
    Traceback (most recent call last):
    ...
    averitec_tools.errors.UserError: claim 3: cannot read image /nonexistent.jpg (No such file or directory)
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
from dataclasses import dataclass

from averitec_tools.errors import UserError

#: Image formats accepted (Pillow's names) and the MIME type each is sent as.
FORMATS: dict[str, str] = {"PNG": "image/png", "JPEG": "image/jpeg", "WEBP": "image/webp", "GIF": "image/gif",
                           "BMP": "image/bmp"}


@dataclass(frozen=True)
class ImageLimits:
    """Bounds on the images of one submission (and the gold images it is compared with).

    Attributes:
        max_bytes: Bytes of one image once decoded from base64 (or read from disk).
        max_pixels: Width x height of one image (Pillow's own bomb warning starts at ~89 M).
        max_side: Pixels of the longer side.
        max_images_per_claim: Images across a claim's predicted evidence items.
        max_total_bytes: Decoded image bytes across the whole submission.
    """

    max_bytes: int = 10 << 20
    max_pixels: int = 40_000_000
    max_side: int = 16_384
    max_images_per_claim: int = 64
    max_total_bytes: int = 2 << 30


DEFAULT_LIMITS = ImageLimits()


@dataclass(frozen=True)
class ImageInfo:
    """A verified image: its bytes' SHA-256, what it is, and its base64 (what is sent)."""

    sha256: str
    mime: str
    width: int
    height: int
    nbytes: int
    b64: str

    @property
    def data_url(self) -> str:
        """The ``image_url`` an OpenAI-compatible server is sent."""
        return f"data:{self.mime};base64,{self.b64}"


def verify_bytes(data: bytes, *, where: str, limits: ImageLimits = DEFAULT_LIMITS, b64: str | None = None) -> ImageInfo:
    """Check one image's bytes (format, pixels before decoding, a full decode).

    Example:
        >>> import io
        >>> from PIL import Image
        >>> buf = io.BytesIO(); Image.new("RGB", (3, 2)).save(buf, format="PNG")
        >>> info = verify_bytes(buf.getvalue(), where="x")
        >>> info.mime, info.width, info.height
        ('image/png', 3, 2)
        >>> verify_bytes(b"not an image", where="sub.json (claim 0): evidence[0].images[0]")
        Traceback (most recent call last):
        ...
        averitec_tools.errors.UserError: sub.json (claim 0): evidence[0].images[0]: not an image Pillow can read (...)
    """
    if len(data) > limits.max_bytes:
        raise UserError(f"{where}: image of {len(data)} bytes (at most {limits.max_bytes} are accepted)")
    import warnings

    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():  # a bomb is refused below, by our smaller bound, not warned about
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            img = Image.open(io.BytesIO(data), formats=list(FORMATS))
        with img:
            width, height, fmt = img.width, img.height, img.format or ""
            if width * height > limits.max_pixels or max(width, height) > limits.max_side:
                raise UserError(f"{where}: image of {width}x{height} pixels (at most {limits.max_pixels} pixels and "
                                f"{limits.max_side} a side are accepted)")
            img.load()  # decodes every pixel: truncated or corrupt data fails here
    except UserError:
        raise
    except (UnidentifiedImageError, Image.DecompressionBombError) as exc:
        raise UserError(f"{where}: not an image Pillow can read ({', '.join(FORMATS)}; {exc})"[:400]) from None
    except (OSError, ValueError, SyntaxError, EOFError, IndexError, MemoryError) as exc:
        raise UserError(f"{where}: damaged image data ({type(exc).__name__}: {exc})"[:400]) from None
    encoded = b64 if b64 is not None else base64.b64encode(data).decode("ascii")
    return ImageInfo(hashlib.sha256(data).hexdigest(), FORMATS[fmt], width, height, len(data), encoded)


def read_bounded(path: str | os.PathLike[str], *, limits: ImageLimits = DEFAULT_LIMITS) -> bytes:
    """A file's bytes, read up to one byte past ``limits.max_bytes`` (so that
    :func:`verify_bytes` sees an oversized file as oversized without reading all of it).

    Raises:
        OSError: the file cannot be read (callers word the error for their input).
    """
    with open(path, "rb") as fh:
        return fh.read(limits.max_bytes + 1)


def verify_file(path: str | os.PathLike[str], *, where: str, limits: ImageLimits = DEFAULT_LIMITS) -> ImageInfo:
    """:func:`verify_bytes` on a file, read up to one byte past the bound.

    Raises:
        UserError: the file cannot be read, or its image is refused.
    """
    try:
        data = read_bounded(path, limits=limits)
    except OSError as exc:
        raise UserError(f"{where}: cannot read image {path} ({exc.strerror or exc})") from None
    return verify_bytes(data, where=f"{where}: image {os.path.basename(str(path))}", limits=limits)


__all__ = ["DEFAULT_LIMITS", "FORMATS", "ImageInfo", "ImageLimits", "read_bounded", "verify_bytes", "verify_file"]
