"""averitec convert: AVerImaTeC submissions to and from image files on disk, exactly."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import pytest
from _averimatec_fixtures import image_bytes, prediction, write_submission

from averitec_tools.cli.main import main


def test_round_trip_is_exact(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sub = write_submission(tmp_path / "sub.json", 4)
    items = json.loads(sub.read_text())
    items[1]["evidence"].append({"text": "two [IMG_1] [IMG_2]", "images": [base64.b64encode(image_bytes(7, fmt="JPEG")).decode(),
                                                                            base64.b64encode(image_bytes(8, fmt="GIF")).decode()]})
    sub.write_text(json.dumps(items))
    assert main(["convert", str(sub), "--to", "averimatec-files", "--out", str(tmp_path / "dir"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["n_images"] == 6
    on_disk = json.loads((tmp_path / "dir" / "submission.json").read_text())
    assert on_disk[1]["evidence"][-1]["images"] == ["images/1-2-0.jpg", "images/1-2-1.gif"]
    assert (tmp_path / "dir" / "images" / "1-2-1.gif").read_bytes() == image_bytes(8, fmt="GIF")  # the bytes unchanged
    assert main(["convert", str(tmp_path / "dir"), "--to", "averimatec", "--out", str(tmp_path / "back.json")]) == 0
    assert json.loads((tmp_path / "back.json").read_text()) == items


def test_files_variant_is_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "dir"
    (folder / "images").mkdir(parents=True)
    (folder / "images" / "a.png").write_bytes(image_bytes(1))
    (tmp_path / "outside.png").write_bytes(image_bytes(2))
    os.symlink(tmp_path / "outside.png", folder / "images" / "link.png")
    (folder / "images" / "fake.png").write_bytes(b"not an image")
    item = prediction(0, images=False)
    for images, message in ((["../outside.png"], "leaves the images folder"), (["images/link.png"], "leaves"),
                            (["images/missing.png"], "cannot read image"), (["images/fake.png"], "not an image"),
                            (["images/a.png", "images/a.png"], None)):
        item["evidence"] = [{"text": "[IMG_1]", "images": images}]
        (folder / "submission.json").write_text(json.dumps([item]))
        code = main(["convert", str(folder), "--to", "averimatec", "--out", str(tmp_path / "out.json")])
        err = capsys.readouterr().err
        if message is None:
            assert code == 0 and len(json.loads((tmp_path / "out.json").read_text())[0]["evidence"][0]["images"]) == 2
        else:
            assert code == 2 and message in err and "(claim 0): evidence[0].images[0]" in err, err
    assert main(["convert", str(folder), "--to", "averimatec", "--out", str(folder / "images" / "a.png")]) == 2
    assert "refusing to overwrite an input" in capsys.readouterr().err
    assert (folder / "images" / "a.png").read_bytes() == image_bytes(1)
    assert main(["convert", str(folder), "--to", "averimatec", "--from", "2024", "--out", str(tmp_path / "x.json")]) == 2
    assert "takes neither --from nor --references" in capsys.readouterr().err
