"""One claim of an AVerImaTeC submission as the per-claim viewer shows it, and its images.

The viewer shows the claim, the predicted verdict, questions, justification and evidence
items with their images, and -- only when the board shows gold -- the gold label, questions
and justification (gold images are never shown). An evidence image is served only as a
PNG re-encoded from the verified image (:func:`~averitec_tools.scoring.averimatec_images.png_preview`:
at most :data:`PREVIEW_SIDE` pixels a side, new bytes with no metadata), never as the bytes
the team uploaded: a file that is an image and something else at once, or carries
metadata, never reaches another browser as it was sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from averitec_tools.errors import UserError
from averitec_tools.records.averimatec import AVerImaTeCClaim, AVerImaTeCPrediction

#: Longest side of an evidence image on a page.
PREVIEW_SIDE = 512


def uploaded_items(content: bytes) -> list[Any]:
    """The items of an upload: a JSON array, or JSON lines (what the board accepts).

    Example:
        >>> uploaded_items(b'[{"id": 0}]'), uploaded_items(b'{"id": 0}\\n{"id": 1}\\n')
        ([{'id': 0}], [{'id': 0}, {'id': 1}])
    """
    text = content.decode("utf-8-sig")
    if text.lstrip().startswith("["):
        data = json.loads(text)
        return data if isinstance(data, list) else []
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def prediction_of(items: list[Any], claim_id: int) -> AVerImaTeCPrediction:
    """The submission's item for ``claim_id`` (its ``id``), read as a record."""
    for i, item in enumerate(items):
        if isinstance(item, dict) and item.get("id") == claim_id:
            return AVerImaTeCPrediction.from_dict(item, where=f"submission item {i}")
    raise UserError(f"claim {claim_id} is not in the submission's file")


def averimatec_detail(*, items: list[Any], row: Mapping[str, Any], gold: AVerImaTeCClaim, show_gold: bool) -> dict[str, Any]:
    """Everything the viewer shows for one claim (``kind`` ``averimatec``).

    Example:
        >>> g = AVerImaTeCClaim.from_dict({"claim_text": "A photo.", "label": "Refuted", "justification": "J.",
        ...     "questions": [{"question": "Q?", "answers": [{"answer_type": "Extractive", "answer_text": "A."}]}]}, where="g")
        >>> items = [{"id": 0, "questions": ["Who?"], "justification": "P.", "verdict": "Refuted",
        ...           "evidence": [{"text": "See [IMG_1].", "images": ["aGk="]}]}]
        >>> d = averimatec_detail(items=items, row={"id": 0, "values": {"verdict": 1.0}}, gold=g, show_gold=False)
        >>> d["evidence"], d["gold_label"], d["gold_questions"]
        ([{'text': 'See [IMG_1].', 'images': 1}], None, None)
    """
    claim_id = int(row["id"])
    pred = prediction_of(items, claim_id)
    out: dict[str, Any] = {
        "kind": "averimatec", "claim_id": claim_id, "claim": gold.claim_text, "pred_label": pred.verdict,
        "questions": list(pred.questions), "justification": pred.justification,
        "evidence": [{"text": e.text, "images": len(e.images)} for e in pred.evidence],
        "scores": dict(row["values"]), "gold_label": None, "gold_questions": None, "gold_justification": None,
        "withheld": None,
    }
    if not show_gold:
        out["withheld"] = "the gold label, questions and justification are shown once the phase is revealed"
        return out
    out.update(gold_label=gold.label, gold_justification=gold.justification,
               gold_questions=[{"question": q.question,
                                "answers": [a.answer_text or f"[{len(a.image_answers)} image(s)]" for a in q.answers]}
                               for q in gold.questions])
    return out


def evidence_png(*, items: list[Any], claim_id: int, item: int, k: int, limits: Any = None) -> bytes:
    """Evidence image ``k`` of item ``item`` of the claim, verified and re-encoded as a PNG.

    Example:
        >>> import base64, io
        >>> from PIL import Image
        >>> buf = io.BytesIO(); Image.new("RGB", (800, 600)).save(buf, format="JPEG")
        >>> items = [{"id": 3, "questions": [], "justification": "", "verdict": "Refuted",
        ...           "evidence": [{"text": "[IMG_1]", "images": [base64.b64encode(buf.getvalue()).decode()]}]}]
        >>> png = evidence_png(items=items, claim_id=3, item=0, k=0)
        >>> png[:4] == bytes([137, 80, 78, 71]), Image.open(io.BytesIO(png)).size
        (True, (512, 384))
    """
    from averitec_tools.scoring.averimatec_images import DEFAULT_LIMITS, decode_image, png_preview

    pred = prediction_of(items, claim_id)
    if not (0 <= item < len(pred.evidence) and 0 <= k < len(pred.evidence[item].images)):
        raise UserError(f"claim {claim_id} has no evidence image {item}/{k}")
    info = decode_image(pred.evidence[item].images[k], where=f"claim {claim_id}: evidence[{item}].images[{k}]",
                        limits=limits or DEFAULT_LIMITS)
    return png_preview(info, max_side=PREVIEW_SIDE)


__all__ = ["PREVIEW_SIDE", "averimatec_detail", "evidence_png", "prediction_of", "uploaded_items"]
