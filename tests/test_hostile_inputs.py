"""Hostile-input harness (issue 12): every subcommand against hostile paths and mutated files.

Invariants checked on every run:

* the exit status is 0 or 2 (argument errors aside), and no exception escapes ``main``
  (so never a traceback);
* on exit 2, stderr is at most one line;
* every input file is byte-identical afterwards;
* on failure no output appears (no partial file, no temporary file left beside it), and an
  output that existed before is unchanged;
* created files have the mode ``open()`` gives under the umask (directories likewise).

Paths: output = each input (also as a symlink and a hard link), an existing directory, a
read-only directory (root may write there; then the run must succeed cleanly), a missing
parent, a parent that is a file. Files (hypothesis): truncation, byte flips, a BOM, a
wrong type in a field, a huge string, a duplicated item. Examples are bounded so the
module runs in well under two minutes on two cores.

``baseline r2vc`` runs with its pipeline builder stubbed out: the harness covers its
argument, claims-file and output checks, not the models (tests/test_cli_baseline.py runs
the pipeline itself).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from _score_fixtures import GOLD, PRED_2024, gold_evalai, pred_evalai
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from averitec_tools.cli.main import main

FEVER_GOLD = [{"id": i, "verifiable": "VERIFIABLE", "label": "SUPPORTS", "claim": f"claim {i}",
               "evidence": [[[0, 0, "Page", i]]]} for i in range(3)]
FEVER_PRED = [{"id": i, "predicted_label": "SUPPORTS", "predicted_evidence": [["Page", i]], "confidence": 0.7}
              for i in range(3)]
CONF_PRED = [{**p, "confidence": 0.3 + 0.2 * i} for i, p in enumerate(PRED_2024)]
VITAMINC_ROWS = [{"unique_id": f"u{i}", "case_id": f"c{i // 2}", "wiki_revision_id": "1", "label": "SUPPORTS",
                  "claim": f"claim {i}", "evidence": f"evidence {i}", "page": "P", "revision_type": "real"}
                 for i in range(6)]
FEVER_WIKI = [{"id": "", "text": "", "lines": ""}] + [
    {"id": f"Page_{i}", "text": "t", "lines": f"0\tSentence {i} .\tlink\n1\t"} for i in range(3)]
PAPER_RECIPE = (b"base: paper-vitaminc\ntrain_rows: rows.jsonl\neval_claims: rows.jsonl\nslice_size: 2\n"
                b"generator: ./no-such-model\n")
GOLD_DATED = [{**g, "claim_date": f"0{i + 1}-10-2020", "fact_checking_article": "https://factcheck.org/a"}
              for i, g in enumerate(GOLD)]


def _judgement_cache() -> bytes:
    """An Ev2R judgement cache holding two judges' Q+A replies for the fixture claims (judge-agreement --cache-only)."""
    from averitec_tools.metrics.ev2r import JudgePrompt
    from averitec_tools.metrics.ev2r_runner import JudgementCache
    from averitec_tools.scoring.fever8_inputs import judge_requests, load_claims

    with tempfile.TemporaryDirectory() as d:
        pred, gold = Path(d) / "pred.json", Path(d) / "gold.json"
        pred.write_bytes(_json(PRED_2024))
        gold.write_bytes(_json(GOLD))
        claims = load_claims(predictions=pred, references=gold).claims
        cache = JudgementCache(Path(d) / "c.sqlite")
        for model, supported in (("judge-a", 2), ("judge-b", 1)):
            for _, _, r in judge_requests(claims, prompt=JudgePrompt.load(), model=model, kinds=("qa",)):
                cache.put(r.key, json.dumps({"facts count predicted evidence": 2, "support predicted evidence": 1,
                                             "facts count reference evidence": 2, "support reference evidence": supported}))
        cache.close()
        return (Path(d) / "c.sqlite").read_bytes()


def _averimatec() -> dict[str, bytes]:
    """AVerImaTeC files (tests/_averimatec_fixtures.py): gold, submission, an official
    intermediate file for --replay, and the on-disk variant of the submission (one image)."""
    from _averimatec_fixtures import gold_claim, image_bytes, prediction

    rows = [{"ques_score": 0.5, "evid_score": 0.5 * i, "verdict_score": 1.0, "justi_score": 0.25,
             "intermediate_info": {}} for i in range(3)]
    files_variant = [{**prediction(i, images=False), "evidence": [{"text": "x [IMG_1]", "images": ["img0.png"]}]}
                     for i in range(2)]
    return {"gold.json": _json([gold_claim(i) for i in range(3)]), "pred.json": _json([prediction(i) for i in range(3)]),
            "rows.json": _json(rows), "submission.json": _json(files_variant), "img0.png": image_bytes(1)}


def _jsonl(items: list[Any]) -> bytes:
    return "".join(json.dumps(i) + "\n" for i in items).encode()


def _json(items: list[Any]) -> bytes:
    return json.dumps(items).encode()


@dataclass
class Case:
    """One command line: its input files (name → bytes), outputs, and how to build argv."""

    name: str
    inputs: dict[str, bytes]
    argv: Callable[[Path, Path | None], list[str]]  # (workdir, output or None) -> argv
    output_kind: str | None = None  # "file", "dir" or None
    output_flag: str = ""
    mutable: list[str] = field(default_factory=list)  # inputs the mutation tests corrupt
    #: Builds files from the inputs in the work folder (a leaderboard database); their names,
    #: in ``derived``, are inputs too (never written, never an output).
    prepare: Callable[[Path], None] | None = None
    derived: list[str] = field(default_factory=list)

    @property
    def all_inputs(self) -> list[str]:
        return [*self.inputs, *self.derived]



