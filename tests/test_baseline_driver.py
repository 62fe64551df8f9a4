"""The baselines' one driver (``baselines/_run/driver.py``) on a toy baseline: every preamble step
in order, the hooks called with the prepared run, outputs checked before the build."""

from __future__ import annotations

import ast
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from averitec_tools.baselines._run.decision_fit import cached_fit
from averitec_tools.baselines._run.driver import (
    Baseline,
    ManifestParts,
    PredictMany,
    Run,
    check_run_outputs,
    drive,
)
from averitec_tools.baselines._run.spec import RunSpec, resolve_config
from averitec_tools.baselines._run.summary import RunSummary
from averitec_tools.errors import UserError

PACKAGE = Path(__file__).resolve().parents[1] / "averitec_tools"


class Upper(Baseline[RunSpec, str, str, list[str]]):
    """Upper-cases each claim; records the hooks it was called with."""

    builtin_configs = ("shout",)

    def __init__(self, *, manifest: bool = False) -> None:
        self.writes_manifest = manifest
        self.calls: list[str] = []

    def load_config(self, name: str) -> str:
        if name not in self.builtin_configs and not Path(name).is_file():
            raise UserError(f"{name}: no such configuration")
        return name

    def default_claims(self, spec: RunSpec, config: str) -> str:
        raise UserError("--claims is required")

    def read_claims(self, spec: RunSpec, config: str, path: str) -> list[str]:
        self.calls.append("read_claims")
        return [c["claim"] for c in json.loads(Path(path).read_text())][: spec.limit]

    def output_format(self, spec: RunSpec, claims: Sequence[str]) -> str:
        return "json"

    def build(self, run: Run[RunSpec, str, str]) -> list[str]:
        self.calls.append("build")
        return []

    def worker(self, run: Run[RunSpec, str, str]) -> Callable[[], Callable[[list[str]], list[Any]]]:
        return lambda: (lambda batch: [c.upper() for c in batch])

    def predict(self, pipe: list[str], run: Run[RunSpec, str, str], predict_many: PredictMany | None) -> RunSummary:
        from averitec_tools.baselines._run.loop import run_claims
        from averitec_tools.baselines._run.output import write_rows

        self.calls.append("predict")
        spec = run.spec
        done = run_claims(claims=run.claims, claim_id=lambda c: c, kind="upper", config=run.config,
                          output_format=run.output_format, out=spec.out,
                          predict_many=predict_many or (lambda todo: [c.upper() for c in todo]),
                          encode=lambda p: p, progress=False,
                          write_output=lambda rows: write_rows(rows, out=spec.out, json_lines=False))
        return RunSummary(out=spec.out, config=run.config, output_format=run.output_format,
                          n_claims=len(done.records), layout=("out", "n_claims"))

    def manifest(self, pipe: list[str], run: Run[RunSpec, str, str]) -> ManifestParts:
        return ManifestParts(data={"claims": run.claims_path}, config=None, seeds={}, extra={"toy": True})

    def summarise(self, summary: RunSummary, pipe: list[str], run: Run[RunSpec, str, str], *, on_workers: bool,
                  manifest: Path | None) -> None:
        self.calls.append("summarise")
        summary.extra["manifest"] = None if manifest is None else manifest.name


@pytest.fixture
def claims(tmp_path: Path) -> Path:
    path = tmp_path / "claims.json"
    path.write_text(json.dumps([{"claim": "a"}, {"claim": "b"}, {"claim": "c"}]))
    return path


def test_drive_runs_the_hooks_and_writes_every_output(tmp_path: Path, claims: Path) -> None:
    toy = Upper(manifest=True)
    out, gold = tmp_path / "p.json", tmp_path / "gold.json"
    summary = drive(toy, RunSpec(config="shout", claims=str(claims), out=str(out), limit=2,
                                 write_gold_subset=str(gold)))
    assert toy.calls == ["read_claims", "build", "predict", "summarise"]
    assert json.loads(out.read_text()) == ["A", "B"]
    assert json.loads(gold.read_text()) == [{"claim": "a"}, {"claim": "b"}]
    manifest = json.loads((tmp_path / "p.json.manifest.json").read_text())
    assert manifest["toy"] is True and manifest["data"]["claims"]["sha256"]
    assert summary.to_dict() == {"out": str(out), "n_claims": 2, "engine": {"engine": "local"},
                                 "manifest": "p.json.manifest.json"}


