"""One partial-run policy for both baselines (issue 26): an interrupted run's
``OUT.partial.jsonl`` is refused unless ``--resume`` or ``--overwrite``, never deleted
silently; ``--resume`` continues it (the result equals an uninterrupted run), a torn last
line is repaired, a header of another run is refused; ``--overwrite`` starts over.

The R2VC side runs the fake-backend pipeline of ``tests/_r2vc_helpers.py``; the AVeriTeC
side runs its pipeline (claim-only variant) with fake verdict and justification stages, so
both run in well under a second. The CLI refusal happens before any model is built.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from _averitec_baseline_fixtures import claims as averitec_claims
from _averitec_baseline_fixtures import write_json
from _r2vc_helpers import KeywordNLI, ListRetriever, tiny_claims, tiny_passages

from averitec_tools.baselines._run.sidecar import sidecar_path
from averitec_tools.cli.main import main
from averitec_tools.errors import UserError


# --------------------------------------------------------------------------- two tiny pipelines
def _r2vc(tau_cal: float = 0.6) -> tuple[Any, list[Any], Any]:
    from averitec_tools.baselines.r2vc.config import config_from_mapping
    from averitec_tools.baselines.r2vc.io.claims import ClaimInput
    from averitec_tools.baselines.r2vc.pipeline import R2VCPipeline
    from averitec_tools.baselines.r2vc.stages.generation.nli_fallback import NLIFallbackGenerator
    from averitec_tools.baselines.r2vc.stages.verification.verifier import verifier_from_config

    cfg = config_from_mapping({"calibration": {"tau_cal": tau_cal}}, source="t").effective()
    verifier = verifier_from_config(backend=KeywordNLI(), config=cfg.verifier)
    pipe = R2VCPipeline(retriever=ListRetriever(tiny_passages()), verifier=verifier, calibrator=None, config=cfg,
                        generator=NLIFallbackGenerator(nli=verifier.nli, subset_size=cfg.generator.subset_size))
    claims = [ClaimInput(claim_id=i, claim=c["claim"]) for i, c in enumerate(tiny_claims())]
    return pipe, claims, pipe.predict


class _Verdict:
    def predict(self, pairs: list[Any]) -> np.ndarray:
        return np.array([[0.1, 0.6, 0.2, 0.1]] * len(pairs))


class _Justifier:
    component = "fake-justifier"

    def justify(self, items: list[Any]) -> list[str]:
        return [f"{label}: {claim[:12]}" for claim, _, label in items]


def _averitec(tmp: Path, variant: str = "claim-only") -> tuple[Any, list[Any], Any]:
    from averitec_tools.baselines.averitec.config import resolve_config
    from averitec_tools.baselines.averitec.io.data import read_claims
    from averitec_tools.baselines.averitec.pipeline import AVeriTeCPipeline
    from averitec_tools.baselines.averitec.variants import get_variant

    claims = read_claims(write_json(tmp / "dev.json", averitec_claims("dev", 4)))
    pipe = AVeriTeCPipeline(config=resolve_config("offline-minilm"), variant=get_variant(variant), store=None,
                            question_writer=None, reranker=None, verdict=_Verdict(), justifier=_Justifier(),
                            components={"verdict": "fake", "justification": "fake-justifier"})
    return pipe, claims, pipe.run_claim


FORMAT = {"r2vc": "averitec2024", "averitec": "2024"}


def _pipeline(which: str, tmp: Path, **kw: Any) -> tuple[Any, list[Any], Any]:
    return _r2vc(**kw) if which == "r2vc" else _averitec(tmp, **kw)


def _interrupted(which: str, tmp: Path, out: Path, *, after: int = 2) -> None:
    """Run until ``after`` claims are saved, then interrupt (as Ctrl-C would)."""
    pipe, claims, predict = _pipeline(which, tmp)

    def stopping(todo: list[Any]) -> Any:
        for n, claim in enumerate(todo):
            if n == after:
                raise KeyboardInterrupt
            yield predict(claim)

    with pytest.raises(KeyboardInterrupt):
        pipe.run(claims, out=str(out), output_format=FORMAT[which], progress=False, predict_many=stopping)
    assert not out.exists()  # never a half-written output
    assert len(sidecar_path(out).read_text().splitlines()) == 1 + after  # header + finished claims


BASELINES = ["r2vc", "averitec"]


@pytest.mark.parametrize("which", BASELINES)
def test_a_partial_run_is_refused_without_a_flag_and_left_untouched(which: str, tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    _interrupted(which, tmp_path, out)
    before = sidecar_path(out).read_bytes()
    pipe, claims, _ = _pipeline(which, tmp_path)
    with pytest.raises(UserError, match=r"partial progress here \(pass --resume to continue it or --overwrite"):
        pipe.run(claims, out=str(out), output_format=FORMAT[which], progress=False)
    assert sidecar_path(out).read_bytes() == before and not out.exists()
    with pytest.raises(UserError, match="contradict"):
        pipe.run(claims, out=str(out), output_format=FORMAT[which], progress=False, resume=True, overwrite=True)
    assert sidecar_path(out).read_bytes() == before


@pytest.mark.parametrize("which", BASELINES)
def test_a_run_failing_before_its_first_claim_leaves_no_partial_run(which: str, tmp_path: Path) -> None:
    pipe, claims, _ = _pipeline(which, tmp_path)
    out = tmp_path / "p.json"

    def bad_input(todo: list[Any]) -> Any:
        raise UserError("claims.json: claim 0: bad input")
        yield

    with pytest.raises(UserError, match="bad input"):
        pipe.run(claims, out=str(out), output_format=FORMAT[which], progress=False, predict_many=bad_input)
    assert not sidecar_path(out).exists() and not out.exists()
    assert pipe.run(claims, out=str(out), output_format=FORMAT[which], progress=False).n_claims == 4  # no flag needed


@pytest.mark.parametrize("which", BASELINES)
def test_resume_continues_and_equals_an_uninterrupted_run(which: str, tmp_path: Path) -> None:
    pipe, claims, _ = _pipeline(which, tmp_path)
    clean = tmp_path / "clean.json"
    pipe.run(claims, out=str(clean), output_format=FORMAT[which], progress=False)
    out = tmp_path / "p.json"
    _interrupted(which, tmp_path, out)
    with sidecar_path(out).open("a") as fh:
        fh.write('{"key": "2", "record": {"claim_id"')  # the third claim's write, torn
    pipe, claims, _ = _pipeline(which, tmp_path)
    summary = pipe.run(claims, out=str(out), output_format=FORMAT[which], progress=False, resume=True)
    assert summary.n_resumed == 2
    assert out.read_bytes() == clean.read_bytes()
    assert not sidecar_path(out).exists()


@pytest.mark.parametrize("which", BASELINES)
def test_a_torn_last_line_is_repaired(which: str, tmp_path: Path) -> None:
    from averitec_tools.baselines._run.sidecar import read_sidecar

    out = tmp_path / "p.json"
    _interrupted(which, tmp_path, out)
    side = sidecar_path(out)
    good = side.read_bytes()
    side.write_bytes(good + b'{"key": "2", "rec')
    header = json.loads(good.splitlines()[0])
    assert len(read_sidecar(side, header)) == 2
    assert side.read_bytes() == good  # truncated back to the last whole line


@pytest.mark.parametrize("which", BASELINES)
def test_overwrite_starts_over(which: str, tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    _interrupted(which, tmp_path, out)
    pipe, claims, _ = _pipeline(which, tmp_path)
    summary = pipe.run(claims, out=str(out), output_format=FORMAT[which], progress=False, overwrite=True)
    assert summary.n_resumed == 0 and summary.n_claims == 4
    assert len(json.loads(out.read_text())) == 4 and not sidecar_path(out).exists()


@pytest.mark.parametrize("which", BASELINES)
def test_a_partial_run_of_another_run_is_refused(which: str, tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    _interrupted(which, tmp_path, out)
    before = sidecar_path(out).read_bytes()
    other = {"tau_cal": 0.9} if which == "r2vc" else {"variant": "gold-evidence"}
    pipe, claims, _ = _pipeline(which, tmp_path, **other)
    with pytest.raises(UserError, match="different configuration|different variant"):
        pipe.run(claims, out=str(out), output_format=FORMAT[which], progress=False, resume=True)
    pipe, claims, _ = _pipeline(which, tmp_path)
    with pytest.raises(UserError, match="different claims"):
        pipe.run(claims[:3], out=str(out), output_format=FORMAT[which], progress=False, resume=True)
    with pytest.raises(UserError, match="different output format"):
        pipe.run(claims, out=str(out), output_format="ternary" if which == "r2vc" else "2023", progress=False,
                 resume=True)
    assert sidecar_path(out).read_bytes() == before


@pytest.mark.parametrize("which", BASELINES)
def test_cli_refuses_a_partial_run_before_building_anything(which: str, tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "p.json"
    side = sidecar_path(out)
    side.write_text('{"_x_sidecar": 1}\n{"key": "0", "record": {}}\n')
    before = side.read_bytes()
    dev = write_json(tmp_path / "dev.json", averitec_claims("dev", 2))
    argv = ["baseline", which, "--config", "offline-minilm", "--claims", str(dev), "--out", str(out), "--no-progress"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(side) in err and "--resume" in err and "--overwrite" in err
    assert side.read_bytes() == before and not out.exists()