def _ratings_xlsx() -> bytes | None:
    """A 4-row ratings workbook in the Ev2R study's layout (``averitec meta-eval --ratings``)."""
    try:
        import openpyxl
    except ImportError:
        return None
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.append(["Team", "id", "claim", "predicted evidence",
                  "1. Does the predicted evidence contain any of the following three major errors? If yes, ...",
                  "label_majority", "semantic_coverage", "coherence", "redundancy", "consistency", "relevance"])
    for i in range(4):
        sheet.append([f"team{i % 2}", 10 + i, f"Claim {i}.", "x", "No major errors.", "b. refuted",
                      1 + i, 2, 3, 4 - i % 2, 5 - i])
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


META_ITEMS = [{"claim": f"Claim {i}.", "evidence": f"Question: q{i}?\nAnswer: the answer is {'yes ' * i}\n",
               "response": {"reference_evidence": "Question: q?\nAnswer: the answer is yes yes\n", "score": 0.1 * i},
               "gold": "Refuted", "id": 10 + i} for i in range(4)]

CASES: list[Case] = [
    Case("score2024", {"pred.json": _json(PRED_2024), "gold.json": _json(GOLD)},
         lambda d, o: ["score", str(d / "pred.json"), str(d / "gold.json"), "--jobs", "1", "--json",
                       *(["--per-claim", str(o)] if o else [])],
         "file", "--per-claim", ["pred.json", "gold.json"]),
    Case("score-subset", {"pred.json": _json(PRED_2024[1:]), "gold.json": _json(GOLD)},
         lambda d, o: ["score", str(d / "pred.json"), str(d / "gold.json"), "--jobs", "1", "--subset",
                       *(["--per-claim", str(o)] if o else [])],
         "file", "--per-claim", ["pred.json"]),
    Case("score-evalai", {"pred.jsonl": _jsonl(pred_evalai()), "gold.jsonl": _jsonl(gold_evalai())},
         lambda d, o: ["score", str(d / "pred.jsonl"), str(d / "gold.jsonl"), "--profile", "evalai", "--jobs", "1",
                       *(["--per-claim", str(o)] if o else [])],
         "file", "--per-claim", ["pred.jsonl", "gold.jsonl"]),
    Case("score-fever", {"pred.jsonl": _jsonl(FEVER_PRED), "gold.jsonl": _jsonl(FEVER_GOLD)},
         lambda d, o: ["score", str(d / "pred.jsonl"), str(d / "gold.jsonl"), "--profile", "fever", "--json",
                       *(["--per-claim", str(o)] if o else [])],
         "file", "--per-claim", ["pred.jsonl", "gold.jsonl"]),
    Case("calibration", {"pred.json": _json(CONF_PRED), "gold.json": _json(GOLD)},
         lambda d, o: ["calibration", str(d / "pred.json"), str(d / "gold.json"), "--n-resamples", "0",
                       "--drop-missing-confidence", *(["--plot", str(o)] if o else [])],
         "dir", "--plot", ["pred.json"]),
    Case("compare", {"a.json": _json(PRED_2024), "b.json": _json(CONF_PRED), "gold.json": _json(GOLD)},
         lambda d, o: ["compare", str(d / "a.json"), str(d / "b.json"), str(d / "gold.json"),
                       "--n-resamples", "20", "--json"],
         None, "", ["a.json"]),
    Case("audit", {"gold.json": _json(GOLD_DATED)},
         lambda d, o: ["audit", str(d / "gold.json"), "--json", *(["--html", str(o)] if o else [])],
         "file", "--html", ["gold.json"]),
    Case("audit-submission", {"pred.json": _json(PRED_2024), "gold.json": _json(GOLD_DATED)},
         lambda d, o: ["audit", str(d / "pred.json"), "--references", str(d / "gold.json"),
                       *(["--html", str(o)] if o else [])],
         "file", "--html", ["pred.json", "gold.json"]),
    Case("stats", {"dev.json": _json(GOLD)},
         lambda d, o: ["stats", "averitec", "--split", "dev", "--data-dir", str(d / "dev.json"), "--json"],
         None, "", ["dev.json"]),
    Case("export-hf", {"dev.json": _json(GOLD)},
         lambda d, o: ["export-hf", "averitec", "--split", "dev", "--data-dir", str(d / "dev.json"), "--json",
                       "--out", str(o or d / "hf")],
         "dir", "--out", ["dev.json"]),
    Case("baseline-r2vc", {"claims.json": _json(GOLD)},
         lambda d, o: ["baseline", "r2vc", "--config", "offline-minilm", "--claims", str(d / "claims.json"),
                       "--json", "--out", str(o or d / "preds.json")],
         "file", "--out", ["claims.json"]),
    Case("baseline-r2vc-ablations", {"claims.json": _json(GOLD)},
         lambda d, o: ["baseline", "r2vc", "ablations", "--config", "offline-minilm", "--claims",
                       str(d / "claims.json"), "--candidates", str(d / "store"), "--json",
                       "--out", str(o or d / "rows")],
         "dir", "--out", ["claims.json"]),
    Case("baseline-averitec", {"claims.json": _json(GOLD)},
         lambda d, o: ["baseline", "averitec", "--config", "offline-minilm", "--claims", str(d / "claims.json"),
                       "--store", str(d), "--json", "--out", str(o or d / "preds.json")],
         "file", "--out", ["claims.json"]),
    Case("baseline-averitec-reproduce", {"claims.json": _json(GOLD)},
         lambda d, o: ["baseline", "averitec", "reproduce", "--config", "offline-minilm", "--claims",
                       str(d / "claims.json"), "--store", str(d), "--json", "--out", str(o or d / "repro")],
         "dir", "--out", ["claims.json"]),
    Case("baseline-claim-only", {"claims.json": _json(GOLD), "train.json": _json(GOLD)},
         lambda d, o: ["baseline", "claim-only", "--claims", str(d / "claims.json"), "--train", str(d / "train.json"),
                       "--json", "--out", str(o or d / "preds.json")],
         "file", "--out", ["claims.json", "train.json"]),
    Case("build-store", {"claims.json": _json(GOLD)},
         lambda d, o: ["baseline", "averitec", "build-store", "--claims", str(d / "claims.json"), "--json",
                       "--out", str(o or d / "store")],
         "dir", "--out", ["claims.json"]),
    Case("data-download", {"test.json": _json(GOLD)},
         lambda d, o: ["data", "download", "averitec", "--split", "test", "--from", str(d), "--json",
                       "--out", str(o or d / "data")],
         "dir", "--out", ["test.json"]),
    Case("judge-agreement", {"pred.json": _json(PRED_2024), "gold.json": _json(GOLD),
                             "ev2r-judgements.sqlite": _judgement_cache()},
         lambda d, o: ["judge-agreement", str(d / "pred.json"), str(d / "gold.json"), "--judge-model", "judge-a",
                       "--second-judge-model", "judge-b", "--judge-cache", str(d), "--cache-only",
                       "--bootstrap-resamples", "50", "--json", *(["--per-claim", str(o)] if o else [])],
         "file", "--per-claim", ["pred.json", "gold.json"]),
    Case("convert", {"pred.json": _json(PRED_2024)},
         lambda d, o: ["convert", str(d / "pred.json"), "--to", "2023", "--json", "--out", str(o or d / "conv.json")],
         "file", "--out", ["pred.json"]),
    Case("score-averimatec-replay", {k: v for k, v in _averimatec().items() if k in ("gold.json", "pred.json", "rows.json")},
         lambda d, o: ["score", str(d / "pred.json"), str(d / "gold.json"), "--profile", "averimatec", "--json",
                       "--replay", str(d / "rows.json"), *(["--per-claim", str(o)] if o else [])],
         "file", "--per-claim", ["pred.json", "gold.json", "rows.json"]),
    Case("convert-averimatec-files", {"pred.json": _averimatec()["pred.json"]},
         lambda d, o: ["convert", str(d / "pred.json"), "--to", "averimatec-files", "--json",
                       "--out", str(o or d / "subdir")],
         "dir", "--out", ["pred.json"]),
    Case("convert-averimatec", {k: v for k, v in _averimatec().items() if k in ("submission.json", "img0.png")},
         lambda d, o: ["convert", str(d / "submission.json"), "--to", "averimatec", "--json",
                       "--out", str(o or d / "sub.json")],
         "file", "--out", ["submission.json"]),
    Case("r2vc-slice", {"rows.jsonl": _jsonl(VITAMINC_ROWS)},
         lambda d, o: ["baseline", "r2vc", "slice", "--data", str(d / "rows.jsonl"), "--n", "2", "--json",
                       "--out", str(o or d / "slice.jsonl")],
         "file", "--out", ["rows.jsonl"]),
    Case("index-fever-wiki", {"wiki-001.jsonl": _jsonl(FEVER_WIKI)},
         lambda d, o: ["index", "corpus", "--fever-wiki", str(d / "wiki-001.jsonl"), "--json",
                       "--out", str(o or d / "store")],
         "dir", "--out", ["wiki-001.jsonl"]),
    # its generator does not exist: refused before anything is written (the models are not the point here)
    Case("r2vc-paper", {"rows.jsonl": _jsonl(VITAMINC_ROWS), "recipe.yaml": PAPER_RECIPE},
         lambda d, o: ["baseline", "r2vc", "paper", "--recipe", str(d / "recipe.yaml"), "--json",
                       "--work", str(o or d / "work")],
         "dir", "--work", ["rows.jsonl"]),
]
_BOARD_TEMPLATE: dict[str, Any] = {}


