"""AVerImaTeC records: the published gold layout and the organisers' submission format."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _averimatec_fixtures import gold_claim, prediction, write_dataset

from averitec_tools.errors import UserError
from averitec_tools.records import (
    AVerImaTeCAnswer,
    AVerImaTeCClaim,
    AVerImaTeCPrediction,
    AVerImaTeCQuestion,
    canonical_label,
    image_refs,
)

SUPPORTED_EXAMPLE: dict[str, Any] = {  # the shape of the task page's "Supported Example" (our own values)
    "article": "https://web.archive.org/web/2024/https://www.snopes.com/fact-check/x/",
    "date": "2023-07-08",
    "label": "Supported",
    "location": "FI",
    "questions": [
        {"input_images": ["67a90d#INPUT#0#0.jpg"],
         "answers": [{"answer_type": "Extractive", "answer_text": "About 11,500 years old",
                      "source_url": "https://example.org/rock", "source_medium": "Web text"}],
         "question": "How old is the rock?", "answer_method": "Image-search", "question_type": ["Image-related"]},
        {"input_images": [],
         "answers": [{"answer_type": "Boolean", "answer_text": "Yes", "boolean_explanation": "It balances.",
                      "source_url": "https://example.org/b", "source_medium": "Web text"},
                     {"answer_type": "Image", "image_answers": ["67a90d#ANS#1#0.jpg", "67a90d#ANS#1#1.png"],
                      "source_url": "https://example.org/i", "source_medium": "Image/graphic"}],
         "question": "Does it balance?", "answer_method": "Text-search", "question_type": ["Text-related"]},
    ],
    "justification": "The rock is real.",
    "claim_text": "This rock balances on another.",
    "claim_images": ["67a90d#CLAIM#0.jpg"],
    "metadata": {"speaker": "A user", "transcription": "", "modality": "Image-text",
                 "claim_types": ["Event/Property Claim"], "fact_checking_strategies": ["Reverse Image Search"],
                 "refuting_reasons": [], "image_misuse_types": []},
}


def test_published_example_round_trips() -> None:
    claim = AVerImaTeCClaim.from_dict(SUPPORTED_EXAMPLE, where="val.json[0]", claim_id=0)
    assert claim.to_dict() == SUPPORTED_EXAMPLE
    assert claim.parsed_date is not None and claim.parsed_date.isoformat() == "2023-07-08"
    q0, q1 = claim.questions
    assert q0.images() == ("67a90d#INPUT#0#0.jpg",)
    assert q1.images() == ("67a90d#ANS#1#0.jpg", "67a90d#ANS#1#1.png")  # question images first, then answers
    assert [a.answer_type for a in q1.answers] == ["Boolean", "Image"]
    assert q1.answers[1].is_image and q1.answers[1].answer_text is None
    assert claim.image_names()[0] == "67a90d#CLAIM#0.jpg" and len(claim.image_names()) == 4
    assert claim.metadata is not None and claim.metadata.modality == "Image-text"


def test_every_fixture_claim_round_trips(tmp_path: Path) -> None:
    path = write_dataset(tmp_path, 8)
    raw = json.loads(path.read_text(encoding="utf-8"))
    claims = [AVerImaTeCClaim.from_dict(c, where=f"val.json[{i}]", claim_id=i) for i, c in enumerate(raw)]
    assert [c.to_dict() for c in claims] == raw
    types = {a.answer_type for c in claims for q in c.questions for a in q.answers}
    assert types == {"Extractive", "Abstractive", "Boolean", "Image"}
    assert all((tmp_path / "images" / n).is_file() for c in claims for n in c.image_names())


def test_test_split_has_no_gold() -> None:
    claim = AVerImaTeCClaim.from_dict({"claim_text": "c", "claim_images": ["x.jpg"], "date": "2024-01-02",
                                       "location": "", "metadata": {}}, where="test.json[5]", claim_id=5)
    assert not claim.is_labelled and claim.questions == () and claim.justification is None
    assert claim.to_dict() == {"date": "2024-01-02", "location": "", "claim_text": "c", "claim_images": ["x.jpg"],
                               "metadata": {"claim_types": [], "fact_checking_strategies": [],
                                            "refuting_reasons": [], "image_misuse_types": []}}


@pytest.mark.parametrize(("answer", "message"), [
    ({"answer_text": "x"}, "missing key 'answer_type'"),
    ({"answer_type": "Extractive"}, "missing key 'answer_text'"),
    ({"answer_type": "Boolean", "answer_text": "No"}, "missing key 'boolean_explanation'"),
    ({"answer_type": "Image"}, "needs 'image_answers'"),
    ({"answer_type": "Image", "image_answers": "a.jpg"}, "'image_answers' must be a list of strings"),
    ({"answer_type": "Extractive", "answer_text": 3}, "'answer_text' must be a string"),
])
def test_answer_errors_name_the_place(answer: dict[str, Any], message: str) -> None:
    with pytest.raises(UserError, match=r"val\.json\[2\]\.questions\[1\]\.answers\[0\]: .*" + message.replace("'", ".")):
        AVerImaTeCQuestion.from_dict({"question": "q", "answers": [answer]}, where="val.json[2].questions[1]")


def test_claim_errors() -> None:
    with pytest.raises(UserError, match=r"val\.json\[0\]: missing key 'claim_text'"):
        AVerImaTeCClaim.from_dict({"claim_images": []}, where="val.json[0]")
    with pytest.raises(UserError, match="'questions' must be a list"):
        AVerImaTeCClaim.from_dict({"claim_text": "c", "questions": {}}, where="val.json[0]")
    with pytest.raises(UserError, match=r"val\.json\[0\]\.metadata: metadata must be an object"):
        AVerImaTeCClaim.from_dict({"claim_text": "c", "metadata": []}, where="val.json[0]")
    meta = AVerImaTeCClaim.from_dict({"claim_text": "c", "metadata": {"claim_types": "Numerical Claim", "new": 1}},
                                     where="x").metadata
    assert meta is not None and meta.claim_types == ("Numerical Claim",)  # one string read as a one-item list


def test_prediction_format() -> None:
    item = prediction(2)
    p = AVerImaTeCPrediction.from_dict(item, where="sub.json[2]")
    assert p.to_dict() == item and p.id == 2 and p.evidence[0].images
    for bad, message in [({**item, "id": True}, "'id' must be the claim's position"),
                         ({**item, "id": "2"}, "'id' must be the claim's position"),
                         ({**item, "id": -1}, "'id' must be the claim's position"),
                         ({k: v for k, v in item.items() if k != "verdict"}, r"\(claim 2\): missing key 'verdict'"),
                         ({k: v for k, v in item.items() if k != "questions"}, "missing key 'questions'"),
                         ({**item, "questions": "Why?"}, "'questions' must be a list of strings"),
                         ({**item, "evidence": [{"images": []}]}, r"evidence\[0\]: missing key 'text'"),
                         ({**item, "evidence": [{"text": "t", "images": [3]}]}, "'images' must be a list of strings")]:
        with pytest.raises(UserError, match=message):
            AVerImaTeCPrediction.from_dict(bad, where="sub.json[2]")


def test_image_refs_and_labels() -> None:
    assert image_refs("[IMG_1][IMG_2] x [IMG_10] [IMG_] [img_3]") == (1, 2, 10)
    assert canonical_label("  refuted ") == "Refuted"
    assert canonical_label("Conflicting Evidence/Cherrypicking") == "Conflicting Evidence/Cherrypicking"
    assert canonical_label(None) is None and canonical_label("Mostly false") is None
    assert AVerImaTeCAnswer.from_dict(gold_claim(2)["questions"][0]["answers"][0], where="w").is_image