@pytest.mark.parametrize(("change", "message"), [
    ({"limit": 0}, "--limit must be at least 1, got 0"),
    ({"config": ""}, "--config is required"),
    ({"claims": None}, "--claims is required"),
    ({"config": "nowhere.yaml"}, "nowhere.yaml: no such configuration"),
])
def test_bad_flags_fail_before_any_claim_is_read(tmp_path: Path, claims: Path, change: dict[str, Any],
                                                message: str) -> None:
    toy = Upper()
    spec = {"config": "shout", "claims": str(claims), "out": str(tmp_path / "p.json")} | change
    with pytest.raises(UserError, match=message):
        drive(toy, RunSpec(**spec))
    assert toy.calls == []


def test_outputs_are_checked_before_the_claims_are_read(tmp_path: Path, claims: Path) -> None:
    toy = Upper()
    config = tmp_path / "c.yaml"
    config.write_text("x")
    for out in (claims, config):  # an input: the claims, or a configuration read from a file
        with pytest.raises(UserError, match="is the input file"):
            drive(toy, RunSpec(config=str(config), claims=str(claims), out=str(out)))
    assert toy.calls == []


def test_gold_subset_may_not_be_the_predictions(tmp_path: Path) -> None:
    out = tmp_path / "p.json"
    with pytest.raises(UserError, match="is also --out"):
        check_run_outputs(RunSpec(config="c", out=str(out), write_gold_subset=str(out)), claims_path="c.json",
                          config_file=None, manifest=False)
    out.write_text("[]")
    alias = tmp_path / "alias.json"
    alias.symlink_to(out)
    with pytest.raises(UserError, match="--write-gold-subset"):
        check_run_outputs(RunSpec(config="c", out=str(out), write_gold_subset=str(alias)), claims_path="c.json",
                          config_file=None, manifest=False)


def test_a_baseline_without_workers_refuses_another_engine(tmp_path: Path, claims: Path) -> None:
    class Local(Upper):
        worker = Baseline.worker  # the contract's default: local only

    class Ray:
        name = "ray"

    with pytest.raises(UserError, match="Local runs on the local engine only"):
        drive(Local(), RunSpec(config="shout", claims=str(claims), out=str(tmp_path / "p.json"), engine=Ray()))


def test_a_config_is_a_file_unless_it_is_a_builtin_name() -> None:
    assert resolve_config("paper", builtins=("paper",), load=str.upper).file is None
    assert resolve_config("paper.yaml", builtins=("paper",), load=str.upper).file == "paper.yaml"
    assert resolve_config(42, builtins=("paper",), load=str).config == 42  # an object: as it is


def test_cached_fit_reads_back_what_it_wrote(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "fit.json"
    made: list[int] = []

    def make() -> dict[str, Any]:
        made.append(1)
        return {"bias": (1.0, 2.0)}

    def read(p: Path) -> dict[str, Any]:
        return dict(json.loads(p.read_text()))

    def write(fit: dict[str, Any], p: Path) -> None:
        p.write_text(json.dumps(fit))

    assert cached_fit(path, make, read=read, write=write) == {"bias": (1.0, 2.0)}
    assert cached_fit(path, make, read=read, write=write) == {"bias": [1.0, 2.0]} and made == [1]
    again = tmp_path / "again.json"
    assert cached_fit(again, make, read=read, write=write, read_back=True) == {"bias": [1.0, 2.0]}


def test_one_run_summary_class_in_the_package() -> None:
    found = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
             for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
             if isinstance(node, ast.ClassDef) and node.name == "RunSummary"]
    assert found == ["baselines/_run/summary.py"], found