def _board(work: Path) -> None:
    """A leaderboard database in ``work`` whose phase reads ``work/gold.json`` (issue 39: its
    export once replaced the database it was given as --out). Built once, then copied with
    the stored gold path pointed at ``work``."""
    import sqlite3

    from _leaderboard_helpers import competition_yaml

    if not _BOARD_TEMPLATE:
        with tempfile.TemporaryDirectory() as d, contextlib.redirect_stdout(io.StringIO()):
            root = Path(d)
            (root / "gold.json").write_bytes(_json(GOLD))
            (root / "pred.json").write_bytes(_json(PRED_2024))
            (root / "c.yaml").write_text(competition_yaml(root / "gold.json"))
            url = f"sqlite:///{root / 'lb.db'}"
            assert main(["leaderboard", "init", str(root / "c.yaml"), "--db", url]) == 0
            assert main(["leaderboard", "team", "add", "blue", "--db", url]) == 0
            assert main(["leaderboard", "submit", str(root / "pred.json"), "--team", "blue", "--system", "s",
                         "--phase", "dev", "--db", url]) == 0
            _BOARD_TEMPLATE.update(root=str(root), db=(root / "lb.db").read_bytes())
    (work / "lb.db").write_bytes(_BOARD_TEMPLATE["db"])
    (work / "lb.db").chmod(0o600)
    with contextlib.closing(sqlite3.connect(work / "lb.db")) as conn:
        with conn:
            conn.execute("UPDATE competition SET yaml = replace(yaml, ?, ?)", (_BOARD_TEMPLATE["root"], str(work)))
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


