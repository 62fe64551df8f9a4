"""Synthetic AVerImaTeC data in the exact published layouts, with small generated images.

No AVerImaTeC data is in the shared folder; these builders write what the task page and
the organisers' repository describe: ``val.json`` (a JSON array of claims), ``images/``
(the files the claims name), and a submission in the organisers' format (base64 images).
Everything is derived from the claim index, so a fixture of N claims is the same bytes on
every machine. Used by the records, scoring and convert tests and the judge benchmark.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

LABELS = ("Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking")


def image_bytes(seed: int, *, fmt: str = "PNG", size: tuple[int, int] = (6, 4)) -> bytes:
    """A tiny image whose pixels (and so bytes) depend on ``seed``."""
    from PIL import Image

    img = Image.new("RGB", size, color=(seed * 37 % 256, seed * 91 % 256, seed * 13 % 256))
    img.putpixel((0, 0), (seed % 256, 255 - seed % 256, 7))
    buf = io.BytesIO()
    img.save(buf, format=fmt)
    return buf.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _answers(i: int, q: int) -> list[dict[str, Any]]:
    kind = (i + q) % 4
    if kind == 0:
        return [{"answer_type": "Extractive", "answer_text": f"Extract {i}.{q}\nsecond line",
                 "source_url": f"https://example.org/{i}/{q}", "source_medium": "Web text"}]
    if kind == 1:
        return [{"answer_type": "Boolean", "answer_text": "No", "boolean_explanation": f"Because {i}.{q}.",
                 "source_url": f"https://example.org/{i}/{q}", "source_medium": "Web text"}]
    if kind == 2:
        return [{"answer_type": "Image", "image_answers": [f"{i}_ans_{q}.jpg"],
                 "source_url": f"https://example.org/{i}/{q}", "source_medium": "Image/graphic"}]
    return [{"answer_type": "Abstractive", "answer_text": f"Abstract {i}.{q}", "source_medium": "Metadata"},
            {"answer_type": "Image", "image_answers": [f"{i}_ans_{q}b.png"], "source_medium": "Image/graphic"}]


def gold_claim(i: int, *, n_questions: int | None = None) -> dict[str, Any]:
    """Claim ``i`` in the published layout: 1-3 QA pairs cycling through the four answer types."""
    n_q = n_questions if n_questions is not None else 1 + i % 3
    questions = []
    for q in range(n_q):
        questions.append({
            "input_images": [f"{i}#INPUT#{q}#0.jpg"] if (i + q) % 2 else [],
            "answers": _answers(i, q),
            "question": f"Question {q} about claim {i}?",
            "answer_method": "Image-search" if q % 2 else "Text-search",
            "question_type": ["Image-related"] if (i + q) % 2 else ["Text-related"],
        })
    return {
        "article": f"https://factcheck.example/{i}",
        "date": f"2023-0{1 + i % 9}-1{i % 10}",
        "label": LABELS[i % 4],
        "location": "FI",
        "questions": questions,
        "justification": f"The evidence for claim {i} shows it. 1. first point. 2. second point.",
        "claim_text": f"Claim {i}: the photo shows something.",
        "claim_images": [f"{i}_claim.jpg"],
        "metadata": {"speaker": f"Speaker {i}", "transcription": "", "modality": "Image-text",
                     "claim_types": ["Event/Property Claim"], "fact_checking_strategies": ["Reverse Image Search"],
                     "refuting_reasons": [], "image_misuse_types": ["Out-of-context"] if i % 2 else []},
    }


def image_names(claim: dict[str, Any]) -> list[str]:
    names = list(claim.get("claim_images", []))
    for q in claim.get("questions", []):
        names += q["input_images"]
        names += [n for a in q["answers"] for n in a.get("image_answers", [])]
    return names


def write_dataset(root: Path, n: int, *, split: str = "val") -> Path:
    """``root/{split}.json`` with ``n`` claims and every image it names under ``root/images``."""
    root.mkdir(parents=True, exist_ok=True)
    images = root / "images"
    images.mkdir(exist_ok=True)
    claims = [gold_claim(i) for i in range(n)]
    for c in claims:
        for k, name in enumerate(image_names(c)):
            fmt = "JPEG" if name.endswith(".jpg") else "PNG"
            (images / name).write_bytes(image_bytes(hash_name(name) + k, fmt=fmt))
    path = root / f"{split}.json"
    path.write_text(json.dumps(claims, indent=1), encoding="utf-8")
    return path


def hash_name(name: str) -> int:
    return sum(ord(ch) * (k + 1) for k, ch in enumerate(name)) % 997


def prediction(i: int, *, label: str | None = None, n_evidence: int = 2, images: bool = True) -> dict[str, Any]:
    """A submission item for claim ``i``: questions, justification, verdict, evidence with base64 images."""
    evidence = []
    for e in range(n_evidence):
        with_image = images and (i + e) % 2 == 0
        evidence.append({"text": f"Evidence {e} of claim {i}" + (" shows [IMG_1]" if with_image else "."),
                         "images": [b64(image_bytes(100 + i * 7 + e))] if with_image else []})
    return {"id": i, "questions": [f"Predicted question {q} for {i}?" for q in range(1 + i % 2)],
            "justification": f"Predicted justification for claim {i}.",
            "verdict": label if label is not None else LABELS[i % 4],
            "evidence": evidence}


def write_submission(path: Path, n: int, **kwargs: Any) -> Path:
    path.write_text(json.dumps([prediction(i, **kwargs) for i in range(n)]), encoding="utf-8")
    return path
