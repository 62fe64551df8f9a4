"""R2VC claim input and prediction records: claims files read (and refused), the FEVER output's
evidence ids, the verdict fields a prediction takes from the decision."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from averitec_tools.baselines.r2vc.io.claims import read_claims
from averitec_tools.errors import UserError


def test_fever_evidence_carries_the_page_title_not_the_doc_id() -> None:
    from averitec_tools.baselines.r2vc.io.claims import ClaimInput
    from averitec_tools.baselines.r2vc.io.formats import ClaimPrediction, to_ternary
    from averitec_tools.baselines.r2vc.types import Passage

    cited = (Passage("wiki-000123#4", "Savages (2012 film)", "", "x"), Passage("row-9", "Oliver Stone", "", "y"),
             Passage("Nikolaj_Coster-Waldau_7", "", "", "z"))
    pred = ClaimPrediction(claim=ClaimInput(claim_id=1, claim="c", kind="ternary"), label="True", confidence=0.9,
                           rationale="r", cited=cited, questions=("q",) * 3, abstained=False, reason="accepted",
                           s_ver=0.9, n_candidates=1, n_malformed=0)
    assert to_ternary(pred)["predicted_evidence"] == [
        ["Savages_-LRB-2012_film-RRB-", 4], ["Oliver_Stone", 0], ["Nikolaj_Coster-Waldau", 7]]


def test_read_claims_errors(tmp_path: Path) -> None:
    p = tmp_path / "c.json"
    p.write_text(json.dumps([{"claim": "ok"}, {"label": "Refuted"}]))
    with pytest.raises(UserError, match=r"c.json\[1\]: missing or empty 'claim'"):
        read_claims(str(p))
    p.write_text(json.dumps([{"claim": "ok", "label": "Maybe"}]))
    with pytest.raises(UserError, match="unknown averitec label 'Maybe'"):
        read_claims(str(p))
    p.write_text(json.dumps([{"id": 1, "claim": "a"}, {"id": 1, "claim": "b"}]))
    with pytest.raises(UserError, match="duplicate claim id 1"):
        read_claims(str(p))
    p.write_text("[]")
    with pytest.raises(UserError, match="no claims"):
        read_claims(str(p))


def test_a_prediction_takes_its_verdict_fields_from_the_decision() -> None:
    import dataclasses

    from averitec_tools.baselines.r2vc.io.formats import VERDICT_FIELDS, ClaimPrediction
    from averitec_tools.baselines.r2vc.stages.calibration.decision import Decision

    decision = {f.name for f in dataclasses.fields(Decision)}
    prediction = {f.name for f in dataclasses.fields(ClaimPrediction)}
    assert set(VERDICT_FIELDS) == (decision & prediction)  # every field both have is the decision's