CASES.append(Case(
    "leaderboard-export", {"gold.json": _json(GOLD)},
    lambda d, o: ["leaderboard", "export", "--phase", "dev", "--format", "json", "--db", f"sqlite:///{d / 'lb.db'}",
                  "--out", str(o or d / "board.json")],
    "file", "--out", [], prepare=_board, derived=["lb.db"]))
_RATINGS = _ratings_xlsx()
if _RATINGS is not None:
    CASES.append(Case(
        "meta-eval", {"ratings.xlsx": _RATINGS, "items.jsonl": _jsonl(META_ITEMS)},
        lambda d, o: ["meta-eval", "--ratings", str(d / "ratings.xlsx"), "--items", str(d / "items.jsonl"),
                      "--no-reproduce", "--scorer", "bleu", "--resamples", "5", "--json",
                      *(["--plot", str(o)] if o else [])],
        "file", "--plot", ["items.jsonl"]))
# Commands whose model build the harness stubs out: a clean run cannot succeed.
STUBBED = {"baseline-r2vc", "baseline-r2vc-ablations", "baseline-averitec", "baseline-averitec-reproduce", "r2vc-paper",
           "baseline-claim-only"}
BY_NAME = {c.name: c for c in CASES}


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Stub the baselines' model builds (R2VC; AVeriTeC run and reproduce; the claim-only probe) and keep the datasets
    cache out of the user's home."""
    import datasets

    from averitec_tools.baselines.averitec import build as averitec_build
    from averitec_tools.baselines.averitec import claim_only
    from averitec_tools.baselines.averitec.experiments import reproduce as averitec_reproduce
    from averitec_tools.baselines.r2vc import build as r2vc_build
    from averitec_tools.errors import UserError

    def no_models(*args: Any, **kwargs: Any) -> None:
        raise UserError("pipeline build stubbed out by the harness")

    monkeypatch.setattr(r2vc_build, "build_pipeline", no_models)
    monkeypatch.setattr(averitec_build, "build_pipeline", no_models)
    monkeypatch.setattr(averitec_reproduce, "train_missing", no_models)
    monkeypatch.setattr(claim_only.ClaimOnly, "build", no_models)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf-cache")
    datasets.disable_progress_bars()


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` → file bytes (None for a directory)."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root)] = None
        for f in filenames:
            p = os.path.join(dirpath, f)
            out[os.path.relpath(p, root)] = None if os.path.islink(p) else Path(p).read_bytes()
    return out


@contextlib.contextmanager
def _umask(mask: int) -> Iterator[None]:
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


def run_checked(case: Case, work: Path, output: Path | None, *, mask: int = 0o022) -> tuple[int, str]:
    """Run ``case`` in ``work`` and assert the invariants; returns (exit code, stderr)."""
    inputs = {name: hashlib.sha256((work / name).read_bytes()).hexdigest() for name in case.all_inputs}
    before = _tree(work)
    out, err = io.StringIO(), io.StringIO()
    with _umask(mask), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(case.argv(work, output))  # any exception here fails the test: no tracebacks
    stderr = err.getvalue()
    assert code in (0, 2), (case.name, code, stderr)
    assert "Traceback" not in stderr
    if code == 2:
        assert len([ln for ln in stderr.splitlines() if ln.strip()]) <= 1, stderr
    for name, digest in inputs.items():
        assert hashlib.sha256((work / name).read_bytes()).hexdigest() == digest, f"{case.name} modified {name}"
    after = _tree(work)
    new = sorted(set(after) - set(before))
    if code != 0:
        assert new == [], f"{case.name} failed but left {new}"
        assert after == before, f"{case.name} failed but changed existing files"
    assert not [p for p in new if Path(p).name.endswith(".tmp") or ".averitec-probe." in p], new
    for rel in new:
        mode = stat.S_IMODE(os.lstat(work / rel).st_mode)
        expected = (0o777 if (work / rel).is_dir() else 0o666) & ~mask
        assert mode == expected, f"{case.name}: {rel} has mode {oct(mode)}, expected {oct(expected)}"
    return code, stderr


def make_work(case: Case, root: Path) -> Path:
    work = root / "work"
    work.mkdir()
    for name, data in case.inputs.items():
        (work / name).write_bytes(data)
    if case.prepare is not None:
        case.prepare(work)
    return work


# ---------------------------------------------------------------- clean runs and umasks

@pytest.mark.parametrize("mask", [0o022, 0o077])
@pytest.mark.parametrize("name", [c.name for c in CASES if c.name not in STUBBED])
def test_clean_inputs_succeed(name: str, mask: int, tmp_path: Path) -> None:
    case = BY_NAME[name]
    work = make_work(case, tmp_path)
    output = None
    if case.output_kind == "file":
        output = work / "out" / "result.out"  # missing parent: created
    elif case.output_kind == "dir":
        output = work / "out" / "dir"
    code, err = run_checked(case, work, output, mask=mask)
    assert code == 0, err


# ---------------------------------------------------------------- hostile output paths

def _hostile_outputs(case: Case, work: Path) -> Iterator[tuple[str, Path, bool]]:
    """(label, output path, must_fail)."""
    for name in case.all_inputs:
        yield f"input {name}", work / name, True
        link = work / f"link-{name}"
        link.symlink_to(work / name)
        yield f"symlink to {name}", link, True
        hard = work / f"hard-{name}"
        os.link(work / name, hard)
        yield f"hard link to {name}", hard, True
    (work / "afile").write_text("keep")
    yield "parent is a file", work / "afile" / "x", True
    (work / "ro").mkdir()
    (work / "ro").chmod(0o555)
    yield "read-only directory", work / "ro" / "x", os.geteuid() != 0
    if case.output_kind == "file":
        (work / "adir").mkdir()
        yield "existing directory", work / "adir", True
    else:
        yield "existing file as directory", work / "afile", True


@pytest.mark.parametrize("name", [c.name for c in CASES if c.output_kind])
def test_hostile_output_paths(name: str, tmp_path: Path) -> None:
    case = BY_NAME[name]
    work = make_work(case, tmp_path)
    for label, output, must_fail in list(_hostile_outputs(case, work)):
        code, err = run_checked(case, work, output)
        if must_fail:
            assert code == 2, f"{name}: {label}: exit {code}"
            assert case.output_flag in err or "input" in err or "cannot" in err, (label, err)
        if (work / "ro").exists():
            for p in (work / "ro").iterdir():  # root could write there: reset for the next case
                if p.is_dir():
                    import shutil

                    shutil.rmtree(p)
                else:
                    p.unlink()
    (work / "ro").chmod(0o755)


# ---------------------------------------------------------------- mutated files (hypothesis)

WRONG_VALUES = st.sampled_from([None, 0, -1, 1.5, True, "", "x", [], [None], {}, {"a": 1}, "é" * 3, "x" * 5000])


@st.composite
def mutations(draw: st.DrawFn, data: bytes) -> tuple[str, bytes]:
    kind = draw(st.sampled_from(["truncate", "flip", "bom", "wrong_type", "huge", "duplicate", "drop_key"]))
    if kind == "truncate":
        return kind, data[: draw(st.integers(0, max(0, len(data) - 1)))]
    if kind == "flip":
        buf = bytearray(data)
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, len(buf) - 1))
            buf[i] = draw(st.integers(0, 255))
        return kind, bytes(buf)
    if kind == "bom":
        return kind, b"\xef\xbb\xbf" + data
    text = data.decode()
    jsonl = not text.lstrip().startswith("[")
    items = [json.loads(line) for line in text.splitlines() if line.strip()] if jsonl else json.loads(text)
    i = draw(st.integers(0, len(items) - 1))
    item = items[i]
    if kind == "duplicate":
        items.insert(draw(st.integers(0, len(items))), json.loads(json.dumps(item)))
    elif isinstance(item, dict) and item:
        key = draw(st.sampled_from(sorted(item)))
        if kind == "drop_key":
            del item[key]
        elif kind == "huge":
            item[key] = "evidence " * 600
        else:
            item[key] = draw(WRONG_VALUES)
    return kind, (_jsonl(items) if jsonl else _json(items))


#: Cases that read their input files (a board's export reads its database, not the gold file).
READING = [c.name for c in CASES if c.prepare is None]
MUTATED = READING
# 15 commands × 12 examples: seconds on two shared cores. Hunt for more locally with
# AVERITEC_HARNESS_EXAMPLES=500 (random, not derandomised).
_EXAMPLES = int(os.environ.get("AVERITEC_HARNESS_EXAMPLES", "12"))
HARNESS = settings(max_examples=_EXAMPLES, deadline=None, derandomize="AVERITEC_HARNESS_EXAMPLES" not in os.environ,
                   suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.mark.parametrize("name", MUTATED)
@HARNESS
@given(data=st.data())
def test_mutated_inputs(name: str, data: st.DataObject) -> None:
    case = BY_NAME[name]
    target = data.draw(st.sampled_from(case.mutable), label="file")
    kind, mutated = data.draw(mutations(case.inputs[target]), label="mutation")
    with tempfile.TemporaryDirectory() as root:
        work = make_work(case, Path(root))
        (work / target).write_bytes(mutated)
        output = work / "out.result" if case.output_kind == "file" else work / "outdir"
        if name in ("compare", "stats"):
            output = None
        run_checked(case, work, output)


def test_output_folder_holding_an_input_is_refused(tmp_path: Path) -> None:
    """build-store replaces its --out folder whole: a folder holding the claims file is refused."""
    case = BY_NAME["build-store"]
    work = make_work(case, tmp_path)
    code, err = run_checked(case, work, work)
    assert code == 2
    assert "holds the input" in err


# ---------------------------------------------------------------- deeply nested JSON (issue 19)

def _nested(data: bytes, *, depth: int = 1000) -> dict[str, bytes]:
    """Variants of an input file nested ``depth`` brackets deep: the whole file, one field
    of the first item, and (for JSON lines) the last line replaced."""
    deep = "[" * depth + "]" * depth
    text = data.decode()
    jsonl = not text.lstrip().startswith("[")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    first = json.loads(lines[0]) if jsonl else json.loads(text)[0]
    key = sorted(first)[0]
    inner = json.dumps({**first, key: "@@"}).replace('"@@"', deep)
    variants = {"whole file": deep.encode()}
    if jsonl:
        last = json.loads(lines[-1])
        variants["first line"] = ("\n".join([inner, *lines[1:]]) + "\n").encode()
        variants["last line"] = ("\n".join([*lines[:-1], json.dumps({**last, key: "@@"}).replace('"@@"', deep)]) + "\n").encode()
    else:
        variants["first item"] = ("[" + inner + text.strip()[1:]).encode() if len(json.loads(text)) > 1 else f"[{inner}]".encode()
    return variants


@pytest.mark.parametrize("name", READING)
def test_deeply_nested_json_is_one_line_exit_2(name: str, tmp_path: Path) -> None:
    """1,000 nested brackets (2 KB) in any input file: exit 2, one line naming the file."""
    case = BY_NAME[name]
    json_inputs = {t: d for t, d in case.inputs.items() if t.endswith((".json", ".jsonl"))}
    assert json_inputs, f"{name}: no JSON input to nest"
    for target, data in json_inputs.items():
        for label, nested in _nested(data).items():
            with tempfile.TemporaryDirectory(dir=tmp_path) as root:
                work = make_work(case, Path(root))
                (work / target).write_bytes(nested)
                if name == "r2vc-paper":  # a generator that exists, so the run gets as far as reading the rows
                    (work / "model").mkdir()
                    (work / "recipe.yaml").write_bytes(PAPER_RECIPE.replace(b"./no-such-model", str(work / "model").encode()))
                output = work / "out.result" if case.output_kind == "file" else work / "outdir"
                code, err = run_checked(case, work, output if case.output_kind else None)
                assert code == 2, (name, target, label, err)
                assert "nested too deeply" in err and target in err, (name, target, label, err)


def test_leaderboard_submit_refuses_deeply_nested_json(tmp_path: Path) -> None:
    """The admin submit path reads uploads through the same layer: a failed submission, exit 2."""
    from _leaderboard_helpers import competition_yaml

    gold = tmp_path / "gold.json"
    gold.write_bytes(_json(GOLD))
    (tmp_path / "comp.yaml").write_text(competition_yaml(gold))
    db = f"sqlite:///{tmp_path / 'lb.db'}"
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        assert main(["leaderboard", "init", str(tmp_path / "comp.yaml"), "--db", db]) == 0
        assert main(["leaderboard", "team", "add", "blue", "--db", db]) == 0
    for label, nested in _nested(_json(PRED_2024)).items():
        upload = tmp_path / "pred.json"
        upload.write_bytes(nested)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["leaderboard", "submit", str(upload), "--db", db, "--team", "blue", "--system", label,
                         "--phase", "dev"])
        assert code == 2, (label, out.getvalue(), err.getvalue())
        assert "nested too deeply" in out.getvalue() + err.getvalue(), label


# ---------------------------------------------------------------- numbers past the parser's bounds (issue 30, item 1)

HUGE_NUMBERS = {"a 5,000-digit integer": "9" * 5000, "the integer 10^400": "1" + "0" * 400, "1e400": "1e400"}


def _with_number(data: bytes, number: str) -> dict[str, bytes]:
    """Variants of an input file with ``number`` as the value of the first item's first
    key (and, for JSON lines, of the last line's)."""
    text = data.decode()
    jsonl = not text.lstrip().startswith("[")
    lines = [ln for ln in text.splitlines() if ln.strip()]
    items = [json.loads(ln) for ln in lines] if jsonl else json.loads(text)
    key = sorted(items[0])[0]

    def put(item: dict[str, Any]) -> str:
        return json.dumps({**item, key: "@@"}).replace('"@@"', number)

    if jsonl:
        return {"first line": ("\n".join([put(items[0]), *lines[1:]]) + "\n").encode(),
                "last line": ("\n".join([*lines[:-1], put(items[-1])]) + "\n").encode()}
    return {"first item": ("[" + ", ".join([put(items[0]), *map(json.dumps, items[1:])]) + "]").encode()}


@pytest.mark.parametrize("number", list(HUGE_NUMBERS))
@pytest.mark.parametrize("name", READING)
def test_huge_numbers_are_one_line_exit_2(name: str, number: str, tmp_path: Path) -> None:
    """A claim id of 5,000 digits (past Python's 4,300-digit conversion limit), a confidence
    of 10^400 (an integer that overflows a float) or 1e400 (a float that is infinite), in
    any input file: exit 2, one line naming the file, line and column."""
    case = BY_NAME[name]
    json_inputs = {t: d for t, d in case.inputs.items() if t.endswith((".json", ".jsonl"))}
    for target, data in json_inputs.items():
        for label, mutated in _with_number(data, HUGE_NUMBERS[number]).items():
            with tempfile.TemporaryDirectory(dir=tmp_path) as root:
                work = make_work(case, Path(root))
                (work / target).write_bytes(mutated)
                if name == "r2vc-paper":
                    (work / "model").mkdir()
                    (work / "recipe.yaml").write_bytes(PAPER_RECIPE.replace(b"./no-such-model", str(work / "model").encode()))
                output = work / "out.result" if case.output_kind == "file" else work / "outdir"
                code, err = run_checked(case, work, output if case.output_kind else None)
                assert code == 2, (name, target, label, err)
                assert target in err and ("digits (at most 100 are read)" in err or "overflows to infinity" in err), (
                    name, target, label, err)


def test_competition_yaml_with_a_huge_integer_is_one_line_exit_2(tmp_path: Path) -> None:
    from _leaderboard_helpers import competition_yaml

    gold = tmp_path / "gold.json"
    gold.write_bytes(_json(GOLD))
    text = competition_yaml(gold).replace('"n_resamples": 200', '"n_resamples": ' + "9" * 5000)
    assert "9" * 5000 in text
    (tmp_path / "comp.yaml").write_text(text)
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["leaderboard", "init", str(tmp_path / "comp.yaml"), "--db", f"sqlite:///{tmp_path / 'lb.db'}"])
    assert code == 2, err.getvalue()
    lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
    assert len(lines) == 1 and "comp.yaml:" in lines[0] and "an integer of 5000 digits" in lines[0], lines
    assert not (tmp_path / "lb.db").exists() or "Traceback" not in err.getvalue()


# ---------------------------------------------------------------- endless inputs (issue 30, item 9)

def _subprocess_score(pred: str, gold: Path, *, timeout: float = 60) -> Any:
    import subprocess
    import sys

    from _leaderboard_server import env

    def cap_memory() -> None:  # a regression fails the test instead of filling the host's memory
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))

    return subprocess.run([sys.executable, "-m", "averitec_tools.cli.main", "score", pred, str(gold), "--jobs", "1"],
                          capture_output=True, text=True, timeout=timeout, env=env(), preexec_fn=cap_memory)


def test_score_dev_zero_is_refused_at_once(tmp_path: Path) -> None:
    """``/dev/zero`` has no end and no newline: the format sniff reads a bounded head."""
    gold = tmp_path / "gold.json"
    gold.write_bytes(_json(GOLD))
    done = _subprocess_score("/dev/zero", gold)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "/dev/zero:1:1: expected a JSON array or JSON lines" in done.stderr


@contextlib.contextmanager
def _endless_fifo(path: Path, head: bytes, chunk: bytes, *, cap: int = 256 << 20) -> Iterator[Path]:
    """A FIFO that gives ``head`` then ``chunk`` repeated to every reader that opens it:
    endless for a bounded reader, which stops far earlier; ``cap`` bytes per reader then
    end of file, so that a reader without the bound fails the test instead of reading for
    ever."""
    import threading

    os.mkfifo(path)
    stop = threading.Event()

    def feed() -> None:
        while not stop.is_set():
            try:
                with open(path, "wb") as fh:  # blocks until a reader opens it
                    if stop.is_set():
                        return
                    fh.write(head)
                    for _ in range(cap // len(chunk)):
                        if stop.is_set():
                            return
                        fh.write(chunk)
                time.sleep(0.05)  # the reader saw its end of file
            except (BrokenPipeError, OSError):
                continue

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()
    try:
        yield path
    finally:
        stop.set()
        with contextlib.suppress(OSError):  # wake a feeder blocked in open()
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
            os.close(fd)
        feeder.join(timeout=5)


@pytest.mark.timeout(120)
def test_score_an_endless_line_is_refused(tmp_path: Path) -> None:
    """A JSON line that never ends (a generator behind a FIFO): refused at the line bound (64 MiB)."""
    gold = tmp_path / "gold.json"
    gold.write_bytes(_json(GOLD))
    with _endless_fifo(tmp_path / "endless.jsonl", b'{"claim_id": 0, "claim": "', b"a" * (1 << 20)) as fifo:
        done = _subprocess_score(str(fifo), gold, timeout=100)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "the most one" in done.stderr and "endless.jsonl" in done.stderr, done.stderr


@pytest.mark.parametrize("head, chunk", [(b'{"claim_id": 0}\n', b"\n" * 4096), (b'{"claim_id": 0}\n', b'{"claim_id": 1}\n' * 256),
                                         (b"[", b"0, " * 4096)], ids=["blank lines", "lines", "array"])
def test_endless_inputs_stop_at_the_byte_bound(head: bytes, chunk: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """JSON lines, blank lines or an array longer than ``max_bytes`` (lowered here to 1 MiB so
    the test reads little; the default is 1 GiB) stop at the bound. A plain 4 MiB file stands
    for the endless stream: a FIFO fed by a thread raced with the reader's reopening (the
    stream ended early on one run), and an unbounded reader would read this file to its end
    without an error, so the test still fails without the bound."""
    from averitec_tools import jsonbounds
    from averitec_tools.errors import UserError
    from averitec_tools.jsonio import iter_records

    monkeypatch.setattr(jsonbounds, "DEFAULT_LIMITS", jsonbounds.ReadLimits(max_bytes=1 << 20, max_line_bytes=1 << 16))
    path = tmp_path / "endless.jsonl"
    path.write_bytes(head + chunk * ((4 << 20) // len(chunk)))
    with pytest.raises(UserError, match=r"more than 1 MiB"):
        for _ in iter_records(path):
            pass


# ---------------------------------------------------------------- issue 30: CLI cases

def _with_surrogate(items: list[dict[str, Any]], *, field: str) -> list[dict[str, Any]]:
    """A copy of ``items`` whose first item's ``field`` (dotted, list indexes as digits) ends
    in a lone surrogate; json.dumps writes it as the escape ``\\ud800``."""
    out = json.loads(json.dumps(items))
    target: Any = out[0]
    *parents, last = field.split(".")
    for part in parents:
        target = target[int(part)] if part.isdigit() else target[part]
    key: Any = int(last) if last.isdigit() else last
    target[key] = f"{target[key]}\ud800"
    return out


SURROGATE_CASES = [
    *[Case(f"convert-{to}", {"pred.json": _json(_with_surrogate(PRED_2024, field="evidence.0.answer")),
                             "gold.json": _json(GOLD)},
           lambda d, o, to=to: ["convert", str(d / "pred.json"), "--to", to, "--references", str(d / "gold.json"),
                                "--json", "--out", str(d / "conv.out")])
      for to in ("2023", "2024", "evalai", "fever8")],
    Case("convert-evalai-lines", {"pred.jsonl": _jsonl(_with_surrogate(pred_evalai(), field="evidence.1")),
                                  "gold.json": _json(GOLD)},
         lambda d, o: ["convert", str(d / "pred.jsonl"), "--to", "2024", "--references", str(d / "gold.json"),
                       "--json", "--out", str(d / "conv.out")]),
    Case("score-lenient-per-claim", {"pred.json": _json(_with_surrogate(PRED_2024, field="pred_label")),
                                     "gold.json": _json(GOLD)},
         lambda d, o: ["score", str(d / "pred.json"), str(d / "gold.json"), "--lenient", "--jobs", "1", "--json",
                       "--per-claim", str(d / "pc.json")]),
    Case("score-gold", {"pred.json": _json(PRED_2024), "gold.json": _json(_with_surrogate(GOLD, field="claim"))},
         lambda d, o: ["score", str(d / "pred.json"), str(d / "gold.json"), "--jobs", "1", "--json"]),
    Case("score-fever", {"pred.jsonl": _jsonl(FEVER_PRED),
                         "gold.jsonl": _jsonl(_with_surrogate(FEVER_GOLD, field="claim"))},
         lambda d, o: ["score", str(d / "pred.jsonl"), str(d / "gold.jsonl"), "--profile", "fever", "--json",
                       "--per-claim", str(d / "pc.json")]),
    Case("audit", {"gold.json": _json(_with_surrogate(GOLD_DATED, field="claim"))},
         lambda d, o: ["audit", str(d / "gold.json"), "--json", "--html", str(d / "a.html")]),
]


@pytest.mark.parametrize("case", SURROGATE_CASES, ids=lambda c: c.name)
def test_lone_surrogate_is_one_line_exit_2(case: Case, tmp_path: Path) -> None:
    """Issue 30 item 10: a lone surrogate escape in any field was a UnicodeEncodeError (exit 1)
    in every writer; it is refused where the file is read: exit 2, one line naming file,
    claim and field, no output."""
    work = make_work(case, tmp_path)
    code, err = run_checked(case, work, None)
    assert code == 2, err
    assert "lone surrogate U+D800" in err, err
    assert any(f"{name}[0]" in err or f"{name}:1" in err for name in case.inputs), err  # the file and the claim


@pytest.mark.parametrize("columns", [60, 80, 200])
@pytest.mark.parametrize("command", ["data-list", "compare"])
def test_tables_fit_the_terminal(command: str, columns: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 30 item 17: ``data list`` printed 154 columns and ``compare`` 100+, whatever the
    terminal. Every line fits ``COLUMNS`` now but the signature (one token, kept whole so
    it can be pasted) and the input paths."""
    monkeypatch.setenv("COLUMNS", str(columns))
    if command == "data-list":
        argv = ["data", "list", "--out", str(tmp_path / "data")]
    else:
        for name, items in (("a.json", PRED_2024), ("b.json", CONF_PRED), ("gold.json", GOLD)):
            (tmp_path / name).write_bytes(_json(items))
        argv = ["compare", str(tmp_path / "a.json"), str(tmp_path / "b.json"), str(tmp_path / "gold.json"),
                "--n-resamples", "20"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    long = [ln for ln in out.splitlines() if len(ln) > columns and not ln.startswith(("signature:", "A = ", "B = "))]
    assert long == [], "\n".join(long)
    assert ("averitec/dev" if command == "data-list" else "questions_only") in out


def test_export_hf_refuses_a_folder_holding_other_files(tmp_path: Path) -> None:
    """Issue 30 item 17: ``export-hf`` merged its card and shards into any folder. A folder
    holding anything but an export (its card and shards) is refused, untouched; another split
    of the same dataset still joins its export."""
    case = BY_NAME["export-hf"]
    work = make_work(case, tmp_path)
    (work / "hf").mkdir()
    (work / "hf" / "notes.txt").write_text("mine")
    code, err = run_checked(case, work, work / "hf")
    assert code == 2 and "not empty" in err and "notes.txt" in err, err
    (work / "hf" / "notes.txt").unlink()
    assert run_checked(case, work, work / "hf")[0] == 0  # an empty folder is fine
    assert run_checked(case, work, work / "hf")[0] == 0  # and so is its own export (the split replaced)
    (work / "hf" / "data" / "stray.csv").write_text("x")
    code, err = run_checked(case, work, work / "hf")
    assert code == 2 and "stray.csv" in err, err


@pytest.mark.parametrize("url", [5, True, ["https://a.org"], {"href": "x"}])
def test_score_and_audit_read_a_non_string_url_alike(url: Any, tmp_path: Path) -> None:
    """Issue 30 item 17: ``score`` accepted ``"url": 5`` (no scorer reads urls) and ``audit``
    refused the same file. Both accept it now; the audit lists it as an invalid URL."""
    preds = json.loads(json.dumps(PRED_2024))
    preds[0]["evidence"][0]["url"] = url
    for name in ("score2024", "audit-submission"):
        case = BY_NAME[name]
        (tmp_path / name).mkdir()
        work = make_work(case, tmp_path / name)
        (work / "pred.json").write_bytes(_json(preds))
        code, err = run_checked(case, work, None)
        assert code == 0, (name, err)
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(["audit", str(work / "pred.json"), "--references", str(work / "gold.json"), "--json"]) == 0
    rows = json.loads(out.getvalue())["invalid_urls"]["rows"]
    assert {"claim_index": 0, "url": json.dumps(url)} in [{k: r[k] for k in ("claim_index", "url")} for r in rows]


@pytest.mark.parametrize("evidence", [[], [[]]], ids=["no set", "empty set"])
def test_fever_gold_without_evidence_sets_is_one_line_exit_2(evidence: list[Any], tmp_path: Path) -> None:
    """Issue 30 item 12: a SUPPORTS gold line with no (or an empty) evidence set gave every
    prediction recall 1.0; strict mode names the line and the claim (--lenient scores it)."""
    gold = json.loads(json.dumps(FEVER_GOLD))
    gold[1]["evidence"] = evidence
    case = Case("score-fever-empty-gold", {"pred.jsonl": _jsonl(FEVER_PRED), "gold.jsonl": _jsonl(gold)},
                BY_NAME["score-fever"].argv)
    work = make_work(case, tmp_path)
    code, err = run_checked(case, work, work / "pc.json")
    assert code == 2 and "gold.jsonl:2: claim 1 (SUPPORTS)" in err and "--lenient" in err, err
    lenient = Case(case.name, case.inputs, lambda d, o: [*BY_NAME["score-fever"].argv(d, o), "--lenient"])
    assert run_checked(lenient, work, work / "pc.json")[0] == 0
