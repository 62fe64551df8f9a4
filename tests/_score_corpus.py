"""Every string the AVeriTeC scoring profiles tokenise on the shared files (test helper).

Order is deterministic (first occurrence), so recorded NLTK 3.9.1 output can be compared
as one digest.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def _qa(q: dict) -> list[str]:
    out = []
    for a in q["answers"]:
        s = q["question"] + " " + a["answer"]
        if a.get("answer_type") == "Boolean":
            s += ". " + a["boolean_explanation"]
        out.append(s)
        out.append(a["answer"])
    if not q["answers"]:
        out.append(q["question"] + " No answer could be found.")
    return out


def corpus_strings(data_dir: Path) -> list[str]:
    base = data_dir / "averitec"
    out: list[str] = []
    for claim in json.loads((base / "dev.json").read_text(encoding="utf-8")):
        for q in claim["questions"]:
            out.append(q["question"])
            out.extend(_qa(q))
        out.append(claim["justification"] or "")
        out.append(claim["claim"])
    for pred in json.loads((base / "baseline_dev_predictions.json").read_text(encoding="utf-8")):
        for e in pred["evidence"]:
            out += [e["question"], e["answer"], e["question"] + " " + e["answer"]]
    for pred in json.loads((base / "baseline_dev_predictions_2023format.json").read_text(encoding="utf-8")):
        for q in pred.get("questions", []):
            out.append(q["question"])
            out.extend(_qa(q))
        if pred.get("justification"):
            out.append(pred["justification"])
    for name in ("averitec_dev_gold.jsonl", "averitec_test_gold.jsonl", "baseline_2024_dev_as_evalai.jsonl"):
        with (base / "evalai" / name).open(encoding="utf-8") as fh:
            for line in fh:
                out.extend(json.loads(line)["evidence"])
    return list(dict.fromkeys(out))


def digest(obj: object) -> str:
    return hashlib.sha256(json.dumps(obj, ensure_ascii=False, sort_keys=True).encode("utf-8")).hexdigest()


def train_strings(data_dir: Path) -> list[str]:
    """Every text field of the AVeriTeC training claims (claims, justifications, questions,
    answers, Boolean explanations), each once, in first-occurrence order."""
    out: list[str] = []
    for claim in json.loads((data_dir / "averitec" / "train.json").read_text(encoding="utf-8")):
        out += [claim.get("claim") or "", claim.get("justification") or ""]
        for q in claim.get("questions") or []:
            out.append(q.get("question") or "")
            for a in q.get("answers") or []:
                out += [a.get("answer") or "", a.get("boolean_explanation") or ""]
    return list(dict.fromkeys(s for s in out if s))
