"""A tiny scoring profile for the ``averitec calibration`` / ``compare`` CLI tests.

Format: predictions ``[{id, label, confidence?, probabilities?, score?}]``, references
``[{id, label}]``. Per-claim values: ``score`` (given) and ``label_accuracy``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from averitec_tools.errors import UserError
from averitec_tools.jsonio import load_json
from averitec_tools.scoring import profiles
from averitec_tools.scoring.profiles.base import (
    ClaimScore,
    ProfileResult,
    ScoreCall,
    ScoringProfile,
)

LABELS = ("SUPPORTS", "REFUTES", "NEI")


class FakeProfile(ScoringProfile):
    name: ClassVar[str] = "fake"
    description: ClassVar[str] = "test-only profile"

    def _score(self, call: ScoreCall) -> ProfileResult:
        predictions, references = call.predictions, call.references
        gold = {r["id"]: r["label"] for r in load_json(references)}
        per_claim = []
        for item in load_json(predictions):
            if item["id"] not in gold:
                raise UserError(f"{predictions}: claim {item['id']!r} is not in {references}")
            per_claim.append(ClaimScore(
                claim_id=item["id"],
                gold_label=gold[item["id"]],
                pred_label=item.get("label"),
                values={"score": float(item.get("score", 0.0)),
                        "label_accuracy": float(item.get("label") == gold[item["id"]])},
                confidence=item.get("confidence"),
                probabilities=item.get("probabilities"),
            ))
        return ProfileResult(profile="fake", signature="profile:fake", n_claims=len(per_claim),
                             summary={}, per_claim=tuple(per_claim), labels=LABELS)


@pytest.fixture
def fake_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    real = profiles.get_profile

    def get_profile(name: str) -> ScoringProfile:
        return FakeProfile() if name == "fake" else real(name)

    monkeypatch.setattr(profiles, "get_profile", get_profile)


def write(path: Path, obj: Any) -> str:
    path.write_text(json.dumps(obj), encoding="utf-8")
    return str(path)
