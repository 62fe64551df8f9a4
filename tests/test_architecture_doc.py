"""``docs/architecture.md`` draws the import graph as it is: regenerated here, it must not change."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location("gen_architecture", ROOT / "docs" / "gen_architecture.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_architecture"] = module
    spec.loader.exec_module(module)
    return module


def test_architecture_page_is_current(gen) -> None:
    page = gen.DOC.read_text(encoding="utf-8")
    assert gen.render(page) == page, "docs/architecture.md is stale: run python docs/gen_architecture.py"


def test_a_stale_page_is_detected(gen, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    page = gen.DOC.read_text(encoding="utf-8")
    stale = page.replace("n_r2vc_io --> n_r2vc_corpus\n", "")
    assert stale != page
    doc = tmp_path / "architecture.md"
    doc.write_text(stale, encoding="utf-8")
    monkeypatch.setattr(gen, "DOC", doc)
    assert gen.main(["--check"]) == 1
    assert gen.main([]) == 0 and doc.read_text(encoding="utf-8") == page
    assert gen.main(["--check"]) == 0


def test_the_picture_shows_every_wing_and_its_layers(gen) -> None:
    picture = gen.mermaid()
    for box in ("stages/retrieval/", "stages/generation/", "stages/verification/", "stages/calibration/",
                "stages/questions.py", "io/", "corpus/", "offline/", "experiments/", "training/", "pipeline.py"):
        assert f'["{box}"]' in picture, box
    # the import edges are the real ones: io writes questions, stages never import io
    assert "n_r2vc_io --> n_r2vc_stages_questions" in picture
    assert not any(line.strip().startswith("n_r2vc_stages") and "--> n_r2vc_io" in line
                   for line in picture.splitlines())
