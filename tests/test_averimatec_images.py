"""AVerImaTeC image safety: decoding, Pillow verification, pixel and byte bounds (bombs are
refused from the header, without being expanded), [IMG_k] references, gold image names."""

from __future__ import annotations

import base64
import io
import json
import tracemalloc
from pathlib import Path

import pytest
from _averimatec_fixtures import b64, image_bytes, prediction, write_dataset
from PIL import Image

from averitec_tools.cli.main import main
from averitec_tools.errors import UserError
from averitec_tools.records.averimatec import AVerImaTeCEvidence, AVerImaTeCPrediction
from averitec_tools.scoring.averimatec_images import (
    GoldImages,
    ImageLimits,
    decode_image,
    default_gold_images,
    verify_prediction,
)

W = "sub.json[0] (claim 0): evidence[0].images[0]"


def _png(size: tuple[int, int], mode: str = "1") -> bytes:
    buf = io.BytesIO()
    Image.new(mode, size).save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def test_formats_and_data_urls() -> None:
    for fmt, mime in (("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")):
        data = image_bytes(3, fmt=fmt)
        info = decode_image(b64(data), where=W)
        assert (info.mime, info.width, info.height, info.nbytes) == (mime, 6, 4, len(data))
        assert info.data_url == f"data:{mime};base64,{b64(data)}"
    # a data URL as the organisers' image loader accepts it
    assert decode_image("data:image/png;base64," + b64(image_bytes(1)), where=W).mime == "image/png"


def test_decompression_bomb_refused_from_header() -> None:
    bomb = _png((12_000, 12_000))  # 144 megapixels of one bit: a few KB on disk
    assert len(bomb) < 64_000
    tracemalloc.start()
    with pytest.raises(UserError, match=r"evidence\[0\]\.images\[0\]: image of 12000x12000 pixels"):
        decode_image(b64(bomb), where=W)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert peak < 8 << 20  # never expanded (18 MB of pixels at one bit each)
    with pytest.raises(UserError, match="a side are accepted"):
        decode_image(b64(_png((20_000, 2))), where=W)


@pytest.mark.parametrize(("value", "message"), [
    ("%%%%", "not base64"),
    (b64(b"GIF89a but not really"), "not an image Pillow can read|damaged image data"),
    (b64(image_bytes(2, fmt="JPEG")[:60]), "damaged image data|not an image"),
    (b64(image_bytes(2, fmt="PNG", size=(64, 64))[:90]), "damaged image data"),
    (b64(image_bytes(2, fmt="TIFF")), "not an image Pillow can read"),
])
def test_bad_images_name_claim_and_field(value: str, message: str) -> None:
    with pytest.raises(UserError, match=r"^sub\.json\[0\] \(claim 0\): evidence\[0\]\.images\[0\]: (" + message + ")"):
        decode_image(value, where=W)


def test_byte_and_count_limits() -> None:
    data = image_bytes(4)
    with pytest.raises(UserError, match=f"image of {len(data)} bytes"):
        decode_image(b64(data), where=W, limits=ImageLimits(max_bytes=len(data) - 1))
    with pytest.raises(UserError, match="image of more than 10 bytes"):
        decode_image(b64(data), where=W, limits=ImageLimits(max_bytes=10))  # refused before decoding base64
    item = AVerImaTeCEvidence("[IMG_1] [IMG_2]", (b64(data), b64(data)))
    pred = AVerImaTeCPrediction(0, (), "", "Refuted", (item, item))
    with pytest.raises(UserError, match="4 evidence images"):
        verify_prediction(pred, where="sub.json[0] (claim 0)", limits=ImageLimits(max_images_per_claim=3))
    assert [len(i) for i in verify_prediction(pred, where="w")] == [2, 2]


def test_image_references() -> None:
    pred = AVerImaTeCPrediction.from_dict(prediction(0), where="sub.json[0]")
    assert verify_prediction(pred, where="w")[0][0].mime == "image/png"
    for text, images in (("see [IMG_0]", 1), ("see [IMG_2]", 1), ("see [IMG_1]", 0)):
        bad = AVerImaTeCPrediction(0, (), "", "Refuted", (AVerImaTeCEvidence(text, (b64(image_bytes(1)),) * images),))
        with pytest.raises(UserError, match=r"\(claim 0\): evidence\[0\]\.text: \[IMG_\d\] but the item has"):
            verify_prediction(bad, where="sub.json[0] (claim 0)")


def test_gold_images(tmp_path: Path) -> None:
    write_dataset(tmp_path / "averimatec", 2)
    images = GoldImages(tmp_path / "averimatec" / "images")
    assert images.get("0_claim.jpg", where="w").mime == "image/jpeg"
    for name in ("../val.json", "/etc/passwd", ""):
        with pytest.raises(UserError, match="leaves the images folder"):
            images.get(name, where="val.json[0].questions[0]")
    (tmp_path / "averimatec" / "images" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n broken")
    with pytest.raises(UserError, match="gold image broken.png: "):
        images.get("broken.png", where="claim 0: gold QA 1")
    (tmp_path / "averimatec" / "test_data").mkdir()
    assert default_gold_images(tmp_path / "averimatec" / "test_data" / "test.json") == tmp_path / "averimatec" / "images"
    assert default_gold_images(tmp_path / "averimatec" / "val.json") == tmp_path / "averimatec" / "images"


def test_cli_refuses_a_bomb_before_any_request(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = write_dataset(tmp_path, 2)
    items = [prediction(0), prediction(1)]
    items[1]["evidence"][0] = {"text": "huge [IMG_1]", "images": [base64.b64encode(_png((9000, 9000))).decode()]}
    sub = tmp_path / "sub.json"
    sub.write_text(json.dumps(items))
    argv = ["score", str(sub), str(gold), "--profile", "averimatec", "--judge-url", "http://127.0.0.1:9/v1",
            "--judge-cache", str(tmp_path / "cache"), "--dry-run"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "sub.json[1] (claim 1): evidence[0].images[0]: image of 9000x9000 pixels" in err and err.count("\n") == 1
