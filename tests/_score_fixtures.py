"""Tiny inline AVeriTeC gold/prediction files for scorer tests (hand-checkable)."""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
# `averitec score` caches prepared gold strings; keep the tests' cache out of the user's home.
os.environ.setdefault("AVERITEC_CACHE_DIR", tempfile.mkdtemp(prefix="averitec-test-cache-"))


def nltk391_path() -> Path:
    """The real NLTK 3.9.1 the reference scorer runs under (``make`` puts it in ``.venv/nltk391``).

    ``AVERITEC_NLTK391`` overrides; otherwise ``nltk391`` beside the running virtualenv.
    Missing is a failure, never a skip: the live reference tests exist to catch tokenizer errors.
    """
    env = os.environ.get("AVERITEC_NLTK391")
    path = Path(env) if env else Path(sys.prefix) / "nltk391"
    if not (path / "nltk" / "__init__.py").exists():
        pytest.fail(f"NLTK 3.9.1 not found at {path}: run `make .venv/nltk391` (or set AVERITEC_NLTK391)")
    return path


def porter_391_class() -> Any:
    """NLTK 3.9.1's own ``PorterStemmer`` class, loaded from its file (an independent stemmer)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_nltk391_porter", nltk391_path() / "nltk" / "stem" / "porter.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.PorterStemmer


class _ReferenceProcess:
    """One ``reference_scorer.py --serve`` process for the whole test session.

    Importing NLTK 3.9.1, scikit-learn and loading WordNet costs the reference several CPU
    seconds; the tests' files are tiny, so one process scores them all, a job at a time.
    """

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None
        self.stderr: Any = None

    def run(self, argv: list[str]) -> dict[str, Any]:
        if self.proc is None or self.proc.poll() is not None:
            env = dict(os.environ)
            env["PYTHONPATH"] = os.pathsep.join([str(nltk391_path()), str(ROOT)])
            self.stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8")  # noqa: SIM115 - lives with the process
            self.proc = subprocess.Popen(
                [sys.executable, str(ROOT / "benchmarks" / "reference_scorer.py"), "--serve"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True, env=env,
            )
            atexit.register(self.close)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(argv) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            self.stderr.seek(0)
            pytest.fail(f"reference scorer exited: {self.stderr.read()[-2000:]}")
        reply = json.loads(line)
        assert reply["code"] == 0, reply
        result: dict[str, Any] = json.loads(reply["stdout"])
        return result

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            self.proc.wait(timeout=30)


_REFERENCE = _ReferenceProcess()


def reference_process() -> _ReferenceProcess:
    """The session's one ``reference_scorer.py --serve`` process (NLTK 3.9.1)."""
    return _REFERENCE


def run_reference(profile: str, predictions: Path, references: Path, *extra: str) -> dict[str, Any]:
    """Score with ``benchmarks/reference_scorer.py`` under the real NLTK 3.9.1 (a separate process)."""
    result = _REFERENCE.run(["--profile", profile, str(predictions), str(references), *extra])
    assert result["tokenizer"] == "nltk-3.9.1", result["tokenizer"]
    return result

GOLD: list[dict[str, Any]] = [
    {
        "claim": "The moon is made of cheese.",
        "label": "Refuted",
        "justification": "The moon is made of rock.",
        "claim_types": ["Event/Property Claim"],
        "questions": [
            {"question": "What is the moon made of?", "answers": [{"answer": "Rock and dust.", "answer_type": "Extractive"}]},
            {"question": "Is the moon cheese?", "answers": [{"answer": "No", "answer_type": "Boolean", "boolean_explanation": "It is rock."}]},
        ],
    },
    {
        "claim": "Cats can fly.",
        "label": "Refuted",
        "justification": "Cats have no wings.",
        "claim_types": ["Event/Property Claim", "Causal Claim"],
        "questions": [{"question": "Do cats have wings?", "answers": []}],
    },
    {
        "claim": "Water boils at 100 C at sea level.",
        "label": "Supported",
        "justification": "Physics textbooks agree.",
        "claim_types": ["Numerical Claim"],
        "questions": [
            {"question": "At what temperature does water boil?", "answers": [{"answer": "100 degrees Celsius at sea level.", "answer_type": "Abstractive"}]},
        ],
    },
]

PRED_2024: list[dict[str, Any]] = [
    {"claim_id": 0, "claim": GOLD[0]["claim"], "pred_label": "Refuted", "confidence": 0.8,
     "probabilities": {"Refuted": 0.8, "Supported": 0.2},
     "evidence": [{"question": "What is the moon made of?", "answer": "Rock.", "url": "u"},
                  {"question": "Is the moon cheese?", "answer": "No", "url": "u"}]},
    {"claim_id": 1, "claim": GOLD[1]["claim"], "pred_label": "Supported",
     "evidence": [{"question": "Do cats have wings?", "answer": "No answer could be found.", "url": "u"}]},
    {"claim_id": 2, "claim": GOLD[2]["claim"], "pred_label": "Supported",
     "evidence": [{"question": f"Question {i} about water?", "answer": "It boils at 100 degrees.", "url": "u"} for i in range(12)]},
]


def pred_2023() -> list[dict[str, Any]]:
    out = []
    for p in PRED_2024:
        item: dict[str, Any] = {
            "claim": p["claim"],
            "label": p["pred_label"],
            "questions": [{"question": e["question"], "answers": [{"answer": e["answer"], "source_url": e["url"]}]} for e in p["evidence"]],
        }
        if p["claim_id"] == 0:
            item["justification"] = "The moon is rock."
        out.append(item)
    return out


def gold_evalai() -> list[dict[str, Any]]:
    out = []
    for i, g in enumerate(GOLD):
        ev = []
        for q in g["questions"]:
            for a in q["answers"]:
                s = q["question"] + " " + a["answer"]
                if a.get("answer_type") == "Boolean":
                    s += ". " + a["boolean_explanation"]
                ev.append(s)
            if not q["answers"]:
                ev.append(q["question"] + " No answer could be found.")
        out.append({"id": i, "label": g["label"], "evidence": ev})
    return out


def pred_evalai() -> list[dict[str, Any]]:
    return [{"id": p["claim_id"], "label": p["pred_label"], "evidence": [e["question"] + " " + e["answer"] for e in p["evidence"]]} for p in PRED_2024]


def write_json(path: Path, obj: Any) -> Path:
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def write_jsonl(path: Path, items: list[Any]) -> Path:
    path.write_text("".join(json.dumps(i) + "\n" for i in items), encoding="utf-8")
    return path


def make_files(tmp: Path) -> dict[str, Path]:
    return {
        "gold": write_json(tmp / "gold.json", GOLD),
        "pred2024": write_json(tmp / "pred2024.json", PRED_2024),
        "pred2023": write_json(tmp / "pred2023.json", pred_2023()),
        "gold_evalai": write_jsonl(tmp / "gold.jsonl", gold_evalai()),
        "pred_evalai": write_jsonl(tmp / "pred.jsonl", pred_evalai()),
    }
